/* GstCudaPrepPinnedPool: system-memory buffers in page-locked host memory. */
#include "pinned_pool.h"

#if CUDAPREP_HAVE_CUDA

#include "cuda_device.h"

/* One pinned allocation and the context it belongs to: freed with that context current. */
struct PinnedBlock
{
  GstCudaContext *context;
  cudaprep::cuda::PinnedBuffer memory;
};

/* The block behind a memory of this pool, as qdata on the memory. */
static GQuark
pinned_block_quark (void)
{
  static GQuark quark = 0;
  if (G_UNLIKELY (!quark))
    quark = g_quark_from_static_string ("GstCudaPrepPinnedBlock");
  return quark;
}

static void
pinned_block_free (gpointer data)
{
  PinnedBlock *block = static_cast < PinnedBlock * >(data);
  const gboolean pushed = gst_cuda_context_push (block->context);
  block->memory.reset ();
  if (pushed)
    gst_cuda_context_pop (NULL);
  gst_object_unref (block->context);
  delete block;
}

typedef struct
{
  GstBufferPool parent;
  GstCudaContext *context;
  guint size;
} GstCudaPrepPinnedPool;

typedef struct
{
  GstBufferPoolClass parent_class;
} GstCudaPrepPinnedPoolClass;

G_DEFINE_TYPE (GstCudaPrepPinnedPool, gst_cuda_prep_pinned_pool, GST_TYPE_BUFFER_POOL);

static gboolean
pinned_pool_set_config (GstBufferPool * pool, GstStructure * config)
{
  GstCudaPrepPinnedPool *self = (GstCudaPrepPinnedPool *) pool;
  if (!gst_buffer_pool_config_get_params (config, NULL, &self->size, NULL, NULL) || self->size == 0)
    return FALSE;
  return GST_BUFFER_POOL_CLASS (gst_cuda_prep_pinned_pool_parent_class)->set_config (pool, config);
}

static GstFlowReturn
pinned_pool_alloc_buffer (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  GstCudaPrepPinnedPool *self = (GstCudaPrepPinnedPool *) pool;
  PinnedBlock *block = new PinnedBlock { (GstCudaContext *) gst_object_ref (self->context), {} };
  cudaprep::Status st = cudaprep::Status::error ("could not make the CUDA context current");
  if (gst_cuda_context_push (self->context)) {
    st = block->memory.allocate (self->size);
    gst_cuda_context_pop (NULL);
  }
  if (!st.ok ()) {
    GST_ERROR_OBJECT (pool, "pinned host allocation of %u bytes failed: %s", self->size,
        st.message ().c_str ());
    pinned_block_free (block);
    return GST_FLOW_ERROR;
  }
  GstMemory *mem = gst_memory_new_wrapped ((GstMemoryFlags) 0, block->memory.data (), self->size,
      0, self->size, block, pinned_block_free);
  gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (mem), pinned_block_quark (), block, NULL);
  *buffer = gst_buffer_new ();
  gst_buffer_append_memory (*buffer, mem);
  return GST_FLOW_OK;
}

void *
gst_cuda_prep_pinned_device_pointer (GstBuffer * buffer, CudaPrepDevice & device)
{
  if (!device.gpu () || gst_buffer_n_memory (buffer) != 1)
    return NULL;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  const PinnedBlock *block = static_cast < const PinnedBlock * >(
      gst_mini_object_get_qdata (GST_MINI_OBJECT_CAST (mem), pinned_block_quark ()));
  if (!block || block->context != device.context () || mem->offset != 0)
    return NULL;
  return block->memory.device_data ();
}

static void
pinned_pool_finalize (GObject * object)
{
  gst_clear_object (&((GstCudaPrepPinnedPool *) object)->context);
  G_OBJECT_CLASS (gst_cuda_prep_pinned_pool_parent_class)->finalize (object);
}

static void
gst_cuda_prep_pinned_pool_class_init (GstCudaPrepPinnedPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = pinned_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->set_config = pinned_pool_set_config;
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer = pinned_pool_alloc_buffer;
}

static void
gst_cuda_prep_pinned_pool_init (GstCudaPrepPinnedPool * self)
{
}

GstBufferPool *
gst_cuda_prep_pinned_pool_new (CudaPrepDevice & device)
{
  if (!device.gpu () || !device.context ())
    return NULL;
  GstCudaPrepPinnedPool *self =
      (GstCudaPrepPinnedPool *) g_object_new (gst_cuda_prep_pinned_pool_get_type (), NULL);
  gst_object_ref_sink (self);
  self->context = (GstCudaContext *) gst_object_ref (device.context ());
  return GST_BUFFER_POOL (self);
}

#else

GstBufferPool *
gst_cuda_prep_pinned_pool_new (CudaPrepDevice &)
{
  return NULL;
}

void *
gst_cuda_prep_pinned_device_pointer (GstBuffer *, CudaPrepDevice &)
{
  return NULL;
}

#endif
