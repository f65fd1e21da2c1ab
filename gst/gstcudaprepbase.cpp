/* GstCudaPrepBase: context, stream and input handling shared by the cudaprep elements. */
#include "gstcudaprepbase.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>
#endif

#include "pixel_format.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_prep_base_debug);
#define GST_CAT_DEFAULT gst_cuda_prep_base_debug

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_BACKEND,
};

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_BACKEND GST_CUDA_PREP_BACKEND_AUTO

typedef struct
{
  /* settings, under the object lock */
  gint device_id;
  GstCudaPrepBackend backend;

  /* streaming state: built in start / set_caps, dropped in stop */
  GstCudaContext *context;
  void *stream;
  gboolean started;
  gboolean gpu;                 /* frames are processed on the GPU */
  gboolean input_cuda;          /* negotiated input is in CUDA memory */
  GstVideoInfo in_info;
  cudaprep::cuda::DeviceBuffer staging;       /* system-memory input, copied to the GPU */
  gsize staging_offset[GST_VIDEO_MAX_PLANES];
} GstCudaPrepBasePrivate;

G_DEFINE_TYPE_WITH_CODE (GstCudaPrepBase, gst_cuda_prep_base, GST_TYPE_BASE_TRANSFORM,
    G_ADD_PRIVATE (GstCudaPrepBase);
    GST_DEBUG_CATEGORY_INIT (gst_cuda_prep_base_debug, "cudaprepbase", 0, "cudaprep base class"));

#define PRIV(self) ((GstCudaPrepBasePrivate *) gst_cuda_prep_base_get_instance_private (self))

GType
gst_cuda_prep_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_PREP_BACKEND_AUTO, "CUDA when a device is usable, else the CPU", "auto"},
    {GST_CUDA_PREP_BACKEND_CUDA, "CUDA only (error without a usable device)", "cuda"},
    {GST_CUDA_PREP_BACKEND_CPU, "CPU only (system memory)", "cpu"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaPrepBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

static void
gst_cuda_prep_base_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (object));

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_BACKEND:
      priv->backend = (GstCudaPrepBackend) g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_prep_base_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (object));

  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, priv->backend);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_prep_base_set_context (GstElement * element, GstContext * context)
{
#if CUDAPREP_HAVE_CUDA
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (element));
  gint device_id;

  GST_OBJECT_LOCK (element);
  device_id = priv->device_id;
  GST_OBJECT_UNLOCK (element);
  if (gst_cuda_load_library ())
    gst_cuda_handle_set_context (element, context, device_id, &priv->context);
#endif
  GST_ELEMENT_CLASS (gst_cuda_prep_base_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_prep_base_query (GstBaseTransform * trans, GstPadDirection direction, GstQuery * query)
{
#if CUDAPREP_HAVE_CUDA
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (trans));
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT && priv->context &&
      gst_cuda_handle_context_query (GST_ELEMENT (trans), query, priv->context))
    return TRUE;
#endif
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_prep_base_parent_class)->query (trans, direction, query);
}

/* Looks for a usable device and, if there is one, shares or creates the CUDA context. */
static gboolean
gst_cuda_prep_base_start (GstBaseTransform * trans)
{
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE (trans);
  GstCudaPrepBasePrivate *priv = PRIV (self);
  GstCudaPrepBackend backend;
  gint device_id;

  GST_OBJECT_LOCK (self);
  backend = priv->backend;
  device_id = priv->device_id;
  GST_OBJECT_UNLOCK (self);

  priv->gpu = FALSE;
  priv->started = TRUE;
  if (backend == GST_CUDA_PREP_BACKEND_CPU) {
    GST_INFO_OBJECT (self, "backend=cpu: processing on the CPU");
    return TRUE;
  }
#if CUDAPREP_HAVE_CUDA
  if (cudaprep::cuda::device_count () > 0 && gst_cuda_load_library ()) {
    gst_cuda_memory_init_once ();
    if (gst_cuda_ensure_element_context (GST_ELEMENT (self), device_id, &priv->context)) {
      cudaprep::Status st;
      if (!gst_cuda_context_push (priv->context)) {
        st = cudaprep::Status::error ("could not make the CUDA context current");
      } else {
        st = cudaprep::cuda::stream_create (&priv->stream);
        gst_cuda_context_pop (NULL);
      }
      if (!st.ok ()) {
        GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("CUDA initialisation failed"),
            ("%s", st.message ().c_str ()));
        gst_clear_object (&priv->context);
        priv->started = FALSE;
        return FALSE;
      }
      priv->gpu = TRUE;
      GST_INFO_OBJECT (self, "processing on CUDA device (device-id=%d)", device_id);
      return TRUE;
    }
  }
