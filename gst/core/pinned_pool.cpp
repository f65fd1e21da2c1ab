/* GstCudaPrepPinnedPool: system-memory buffers in page-locked host memory. Its memory has an
 * allocator of its own, so that a write map by anyone is seen (the padding key). */
#include "pinned_pool.h"

#include <atomic>

guint64 gst_cuda_prep_padding_key(guint32 output_id, int active_y0, int active_y1) {
  /* Rows are at most kMaxTensorSide (16384): 16 bits each. */
  return ((guint64)output_id << 32) | ((guint64)(active_y0 & 0xffff) << 16) | (guint64)(active_y1 & 0xffff);
}

guint32 gst_cuda_prep_new_padding_output_id(void) {
  static std::atomic<guint32> last{0};
  guint32 id;
  while ((id = ++last) == 0) {
  }
  return id;
}

#if CUDAPREP_HAVE_CUDA

#include "cuda_device.h"

#define PINNED_MEMORY_TYPE "CudaPrepPinnedMemory"

/* One pinned allocation, the context it belongs to (freed with that context current), and
 * what the writers know it holds. */
struct PinnedBlock {
  GstCudaContext *context;
  cudaprep::cuda::PinnedBuffer memory;
  std::atomic<guint64> padding_key{0};
};

/* A GstMemory of a block: the block's own (parent NULL) or a share of it, which points to its
 * root's block. */
struct PinnedMemory {
  GstMemory mem;
  PinnedBlock *block;
};

static void pinned_block_free(PinnedBlock *block) {
  const gboolean pushed = gst_cuda_context_push(block->context);
  block->memory.reset();
  if (pushed) gst_cuda_context_pop(NULL);
  gst_object_unref(block->context);
  delete block;
}

/* ---- the allocator: one per pool, for its context -------------------------------------- */

typedef struct {
  GstAllocator parent;
  GstCudaContext *context;
} GstCudaPrepPinnedAllocator;

typedef struct {
  GstAllocatorClass parent_class;
} GstCudaPrepPinnedAllocatorClass;

G_DEFINE_TYPE(GstCudaPrepPinnedAllocator, gst_cuda_prep_pinned_allocator, GST_TYPE_ALLOCATOR);

static GstMemory *pinned_allocator_alloc(GstAllocator *allocator, gsize size, GstAllocationParams *params) {
  GstCudaPrepPinnedAllocator *self = (GstCudaPrepPinnedAllocator *)allocator;
  PinnedBlock *block = new PinnedBlock;
  block->context = (GstCudaContext *)gst_object_ref(self->context);
  cudaprep::Status st = cudaprep::Status::error("could not make the CUDA context current");
  if (gst_cuda_context_push(self->context)) {
    st = block->memory.allocate(size);
    gst_cuda_context_pop(NULL);
  }
  if (!st.ok()) {
    GST_ERROR_OBJECT(allocator, "pinned host allocation of %" G_GSIZE_FORMAT " bytes failed: %s", size,
                     st.message().c_str());
    pinned_block_free(block);
    return NULL;
  }
  PinnedMemory *mem = g_new0(PinnedMemory, 1);
  gst_memory_init(GST_MEMORY_CAST(mem), (GstMemoryFlags)0, allocator, NULL, size, 0, 0, size);
  mem->block = block;
  return GST_MEMORY_CAST(mem);
}

static void pinned_allocator_free(GstAllocator *, GstMemory *memory) {
  PinnedMemory *mem = (PinnedMemory *)memory;
  if (!memory->parent) pinned_block_free(mem->block);
  g_free(mem);
}

static gpointer pinned_memory_map(GstMemory *memory, gsize, GstMapFlags flags) {
  PinnedBlock *block = ((PinnedMemory *)memory)->block;
  if (flags & GST_MAP_WRITE) block->padding_key.store(0); /* written by someone: what it held is not known now */
  return block->memory.data();
}

static void pinned_memory_unmap(GstMemory *) {}

static GstMemory *pinned_memory_share(GstMemory *memory, gssize offset, gssize size) {
  GstMemory *root = memory->parent ? memory->parent : memory;
  if (size == -1) size = memory->size - offset;
  PinnedMemory *share = g_new0(PinnedMemory, 1);
  gst_memory_init(GST_MEMORY_CAST(share),
                  (GstMemoryFlags)(GST_MINI_OBJECT_FLAGS(root) | GST_MINI_OBJECT_FLAG_LOCK_READONLY), memory->allocator,
                  root, memory->maxsize, memory->align, memory->offset + offset, size);
  share->block = ((PinnedMemory *)memory)->block;
  return GST_MEMORY_CAST(share);
}

static void pinned_allocator_finalize(GObject *object) {
  gst_clear_object(&((GstCudaPrepPinnedAllocator *)object)->context);
  G_OBJECT_CLASS(gst_cuda_prep_pinned_allocator_parent_class)->finalize(object);
}

static void gst_cuda_prep_pinned_allocator_class_init(GstCudaPrepPinnedAllocatorClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = pinned_allocator_finalize;
  GST_ALLOCATOR_CLASS(klass)->alloc = pinned_allocator_alloc;
  GST_ALLOCATOR_CLASS(klass)->free = pinned_allocator_free;
}