#endif
  if (backend == GST_CUDA_PREP_BACKEND_CUDA) {
    priv->started = FALSE;
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND, ("No usable CUDA device"),
        ("backend=cuda but %s (device-id=%d)", cudaprep::cuda::built_with_cuda () ?
            "no CUDA device or driver could be opened" : "the plugin was built without CUDA",
            device_id));
    return FALSE;
  }
  GST_INFO_OBJECT (self, "no usable CUDA device: processing on the CPU");
  return TRUE;
}

static gboolean
gst_cuda_prep_base_stop (GstBaseTransform * trans)
{
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (trans));

#if CUDAPREP_HAVE_CUDA
  if (priv->context && gst_cuda_context_push (priv->context)) {
    if (priv->stream) {
      cudaprep::cuda::stream_sync (priv->stream);
      cudaprep::cuda::stream_destroy (priv->stream);
    }
    priv->staging.reset ();
    gst_cuda_context_pop (NULL);
  }
#endif
  priv->stream = NULL;
  priv->gpu = FALSE;
  priv->started = FALSE;
  priv->input_cuda = FALSE;
  gst_clear_object (&priv->context);
  return TRUE;
}

gboolean
gst_cuda_prep_caps_has_cuda_feature (GstCaps * caps, guint idx)
{
  GstCapsFeatures *f = gst_caps_get_features (caps, idx);
  return f && gst_caps_features_contains (f, "memory:CUDAMemory");
}

#if CUDAPREP_HAVE_CUDA
/* Per-caps staging for system-memory input on the GPU path: one pitched allocation with
 * every plane stacked, so the copy and the kernel see ordinary strided planes. */
static gboolean
gst_cuda_prep_base_alloc_staging (GstCudaPrepBase * self)
{
  GstCudaPrepBasePrivate *priv = PRIV (self);
  const GstVideoInfo *info = &priv->in_info;
  gsize width_bytes = 0, rows = 0;

  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    gsize w = (gsize) GST_VIDEO_INFO_COMP_WIDTH (info, p) * GST_VIDEO_INFO_COMP_PSTRIDE (info, p);
    if (GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_NV12 && p == 1)
      w = (gsize) GST_VIDEO_INFO_COMP_WIDTH (info, 1) * 2;
    width_bytes = MAX (width_bytes, w);
    rows += GST_VIDEO_INFO_COMP_HEIGHT (info, p);
  }
  cudaprep::Status st = priv->staging.allocate_pitched (width_bytes, rows);
  if (!st.ok ()) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA staging memory"),
        ("%s", st.message ().c_str ()));
    return FALSE;
  }
  gsize row = 0;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
    priv->staging_offset[p] = row * priv->staging.pitch ();
    row += GST_VIDEO_INFO_COMP_HEIGHT (info, p);
  }
  return TRUE;
}
#endif

static gboolean
gst_cuda_prep_base_set_caps (GstBaseTransform * trans, GstCaps * incaps, GstCaps * outcaps)
{
  GstCudaPrepBase *self = GST_CUDA_PREP_BASE (trans);
  GstCudaPrepBasePrivate *priv = PRIV (self);
  GstCudaPrepBaseClass *klass = GST_CUDA_PREP_BASE_GET_CLASS (self);

  if (!gst_video_info_from_caps (&priv->in_info, incaps)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Invalid input caps"),
        ("could not parse %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  cudaprep::PixelFormat fmt = cudaprep::PixelFormat::GRAY8;
  if (!gst_cuda_prep_pixel_format_from_video (GST_VIDEO_INFO_FORMAT (&priv->in_info), &fmt)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Unsupported input format %s",
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&priv->in_info))), (NULL));
    return FALSE;
  }
  priv->input_cuda = gst_cuda_prep_caps_has_cuda_feature (incaps, 0);
  if (priv->input_cuda && !priv->gpu) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Input is in CUDA memory but no CUDA device is usable"),
        ("caps %" GST_PTR_FORMAT " need a GPU; backend is cpu or no device could be opened",
            incaps));
    return FALSE;
  }

#if CUDAPREP_HAVE_CUDA
  if (priv->gpu) {
    if (!gst_cuda_context_push (priv->context))
      return FALSE;
    /* Finish work on the old caps' buffers before replacing them. */
    cudaprep::cuda::stream_sync (priv->stream);
    priv->staging.reset ();
    gboolean ok = gst_cuda_prep_base_alloc_staging (self);
    gst_cuda_context_pop (NULL);
    if (!ok)
      return FALSE;
  }
#endif

  if (klass->configure && !klass->configure (self, incaps, outcaps))
    return FALSE;
  return TRUE;
}

gboolean
gst_cuda_prep_base_view_from_frame (const GstVideoFrame * frame, cudaprep::ImageView * view)
{
  cudaprep::PixelFormat fmt = cudaprep::PixelFormat::GRAY8;
  if (!gst_cuda_prep_pixel_format_from_video (GST_VIDEO_FRAME_FORMAT (frame), &fmt))
    return FALSE;
  view->format = fmt;
  view->width = GST_VIDEO_FRAME_WIDTH (frame);
  view->height = GST_VIDEO_FRAME_HEIGHT (frame);
  for (guint p = 0; p < 3; p++) {
    if (p < GST_VIDEO_FRAME_N_PLANES (frame)) {
      view->planes[p].data = (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (frame, p);
      view->planes[p].stride = GST_VIDEO_FRAME_PLANE_STRIDE (frame, p);
    } else {
      view->planes[p] = cudaprep::Plane ();
    }
  }
  return TRUE;
}

#if CUDAPREP_HAVE_CUDA
/* CUDA memory we can read in place: ours, or another context with peer access. */
static gboolean
gst_cuda_prep_base_buffer_is_usable_cuda (GstCudaPrepBase * self, GstBuffer * buffer)
{
  GstCudaPrepBasePrivate *priv = PRIV (self);
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  if (!gst_is_cuda_memory (mem))
    return FALSE;
  GstCudaContext *ctx = GST_CUDA_MEMORY_CAST (mem)->context;
  return ctx == priv->context || gst_cuda_context_can_access_peer (priv->context, ctx);
}
#endif

gboolean
gst_cuda_prep_base_map_input (GstCudaPrepBase * self, GstBuffer * buffer, gboolean writable,
    GstVideoFrame * frame, cudaprep::ImageView * view)
{
  GstCudaPrepBasePrivate *priv = PRIV (self);
  GstMapFlags access = writable ? (GstMapFlags) (GST_MAP_READ | GST_MAP_WRITE) : GST_MAP_READ;

#if CUDAPREP_HAVE_CUDA
  if (priv->gpu && gst_buffer_n_memory (buffer) == 1 &&
      gst_cuda_prep_base_buffer_is_usable_cuda (self, buffer)) {
#if GST_CHECK_VERSION(1, 24, 0)
    /* Since 1.24 CUDA memory can carry pending work on its producer's stream. */
    gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (gst_buffer_peek_memory (buffer, 0)));
#endif
    if (!gst_video_frame_map (frame, &priv->in_info, buffer, (GstMapFlags) (access | GST_MAP_CUDA))) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the input CUDA frame"), (NULL));
      return FALSE;
    }
    return gst_cuda_prep_base_view_from_frame (frame, view);
  }
#endif
  if (!gst_video_frame_map (frame, &priv->in_info, buffer, access)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the input frame"), (NULL));
    return FALSE;
  }
  if (!gst_cuda_prep_base_view_from_frame (frame, view))
    return FALSE;
  if (!priv->gpu)
    return TRUE;

  /* System memory (or CUDA memory of a foreign context) on the GPU path: stage it. */
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame); p++) {
    gsize row_bytes = (gsize) GST_VIDEO_FRAME_COMP_WIDTH (frame, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (frame, p);
    if (GST_VIDEO_FRAME_FORMAT (frame) == GST_VIDEO_FORMAT_NV12 && p == 1)
      row_bytes = (gsize) GST_VIDEO_FRAME_COMP_WIDTH (frame, 1) * 2;
    uint8_t *dst = priv->staging.data () + priv->staging_offset[p];
    cudaprep::Status st = cudaprep::cuda::copy_2d_async (dst, priv->staging.pitch (),
        GST_VIDEO_FRAME_PLANE_DATA (frame, p), GST_VIDEO_FRAME_PLANE_STRIDE (frame, p),
        row_bytes, GST_VIDEO_FRAME_COMP_HEIGHT (frame, p),
        cudaprep::cuda::CopyKind::HostToDevice, priv->stream);
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not upload the frame to the GPU"),
          ("%s", st.message ().c_str ()));
      gst_video_frame_unmap (frame);
      return FALSE;
    }
    view->planes[p].data = dst;
    view->planes[p].stride = (int64_t) priv->staging.pitch ();
  }
  return TRUE;
}