static void gst_cuda_prep_pinned_allocator_init(GstCudaPrepPinnedAllocator *self) {
  GstAllocator *allocator = GST_ALLOCATOR_CAST(self);
  allocator->mem_type = PINNED_MEMORY_TYPE;
  allocator->mem_map = pinned_memory_map;
  allocator->mem_unmap = pinned_memory_unmap;
  allocator->mem_share = pinned_memory_share;
  /* mem_copy and mem_is_span: GstAllocator's fallbacks (a copy is plain system memory) */
  GST_OBJECT_FLAG_SET(self, GST_ALLOCATOR_FLAG_CUSTOM_ALLOC);
}

/* ---- the pool ----------------------------------------------------------------------------- */

typedef struct {
  GstBufferPool parent;
  GstAllocator *allocator;
  guint size;
} GstCudaPrepPinnedPool;

typedef struct {
  GstBufferPoolClass parent_class;
} GstCudaPrepPinnedPoolClass;

G_DEFINE_TYPE(GstCudaPrepPinnedPool, gst_cuda_prep_pinned_pool, GST_TYPE_BUFFER_POOL);

static gboolean pinned_pool_set_config(GstBufferPool *pool, GstStructure *config) {
  GstCudaPrepPinnedPool *self = (GstCudaPrepPinnedPool *)pool;
  if (!gst_buffer_pool_config_get_params(config, NULL, &self->size, NULL, NULL) || self->size == 0) return FALSE;
  return GST_BUFFER_POOL_CLASS(gst_cuda_prep_pinned_pool_parent_class)->set_config(pool, config);
}

static GstFlowReturn pinned_pool_alloc_buffer(GstBufferPool *pool, GstBuffer **buffer,
                                              GstBufferPoolAcquireParams *params) {
  GstCudaPrepPinnedPool *self = (GstCudaPrepPinnedPool *)pool;
  GstMemory *mem = gst_allocator_alloc(self->allocator, self->size, NULL);
  if (!mem) return GST_FLOW_ERROR; /* the allocator logged why */
  *buffer = gst_buffer_new();
  gst_buffer_append_memory(*buffer, mem);
  return GST_FLOW_OK;
}

PinnedBlock *gst_cuda_prep_pinned_block_of(GstBuffer *buffer, CudaPrepDevice &device) {
  if (!device.gpu() || gst_buffer_n_memory(buffer) != 1) return NULL;
  GstMemory *mem = gst_buffer_peek_memory(buffer, 0);
  if (!gst_memory_is_type(mem, PINNED_MEMORY_TYPE) || mem->parent || mem->offset != 0) return NULL;
  PinnedBlock *block = ((PinnedMemory *)mem)->block;
  return block->context == device.context() ? block : NULL;
}

void *gst_cuda_prep_pinned_block_device_data(PinnedBlock *block) { return block->memory.device_data(); }

guint64 gst_cuda_prep_pinned_block_take_padding_key(PinnedBlock *block) { return block->padding_key.exchange(0); }

void gst_cuda_prep_pinned_block_set_padding_key(PinnedBlock *block, guint64 key) { block->padding_key.store(key); }

static void pinned_pool_finalize(GObject *object) {
  gst_clear_object(&((GstCudaPrepPinnedPool *)object)->allocator);
  G_OBJECT_CLASS(gst_cuda_prep_pinned_pool_parent_class)->finalize(object);
}

static void gst_cuda_prep_pinned_pool_class_init(GstCudaPrepPinnedPoolClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = pinned_pool_finalize;
  GST_BUFFER_POOL_CLASS(klass)->set_config = pinned_pool_set_config;
  GST_BUFFER_POOL_CLASS(klass)->alloc_buffer = pinned_pool_alloc_buffer;
}

static void gst_cuda_prep_pinned_pool_init(GstCudaPrepPinnedPool *self) {}

GstBufferPool *gst_cuda_prep_pinned_pool_new(CudaPrepDevice &device) {
  if (!device.gpu() || !device.context()) return NULL;
  GstCudaPrepPinnedAllocator *allocator =
      (GstCudaPrepPinnedAllocator *)g_object_new(gst_cuda_prep_pinned_allocator_get_type(), NULL);
  gst_object_ref_sink(allocator);
  allocator->context = (GstCudaContext *)gst_object_ref(device.context());
  GstCudaPrepPinnedPool *self = (GstCudaPrepPinnedPool *)g_object_new(gst_cuda_prep_pinned_pool_get_type(), NULL);
  gst_object_ref_sink(self);
  self->allocator = GST_ALLOCATOR_CAST(allocator);
  return GST_BUFFER_POOL(self);
}

#else

GstBufferPool *gst_cuda_prep_pinned_pool_new(CudaPrepDevice &) { return NULL; }

/* Without CUDA there is no block, so the block calls below are never reached. */
PinnedBlock *gst_cuda_prep_pinned_block_of(GstBuffer *, CudaPrepDevice &) { return NULL; }

void *gst_cuda_prep_pinned_block_device_data(PinnedBlock *) { return NULL; }

guint64 gst_cuda_prep_pinned_block_take_padding_key(PinnedBlock *) { return 0; }

void gst_cuda_prep_pinned_block_set_padding_key(PinnedBlock *, guint64) {}

#endif