gboolean
gst_cuda_prep_base_unmap_input (GstCudaPrepBase * self, GstVideoFrame * frame, gboolean modified)
{
  gboolean ok = TRUE;

#if CUDAPREP_HAVE_CUDA
  GstCudaPrepBasePrivate *priv = PRIV (self);
  gboolean staged = priv->gpu && !(frame->map[0].flags & GST_MAP_CUDA);
  if (staged && modified) {
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame) && ok; p++) {
      gsize row_bytes = (gsize) GST_VIDEO_FRAME_COMP_WIDTH (frame, p) * GST_VIDEO_FRAME_COMP_PSTRIDE (frame, p);
      if (GST_VIDEO_FRAME_FORMAT (frame) == GST_VIDEO_FORMAT_NV12 && p == 1)
        row_bytes = (gsize) GST_VIDEO_FRAME_COMP_WIDTH (frame, 1) * 2;
      cudaprep::Status st = cudaprep::cuda::copy_2d_async (GST_VIDEO_FRAME_PLANE_DATA (frame, p),
          GST_VIDEO_FRAME_PLANE_STRIDE (frame, p), priv->staging.data () + priv->staging_offset[p],
          priv->staging.pitch (), row_bytes, GST_VIDEO_FRAME_COMP_HEIGHT (frame, p),
          cudaprep::cuda::CopyKind::DeviceToHost, priv->stream);
      ok = st.ok ();
    }
  }
  if (priv->gpu) {
    /* The frame's memory must not be released while the GPU still reads or writes it. */
    cudaprep::Status st = cudaprep::cuda::stream_sync (priv->stream);
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("CUDA error"), ("%s", st.message ().c_str ()));
      ok = FALSE;
    }
  }
#endif
  gst_video_frame_unmap (frame);
  return ok;
}

gboolean
gst_cuda_prep_base_uses_gpu (GstCudaPrepBase * self)
{
  return PRIV (self)->gpu;
}

gboolean
gst_cuda_prep_base_gpu_possible (GstCudaPrepBase * self)
{
  GstCudaPrepBasePrivate *priv = PRIV (self);
  GstCudaPrepBackend backend;

  if (priv->started)
    return priv->gpu;
  GST_OBJECT_LOCK (self);
  backend = priv->backend;
  GST_OBJECT_UNLOCK (self);
  if (backend == GST_CUDA_PREP_BACKEND_CPU)
    return FALSE;
  static int devices = -1;      /* probing the driver is slow; the answer does not change */
  if (devices < 0)
    devices = cudaprep::cuda::device_count ();
  return devices > 0;
}

gboolean
gst_cuda_prep_base_input_is_cuda (GstCudaPrepBase * self)
{
  return PRIV (self)->input_cuda;
}

const GstVideoInfo *
gst_cuda_prep_base_input_info (GstCudaPrepBase * self)
{
  return &PRIV (self)->in_info;
}

void *
gst_cuda_prep_base_stream (GstCudaPrepBase * self)
{
  return PRIV (self)->stream;
}

GstCudaContext *
gst_cuda_prep_base_context (GstCudaPrepBase * self)
{
  return PRIV (self)->context;
}

gboolean
gst_cuda_prep_base_push_context (GstCudaPrepBase * self)
{
#if CUDAPREP_HAVE_CUDA
  GstCudaPrepBasePrivate *priv = PRIV (self);
  if (!priv->gpu)
    return TRUE;
  if (!gst_cuda_context_push (priv->context)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not make the CUDA context current"), (NULL));
    return FALSE;
  }
#endif
  return TRUE;
}

void
gst_cuda_prep_base_pop_context (GstCudaPrepBase * self)
{
#if CUDAPREP_HAVE_CUDA
  if (PRIV (self)->gpu)
    gst_cuda_context_pop (NULL);
#endif
}

static void
gst_cuda_prep_base_finalize (GObject * object)
{
  GstCudaPrepBasePrivate *priv = PRIV (GST_CUDA_PREP_BASE (object));
  priv->staging.~DeviceBuffer ();
  G_OBJECT_CLASS (gst_cuda_prep_base_parent_class)->finalize (object);
}

static void
gst_cuda_prep_base_class_init (GstCudaPrepBaseClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_cuda_prep_base_set_property;
  gobject_class->get_property = gst_cuda_prep_base_get_property;
  gobject_class->finalize = gst_cuda_prep_base_finalize;

  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("device-id", "Device ID",
          "CUDA device to use; -1 shares the context of neighbouring CUDA elements or takes device 0",
          -1, G_MAXINT, DEFAULT_DEVICE_ID,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto uses CUDA when a device is usable, else the CPU",
          GST_TYPE_CUDA_PREP_BACKEND, DEFAULT_BACKEND,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_set_context);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_prep_base_query);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_PREP_BASE, (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_PREP_BACKEND, (GstPluginAPIFlags) 0);
}

static void
gst_cuda_prep_base_init (GstCudaPrepBase * self)
{
  GstCudaPrepBasePrivate *priv = PRIV (self);
  new (&priv->staging) cudaprep::cuda::DeviceBuffer ();
  priv->device_id = DEFAULT_DEVICE_ID;
  priv->backend = DEFAULT_BACKEND;
}
