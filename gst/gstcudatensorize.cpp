/**
 * SECTION:element-cudatensorize
 * @title: cudatensorize
 *
 * Turns video frames into a detector's input tensor in one fused CUDA kernel per frame:
 * resize (bilinear or nearest) with letterbox, stretch or crop as one affine warp, colour
 * conversion (NV12/I420 with the caps' colorimetry), normalisation
 * `out = (pixel * scale - mean) / std`, and HWC -> CHW, to planar float32 or float16.
 * Frames in CUDA memory are read in place (zero copy from nvh264dec or cudaupload);
 * system-memory frames are uploaded. Without a usable GPU the CPU path computes the same
 * function. Every output buffer carries a "GstCudaPrepTransformMeta" custom meta with the
 * source->tensor affine, its inverse and the unpadded rectangle (see gstcudaprepmeta.h).
 * The tensor's width, height, layout and dtype, where the properties were never set, follow
 * downstream's caps (tensor_shape_negotiation.h). With output=video-meta (GStreamer >= 1.26
 * builds) the frame passes through and the tensor rides on it as a GstTensorMeta
 * (tensor_meta_output.h).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! video/x-raw,format=NV12,width=1920,height=1080 ! \
 *     cudaupload ! cudatensorize width=640 height=640 resize-mode=letterbox ! fakesink
 * ]|
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! qtdemux ! h264parse ! nvh264dec ! \
 *     cudatensorize resize-mode=ultralytics dtype=float16 ! fakesink
 * ]|
 */
#include "gstcudatensorize.h"

#include <memory>
#include <string>
#include <vector>

#include "transform_meta.h"
#include "pixel_format.h"
#include "property_arrays.h"
#include "tensor_caps.h"
#include "tensor_meta_output.h"
#include "tensor_pool.h"
#include "tensor_shape_negotiation.h"
#include "tensorize.h"
#include "tensorizer.h"

#if CUDAPREP_HAVE_CUDA
#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#endif

GST_DEBUG_CATEGORY_STATIC (gst_cuda_tensorize_debug);
#define GST_CAT_DEFAULT gst_cuda_tensorize_debug

using namespace cudaprep;

enum
{
  PROP_0,
  PROP_WIDTH,
  PROP_HEIGHT,
  PROP_RESIZE_MODE,
  PROP_ALIGN,
  PROP_PAD_VALUE,
  PROP_INTERPOLATION,
  PROP_CHANNEL_ORDER,
  PROP_SCALE,
  PROP_MEAN,
  PROP_STD,
  PROP_LAYOUT,
  PROP_DTYPE,
  PROP_ROI,
  PROP_YUV_MATRIX,
  PROP_YUV_RANGE,
  PROP_OUTPUT,
};

typedef enum { YUV_MATRIX_AUTO = -1 } YuvMatrixAuto;
typedef enum { YUV_RANGE_AUTO, YUV_RANGE_LIMITED, YUV_RANGE_FULL } YuvRangeSetting;
/* Where the tensor goes: its own buffer (other/tensors), or onto the frame (tensor_meta_output.h). */
typedef enum { OUTPUT_TENSOR, OUTPUT_VIDEO_META } OutputMode;

/* Properties, behind the object lock. The streaming thread keeps the copy its state was built
 * from and compares it with these before every frame, so no change can be missed. */
struct TensorizeSettings
{
  int width = 640, height = 640;
  ResizeMode mode = ResizeMode::Letterbox;
  Align align = Align::Center;
  int pad_value = 114;
  Interpolation interpolation = Interpolation::Bilinear;
  ChannelOrder channel_order = ChannelOrder::RGB;
  double scale = 1.0 / 255.0;
  std::vector<double> mean {0.0, 0.0, 0.0};
  std::vector<double> std {1.0, 1.0, 1.0};
  Layout layout = Layout::NCHW;
  DType dtype = DType::Float32;
  std::vector<int> roi;         /* empty: whole frame */
  int yuv_matrix = YUV_MATRIX_AUTO;
  int yuv_range = YUV_RANGE_AUTO;
  OutputMode output = OUTPUT_TENSOR;
  /* Shape properties never set are taken from downstream's caps (tensor_shape_negotiation.h). */
  bool width_set = false, height_set = false, layout_set = false, dtype_set = false;

  TensorShapeSettings shape_settings () const
  {
    TensorShapeSettings t;
    t.value = TensorShape {width, height, layout, dtype};
    t.width_set = width_set;
    t.height_set = height_set;
    t.layout_set = layout_set;
    t.dtype_set = dtype_set;
    return t;
  }
  /* What the output caps say: a change renegotiates. */
  bool same_shape (const TensorizeSettings & o) const
  {
    return width == o.width && height == o.height && layout == o.layout && dtype == o.dtype &&
        width_set == o.width_set && height_set == o.height_set && layout_set == o.layout_set &&
        dtype_set == o.dtype_set && output == o.output;
  }
  bool operator== (const TensorizeSettings & o) const
  {
    return same_shape (o) && mode == o.mode && align == o.align && pad_value == o.pad_value &&
        interpolation == o.interpolation && channel_order == o.channel_order &&
        scale == o.scale && mean == o.mean && std == o.std && roi == o.roi &&
        yuv_matrix == o.yuv_matrix && yuv_range == o.yuv_range;
  }
};

/* Streaming state: built in start / set_caps from a settings snapshot, dropped in stop. */
struct TensorizeState
{
  TensorizeSettings built_from; /* the snapshot the plan was made from */
  TensorizePlan plan {};
  TensorShape shape;            /* negotiated: the plan is built with it */
  gboolean have_plan = FALSE;
  gboolean output_cuda = FALSE;
  std::unique_ptr<Tensorizer> tensorizer;
  cuda::DeviceBuffer scratch;   /* GPU path with system-memory output */
  std::string posted_error;     /* the last settings error posted, so it is posted once */
  TensorMetaOutput meta_output; /* output=video-meta: the tensors' pool */
};

/* The element's C++ state (one object, created in init, deleted in finalize). */
struct GstCudaTensorizeImpl
{
  TensorizeSettings settings;
  TensorizeState state;
};

struct _GstCudaTensorize
{
  GstCudaPrepBase parent;
  GstCudaTensorizeImpl *impl;
};

#define gst_cuda_tensorize_parent_class parent_class
G_DEFINE_TYPE (GstCudaTensorize, gst_cuda_tensorize, GST_TYPE_CUDA_PREP_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudatensorize, "cudatensorize", GST_RANK_NONE, GST_TYPE_CUDA_TENSORIZE);


static GstStaticCaps tensor_src_caps = GST_STATIC_CAPS (
    "other/tensors(memory:CUDAMemory), format = (string) static, "
    "num_tensors = (int) 1, types = (string) { float32, float16 }, "
    "framerate = (fraction) [ 0/1, MAX ]; "
    GST_CUDA_PREP_TENSOR_CAPS_STR);

/* ---- enums ---------------------------------------------------------------------------- */

#define DEFINE_ENUM_TYPE(func, name, ...)                                   \
  static GType func (void)                                                  \
  {                                                                         \
    static GType type = 0;                                                  \
    static const GEnumValue values[] = { __VA_ARGS__, {0, NULL, NULL} };    \
    if (g_once_init_enter (&type)) {                                        \
      GType t = g_enum_register_static (name, values);                      \
      g_once_init_leave (&type, t);                                         \
    }                                                                       \
    return type;                                                            \
  }

DEFINE_ENUM_TYPE (resize_mode_get_type, "GstCudaTensorizeResizeMode",
    {(gint) ResizeMode::Letterbox, "Keep aspect ratio, pad to the tensor size", "letterbox"},
    {(gint) ResizeMode::Stretch, "Scale each axis to the tensor size", "stretch"},
    {(gint) ResizeMode::Crop, "Keep aspect ratio, cover the tensor, crop the overflow", "crop"},
    {(gint) ResizeMode::Ultralytics,
        "Ultralytics LetterBox: resize to the rounded unpadded size, pad round(d-0.1)/round(d+0.1)",
        "ultralytics"})
DEFINE_ENUM_TYPE (align_get_type, "GstCudaTensorizeAlign",
    {(gint) Align::Center, "Centre the image in the tensor", "center"},
    {(gint) Align::TopLeft, "Place the image at the top-left corner", "top-left"})
DEFINE_ENUM_TYPE (interpolation_get_type, "GstCudaTensorizeInterpolation",
    {(gint) Interpolation::Bilinear, "Bilinear (cv::resize INTER_LINEAR pixel-centre convention)", "bilinear"},
    {(gint) Interpolation::Nearest, "Nearest pixel centre (cv::INTER_NEAREST_EXACT)", "nearest"})
DEFINE_ENUM_TYPE (channel_order_get_type, "GstCudaTensorizeChannelOrder",
    {(gint) ChannelOrder::RGB, "R, G, B", "rgb"},
    {(gint) ChannelOrder::BGR, "B, G, R", "bgr"})
DEFINE_ENUM_TYPE (layout_get_type, "GstCudaTensorizeLayout",
    {(gint) Layout::NCHW, "Planar: all of channel 0, then 1, then 2 (dimensions W:H:3:1)", "nchw"},
    {(gint) Layout::NHWC, "Interleaved channels (dimensions 3:W:H:1)", "nhwc"})
DEFINE_ENUM_TYPE (dtype_get_type, "GstCudaTensorizeDType",
    {(gint) DType::Float32, "32-bit float", "float32"},
    {(gint) DType::Float16, "16-bit float (IEEE half, round to nearest even)", "float16"})
DEFINE_ENUM_TYPE (yuv_matrix_get_type, "GstCudaTensorizeYuvMatrix",
    {YUV_MATRIX_AUTO, "From the caps colorimetry", "auto"},
    {(gint) YuvMatrix::BT601, "ITU-R BT.601", "bt601"},
    {(gint) YuvMatrix::BT709, "ITU-R BT.709", "bt709"},
    {(gint) YuvMatrix::BT2020, "ITU-R BT.2020", "bt2020"})
DEFINE_ENUM_TYPE (yuv_range_get_type, "GstCudaTensorizeYuvRange",
    {YUV_RANGE_AUTO, "From the caps colorimetry", "auto"},
    {YUV_RANGE_LIMITED, "Limited (16-235 luma, 16-240 chroma)", "limited"},
    {YUV_RANGE_FULL, "Full (0-255)", "full"})
DEFINE_ENUM_TYPE (output_mode_get_type, "GstCudaTensorizeOutput",
    {OUTPUT_TENSOR, "The tensor as its own buffer (other/tensors caps)", "tensor"},
    {OUTPUT_VIDEO_META, "The frame passes through with the tensor on it as a GstTensorMeta "
        "(GStreamer >= 1.26)", "video-meta"})

/* ---- settings -> plan ----------------------------------------------------------------- */

static gboolean
read_three (const std::vector<double> &in, const char *name, double out[3], std::string * err)
{
  if (in.size () == 1) {
    out[0] = out[1] = out[2] = in[0];
    return TRUE;
  }
  if (in.size () != 3) {
    *err = std::string (name) + " needs 1 or 3 values (one per output channel), got " +
        std::to_string (in.size ());
    return FALSE;
  }
  for (int i = 0; i < 3; i++)
    out[i] = in[i];
  return TRUE;
}

static std::string
rect_text (const Rect & r)
{
  return "<" + std::to_string (r.x) + "," + std::to_string (r.y) + "," + std::to_string (r.w) +
      "," + std::to_string (r.h) + ">";
}

/* The roi property as the rectangle of a frame_w x frame_h frame it selects: clipped to the
 * frame (documented); an empty result is an error. */
static Status
resolve_roi (const std::vector<int> &roi, int frame_w, int frame_h, const char *frame_desc,
    Rect * out)
{
  if (roi.empty ()) {
    *out = Rect {0, 0, frame_w, frame_h};
    return Status ();
  }
  if (roi.size () != 4)
    return Status::error ("roi needs 4 values <x, y, width, height>, got " +
        std::to_string (roi.size ()));
  const Rect r {roi[0], roi[1], roi[2], roi[3]};
  if (r.empty ())
    return Status::error ("roi width and height must be positive, got " + std::to_string (r.w) +
        "x" + std::to_string (r.h));
  const int64_t x0 = MAX ((int64_t) r.x, 0), y0 = MAX ((int64_t) r.y, 0);
  const int64_t x1 = MIN ((int64_t) r.x + r.w, (int64_t) frame_w);
  const int64_t y1 = MIN ((int64_t) r.y + r.h, (int64_t) frame_h);
  if (x1 <= x0 || y1 <= y0)
    return Status::error ("roi " + rect_text (r) + " is entirely outside the frame" + frame_desc);
  *out = Rect {(int) x0, (int) y0, (int) (x1 - x0), (int) (y1 - y0)};
  return Status ();
}

/* The kernel plan for a settings snapshot and an input; every invalid setting gets its own
 * message. Without @info (at start, before caps) the checks that need no caps are made, with
 * the largest frame the element takes. */
static Status
build_plan (const TensorizeSettings & s, const GstVideoInfo * info, TensorizePlan * plan)
{
  TensorizeConfig cfg;
  std::string err;
  if (!read_three (s.mean, "mean", cfg.mean, &err) || !read_three (s.std, "std", cfg.std, &err))
    return Status::error (err);
  cfg.dst_width = s.width;
  cfg.dst_height = s.height;
  cfg.mode = s.mode;
  cfg.align = s.align;
  cfg.pad_value = s.pad_value;
  cfg.interpolation = s.interpolation;
  cfg.channel_order = s.channel_order;
  cfg.scale = s.scale;
  cfg.layout = s.layout;
  cfg.dtype = s.dtype;
  cfg.format = PixelFormat::BGR;
  cfg.src_width = cfg.src_height = kMaxSourceSide;
  std::string frame_desc;
  if (info) {
    gst_cuda_prep_pixel_format_from_video (GST_VIDEO_INFO_FORMAT (info), &cfg.format);
    cfg.src_width = GST_VIDEO_INFO_WIDTH (info);
    cfg.src_height = GST_VIDEO_INFO_HEIGHT (info);
    frame_desc = " (" + std::to_string (cfg.src_width) + "x" + std::to_string (cfg.src_height) + ")";
  }
  CUDAPREP_RETURN_IF_ERROR (resolve_roi (s.roi, cfg.src_width, cfg.src_height,
          frame_desc.c_str (), &cfg.roi));

  if (s.yuv_matrix != YUV_MATRIX_AUTO) {
    cfg.yuv_matrix = (YuvMatrix) s.yuv_matrix;
  } else if (info) {
    switch (info->colorimetry.matrix) {
      case GST_VIDEO_COLOR_MATRIX_BT709: cfg.yuv_matrix = YuvMatrix::BT709; break;
      case GST_VIDEO_COLOR_MATRIX_BT2020: cfg.yuv_matrix = YuvMatrix::BT2020; break;
      default:
        /* BT.601; FCC, SMPTE 240M and unknown too: the closest of those we implement. */
        cfg.yuv_matrix = YuvMatrix::BT601;
        break;
    }
  }
  if (s.yuv_range != YUV_RANGE_AUTO)
    cfg.yuv_full_range = s.yuv_range == YUV_RANGE_FULL;
  else if (info)
    cfg.yuv_full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;

  return make_tensorize_plan (cfg, plan);
}

/* The settings with the negotiated tensor shape in place of the properties' values. */
static TensorizeSettings
with_shape (TensorizeSettings s, const TensorShape & shape)
{
  s.width = shape.width;
  s.height = shape.height;
  s.layout = shape.layout;
  s.dtype = shape.dtype;
  return s;
}

/* Posts a settings error once: the same error is not posted again while streaming. */
static void
post_settings_error (GstCudaTensorize * self, const Status & st, const char *context)
{
  std::string &posted = self->impl->state.posted_error;
  if (posted == st.message ())
    return;
  posted = st.message ();
  GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("Invalid cudatensorize settings: %s",
          st.message ().c_str ()), ("%s", context));
}

static TensorizeSettings
settings_snapshot (GstCudaTensorize * self)
{
  GST_OBJECT_LOCK (self);
  TensorizeSettings s = self->impl->settings;
  GST_OBJECT_UNLOCK (self);
  return s;
}

/* ---- caps ----------------------------------------------------------------------------- */

static OutputMode
output_mode (GstCudaTensorize * self)
{
  GST_OBJECT_LOCK (self);
  const OutputMode mode = self->impl->settings.output;
  GST_OBJECT_UNLOCK (self);
  return mode;
}

static TensorShapeSettings
shape_settings (GstCudaTensorize * self)
{
  GST_OBJECT_LOCK (self);
  const TensorShapeSettings shape = self->impl->settings.shape_settings ();
  GST_OBJECT_UNLOCK (self);
  return shape;
}

/* The frame itself, when the tensor rides on it as a meta. */
static GstCaps *
same_caps (GstCaps * caps, GstCaps * filter)
{
  if (!filter)
    return gst_caps_ref (caps);
  return gst_caps_intersect_full (filter, caps, GST_CAPS_INTERSECT_FIRST);
}

static GstCaps *
gst_cuda_tensorize_transform_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * filter)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  gboolean gpu = gst_cuda_prep_base_gpu_possible (GST_CUDA_PREP_BASE (self));

  if (output_mode (self) == OUTPUT_VIDEO_META)
    return same_caps (caps, filter);
  if (gst_caps_is_any (caps)) {
    GstPad *other = direction == GST_PAD_SINK ? trans->srcpad : trans->sinkpad;
    GstCaps *tmpl = gst_pad_get_pad_template_caps (other);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect_full (filter, tmpl, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref (tmpl);
      tmpl = tmp;
    }
    return tmpl;
  }

  GstCaps *result = gst_caps_new_empty ();

  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    const GstStructure *in = gst_caps_get_structure (caps, i);
    gboolean in_cuda = gst_cuda_prep_caps_has_cuda_feature (caps, i);
    GstStructure *out;

    if (direction == GST_PAD_SINK) {
      /* Any shape: downstream may fix it (fixate_caps fills in what it leaves open), and
       * configure refuses one that contradicts a property the user set, naming both. */
      out = gst_structure_new ("other/tensors", "format", G_TYPE_STRING, "static",
          "num_tensors", G_TYPE_INT, 1, NULL);
      GValue types = G_VALUE_INIT;
      gst_value_list_init (&types, 2);
      for (DType d : {DType::Float32, DType::Float16}) {
        GValue v = G_VALUE_INIT;
        g_value_init (&v, G_TYPE_STRING);
        g_value_set_static_string (&v, gst_cuda_prep_tensor_type_name (d));
        gst_value_list_append_and_take_value (&types, &v);
      }
      gst_structure_take_value (out, "types", &types);
    } else {
      out = gst_structure_new_empty ("video/x-raw");
      GValue formats = G_VALUE_INIT;
      gst_cuda_prep_video_formats_value (&formats);
      gst_structure_take_value (out, "format", &formats);
      gst_structure_set (out, "width", GST_TYPE_INT_RANGE, 1, kMaxSourceSide,
          "height", GST_TYPE_INT_RANGE, 1, kMaxSourceSide, NULL);
    }
    const GValue *fr = gst_structure_get_value (in, "framerate");
    if (fr)
      gst_structure_set_value (out, "framerate", fr);
    else
      gst_structure_set (out, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);

    /* Same memory as the other side first: no copy either way. */
    GstCaps *sys = gst_caps_new_full (gst_structure_copy (out), NULL);
    GstCaps *dev = gst_caps_new_full (out, NULL);
    gst_caps_set_features (dev, 0, gst_caps_features_new ("memory:CUDAMemory", NULL));
    if (direction == GST_PAD_SINK && !gpu) {
      gst_caps_unref (dev);     /* no GPU: tensors can only be in system memory */
      dev = gst_caps_new_empty ();
    }
    /* Without a GPU, CUDA input is still listed (last) so that a CUDA-only upstream gets a clear
     * error from set_caps rather than a bare not-negotiated; peers that can do both pick
     * system memory. */
    if (in_cuda && gpu) {
      result = gst_caps_merge (result, dev);
      result = gst_caps_merge (result, sys);
    } else {
      result = gst_caps_merge (result, sys);
      result = gst_caps_merge (result, dev);
    }
  }

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  GST_DEBUG_OBJECT (self, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, result);
  return result;
}

static GstCaps *
gst_cuda_tensorize_fixate_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * othercaps)
{
  if (direction == GST_PAD_SINK && !gst_caps_is_empty (othercaps)) {
    othercaps = gst_caps_make_writable (gst_caps_truncate (othercaps));
    GstStructure *s = gst_caps_get_structure (othercaps, 0);
    if (gst_structure_has_name (s, "other/tensors"))
      gst_cuda_prep_tensor_fixate_shape (s, shape_settings (GST_CUDA_TENSORIZE (trans)));
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->fixate_caps (trans, direction, caps, othercaps);
}

static gboolean
gst_cuda_tensorize_transform_size (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, gsize size, GstCaps * othercaps, gsize * othersize)
{
  const TensorizeState &state = GST_CUDA_TENSORIZE (trans)->impl->state;
  if (direction != GST_PAD_SINK || !state.have_plan)
    return FALSE;
  *othersize = tensor_bytes (state.plan);
  return TRUE;
}

/* ---- per caps ------------------------------------------------------------------------- */

/* A downstream that refuses our tensor would only get a bare not-negotiated: say what we
 * produce and which property sets it. (Negotiation itself is left to GstBaseTransform.) */
static void
explain_refused_output (GstCudaTensorize * self, GstCaps * incaps)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  if (!gst_pad_is_linked (trans->srcpad))
    return;
  GstCaps *produced = GST_BASE_TRANSFORM_GET_CLASS (self)->transform_caps (trans, GST_PAD_SINK,
      incaps, NULL);
  GstCaps *peer = gst_pad_peer_query_caps (trans->srcpad, NULL);
  if (!gst_caps_can_intersect (produced, peer)) {
    gchar *p = gst_caps_to_string (produced), *d = gst_caps_to_string (peer);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream does not accept the tensor cudatensorize produces: set width, height, "
            "layout or dtype to what it takes"),
        ("cudatensorize produces %s (properties width, height, layout, dtype); downstream "
            "accepts %s", p, d));
    g_free (p);
    g_free (d);
  }
  gst_caps_unref (produced);
  gst_caps_unref (peer);
}

static gboolean
gst_cuda_tensorize_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps (event, &caps);
    explain_refused_output (GST_CUDA_TENSORIZE (trans), caps);
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->sink_event (trans, event);
}

/* ---- start / per caps ----------------------------------------------------------------- */

/* Settings that are wrong whatever the caps are refused here, once. */
static gboolean
gst_cuda_tensorize_start (GstBaseTransform * trans)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  TensorizeState &state = self->impl->state;
  TensorizePlan plan;
  state.posted_error.clear ();
  const TensorizeSettings settings = settings_snapshot (self);
  Status st = build_plan (settings, NULL, &plan);
  if (st.ok () && settings.output == OUTPUT_VIDEO_META && !TensorMetaOutput::supported ())
    st = Status::error ("output=video-meta needs GStreamer >= 1.26 (GstTensorMeta of the "
        "gstreamer-analytics-1.0 library); this build has no such library: use output=tensor");
  if (!st.ok ()) {
    post_settings_error (self, st, "checked at start, before caps");
    return FALSE;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->start (trans);
}

static gboolean
gst_cuda_tensorize_configure (GstCudaPrepBase * base, GstCaps * incaps, GstCaps * outcaps)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (base);
  TensorizeState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device (base);
  const GstVideoInfo *info = gst_cuda_prep_base_input (base).info ();

  state.built_from = settings_snapshot (self);
  state.have_plan = FALSE;
  const gboolean meta_mode = state.built_from.output == OUTPUT_VIDEO_META;
  /* GstBaseTransform runs transform_ip only when told to (this class has both). */
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), meta_mode);
  state.shape = state.built_from.shape_settings ().value;
  Status st;
  if (!meta_mode && !(st = gst_cuda_prep_tensor_shape_from_caps (outcaps,
              state.built_from.shape_settings (), &state.shape)).ok ()) {
    gchar *caps = gst_caps_to_string (outcaps);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Downstream does not accept the tensor cudatensorize is set to produce: %s",
            st.message ().c_str ()), ("downstream caps %s", caps));
    g_free (caps);
    return FALSE;
  }
  st = build_plan (with_shape (state.built_from, state.shape), info, &state.plan);
  if (!st.ok ()) {
    gchar *caps = gst_caps_to_string (incaps);
    post_settings_error (self, st, (std::string ("input caps ") + caps).c_str ());
    g_free (caps);
    return FALSE;
  }
  if (GST_VIDEO_INFO_IS_YUV (info) && state.built_from.yuv_matrix == YUV_MATRIX_AUTO &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT601 &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT709 &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT2020)
    GST_WARNING_OBJECT (self, "colour matrix %d not supported, using BT.601",
        info->colorimetry.matrix);
  state.have_plan = TRUE;
  /* A tensor on the frame is in CUDA memory whenever the GPU makes it. */
  state.output_cuda = meta_mode ? device.gpu () : gst_cuda_prep_caps_has_cuda_feature (outcaps, 0);
  state.tensorizer = device.gpu () ? make_tensorizer_cuda (device.stream ()) : make_tensorizer_cpu ();

  if (device.gpu ()) {
    CudaPrepScopedContext ctx (device, GST_ELEMENT (self));
    if (!ctx.ok ())
      return FALSE;
    device.sync ();             /* the old scratch may still be read */
    state.scratch.reset ();
    if (!state.output_cuda)
      st = state.scratch.allocate (tensor_bytes (state.plan));
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA memory"),
          ("%s", st.message ().c_str ()));
      return FALSE;
    }
  }
  std::string error;
  if (meta_mode && !state.meta_output.configure (state.output_cuda ? device.context () : NULL,
          state.plan, &error)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("Could not make the tensor pool"),
        ("%s", error.c_str ()));
    return FALSE;
  }
  GST_INFO_OBJECT (self, "%dx%d %s -> tensor %dx%dx3 (%s, %s), %s path, output in %s memory",
      GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info),
      state.plan.dst_width, state.plan.dst_height,
      state.plan.layout == Layout::NCHW ? "nchw" : "nhwc",
      gst_cuda_prep_tensor_type_name (state.plan.dtype),
      device.gpu () ? "CUDA" : "CPU", state.output_cuda ? "CUDA" : "system");
  return TRUE;
}

static gboolean
gst_cuda_tensorize_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  GstCaps *outcaps = NULL;

  gst_query_parse_allocation (query, &outcaps, NULL);
  const TensorizeState &state = self->impl->state;
  if (state.built_from.output == OUTPUT_VIDEO_META)  /* in place: the tensors have their pool */
    return GST_BASE_TRANSFORM_CLASS (parent_class)->decide_allocation (trans, query);
  if (!outcaps || !state.have_plan)
    return FALSE;
  const gsize bytes = tensor_bytes (state.plan);
  GstCudaContext *context = state.output_cuda ?
      gst_cuda_prep_base_device (base).context () : NULL;
  guint size;
  std::string error;
  GstBufferPool *pool = gst_cuda_prep_tensor_pool_new (context, outcaps, bytes, 2, &size, &error);
  if (!pool) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Could not configure the output buffer pool"),
        ("%s", error.c_str ()));
    return FALSE;
  }
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, 2, 0);
  else
    gst_query_add_allocation_pool (query, pool, size, 2, 0);
  gst_object_unref (pool);
  return TRUE;
}

static gboolean
gst_cuda_tensorize_propose_allocation (GstBaseTransform * trans, GstQuery * decide_query,
    GstQuery * query)
{
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  GstCaps *caps = NULL;
  GstVideoInfo info;
  GstBufferPool *pool = NULL;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;

  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  if (gst_query_get_n_allocation_pools (query) > 0)
    return TRUE;

#if CUDAPREP_HAVE_CUDA
  GstCudaContext *context = gst_cuda_prep_base_device (base).context ();
  if (gst_cuda_prep_caps_has_cuda_feature (caps, 0) && context)
    pool = gst_cuda_buffer_pool_new (context);
#endif
  if (!pool)
    pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, (guint) GST_VIDEO_INFO_SIZE (&info), 0, 0);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return FALSE;
  }
  /* Our CUDA pool may have picked a pitch: report the size it settled on. */
  config = gst_buffer_pool_get_config (pool);
  guint size;
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);
  gst_query_add_allocation_pool (query, pool, size, 0, 0);
  gst_object_unref (pool);
  return TRUE;
}

/* Only metas that say nothing about video geometry survive into the tensor. */
static gboolean
gst_cuda_tensorize_transform_meta (GstBaseTransform * trans, GstBuffer * outbuf, GstMeta * meta,
    GstBuffer * inbuf)
{
  const gchar *const *tags = gst_meta_api_type_get_tags (meta->info->api);
  return !tags || !tags[0];
}

/* ---- per frame ------------------------------------------------------------------------ */

/* Brings the plan up to date with the settings before a frame. Comparing under the lock costs
 * no allocation; the snapshot is copied only when something changed. A change of the tensor's
 * shape waits for the renegotiation that set_property requested. */
static gboolean
refresh_plan (GstCudaTensorize * self)
{
  TensorizeState &state = self->impl->state;
  GST_OBJECT_LOCK (self);
  const gboolean changed = !(self->impl->settings == state.built_from);
  TensorizeSettings snapshot;
  if (changed)
    snapshot = self->impl->settings;
  GST_OBJECT_UNLOCK (self);
  if (!changed || !snapshot.same_shape (state.built_from))
    return TRUE;

  TensorizePlan plan;
  Status st = build_plan (with_shape (snapshot, state.shape),
      gst_cuda_prep_base_input (GST_CUDA_PREP_BASE (self)).info (), &plan);
  if (!st.ok ()) {
    post_settings_error (self, st, "changed while playing");
    return FALSE;
  }
  state.plan = plan;
  state.built_from = std::move (snapshot);
  return TRUE;
}

static GstFlowReturn
gst_cuda_tensorize_transform (GstBaseTransform * trans, GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  TensorizeState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device (base);
  CudaPrepVideoInput &input = gst_cuda_prep_base_input (base);

  if (!state.have_plan) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("No caps negotiated before the first buffer"), (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!refresh_plan (self))
    return GST_FLOW_ERROR;

  const gsize bytes = tensor_bytes (state.plan);
  if (gst_buffer_get_size (outbuf) < bytes) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Output buffer too small"),
        ("%" G_GSIZE_FORMAT " < %" G_GSIZE_FORMAT, gst_buffer_get_size (outbuf), bytes));
    return GST_FLOW_ERROR;
  }
  gst_buffer_set_size (outbuf, bytes);

  CudaPrepScopedContext ctx (device, GST_ELEMENT (self));
  if (!ctx.ok ())
    return GST_FLOW_ERROR;
  GstVideoFrame frame;
  ImageView view;
  if (!input.map (GST_ELEMENT (self), device, inbuf, FALSE, &frame, &view))
    return GST_FLOW_ERROR;

  /* The tensorizer writes where it runs; a GPU tensor for system memory goes through scratch. */
  const gboolean download = state.tensorizer->on_device () && !state.output_cuda;
  GstMapFlags out_flags = GST_MAP_WRITE;
#if CUDAPREP_HAVE_CUDA
  if (state.tensorizer->on_device () && !download)
    out_flags = (GstMapFlags) (GST_MAP_WRITE | GST_MAP_CUDA);
#endif
  GstMapInfo out_map;
  if (!gst_buffer_map (outbuf, &out_map, out_flags)) {
    input.unmap (GST_ELEMENT (self), device, &frame, FALSE);
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not map the output buffer"), (NULL));
    return GST_FLOW_ERROR;
  }
  Status st = state.tensorizer->run (state.plan, view, download ? state.scratch.data () : out_map.data);
  if (st.ok () && download)
    st = cuda::copy_2d_async (out_map.data, bytes, state.scratch.data (), bytes, bytes, 1,
        cuda::CopyKind::DeviceToHost, device.stream ());
  /* The tensor is complete, and the GPU done with the input frame, before either leaves. */
  if (st.ok ())
    st = device.sync ();
  gst_buffer_unmap (outbuf, &out_map);
  const gboolean unmapped = input.unmap (GST_ELEMENT (self), device, &frame, FALSE);

  if (!st.ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Tensorize failed"), ("%s", st.message ().c_str ()));
    return GST_FLOW_ERROR;
  }
  if (!unmapped)
    return GST_FLOW_ERROR;
  gst_cuda_prep_buffer_add_transform_meta (outbuf, state.plan.transform, state.plan.roi);
  return GST_FLOW_OK;
}

/* output=video-meta (in place: the caps are the same on both pads): the tensor is made into a
 * pool buffer exactly as for output=tensor, then put on the frame. */
static GstFlowReturn
gst_cuda_tensorize_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  TensorMetaOutput &meta_output = self->impl->state.meta_output;
  GstBuffer *tensor = NULL;
  GstFlowReturn ret = meta_output.acquire (&tensor);
  if (ret != GST_FLOW_OK)
    return ret;                 /* flushing or not negotiated: no frame is lost silently */
  ret = gst_cuda_tensorize_transform (trans, buf, tensor);
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref (tensor);
    return ret;
  }
  std::string error;
  if (!meta_output.attach (buf, tensor, &error)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not attach the tensor to the frame"),
        ("%s", error.c_str ()));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static gboolean
gst_cuda_tensorize_stop (GstBaseTransform * trans)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  TensorizeState &state = self->impl->state;
  {
    CudaPrepScopedContext ctx (gst_cuda_prep_base_device (base), GST_ELEMENT (self));
    gst_cuda_prep_base_device (base).sync ();
    state.scratch.reset ();
  }
  state.have_plan = FALSE;
  state.tensorizer.reset ();
  state.meta_output.reset ();
  return GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
}

/* ---- properties ----------------------------------------------------------------------- */

static void
gst_cuda_tensorize_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (object);
  TensorizeSettings &s = self->impl->settings;
  gboolean geometry = FALSE;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_WIDTH: geometry = !s.width_set || s.width != (int) g_value_get_uint (value); s.width = g_value_get_uint (value); s.width_set = true; break;
    case PROP_HEIGHT: geometry = !s.height_set || s.height != (int) g_value_get_uint (value); s.height = g_value_get_uint (value); s.height_set = true; break;
    case PROP_RESIZE_MODE: s.mode = (ResizeMode) g_value_get_enum (value); break;
    case PROP_ALIGN: s.align = (Align) g_value_get_enum (value); break;
    case PROP_PAD_VALUE: s.pad_value = g_value_get_uint (value); break;
    case PROP_INTERPOLATION: s.interpolation = (Interpolation) g_value_get_enum (value); break;
    case PROP_CHANNEL_ORDER: s.channel_order = (ChannelOrder) g_value_get_enum (value); break;
    case PROP_SCALE: s.scale = g_value_get_double (value); break;
    case PROP_MEAN: s.mean = gst_cuda_prep_vector_from_array<double> (value); break;
    case PROP_STD: s.std = gst_cuda_prep_vector_from_array<double> (value); break;
    case PROP_LAYOUT: geometry = !s.layout_set || s.layout != (Layout) g_value_get_enum (value); s.layout = (Layout) g_value_get_enum (value); s.layout_set = true; break;
    case PROP_DTYPE: geometry = !s.dtype_set || s.dtype != (DType) g_value_get_enum (value); s.dtype = (DType) g_value_get_enum (value); s.dtype_set = true; break;
    case PROP_ROI: s.roi = gst_cuda_prep_vector_from_array<int> (value); break;
    case PROP_YUV_MATRIX: s.yuv_matrix = g_value_get_enum (value); break;
    case PROP_YUV_RANGE: s.yuv_range = g_value_get_enum (value); break;
    case PROP_OUTPUT:         /* changes the caps of both pads: taken at start */
      GST_OBJECT_UNLOCK (self);
      if (!gst_cuda_prep_ready_property_changeable (object, pspec))
        return;
      GST_OBJECT_LOCK (self);
      s.output = (OutputMode) g_value_get_enum (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);

  /* Streaming state is never touched here: the streaming thread sees the new settings before
   * the next frame; a new tensor shape goes through renegotiation. */
  if (geometry)
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
gst_cuda_tensorize_get_property (GObject * object, guint prop_id, GValue * value, GParamSpec * pspec)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (object);
  const TensorizeSettings &s = self->impl->settings;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_WIDTH: g_value_set_uint (value, s.width); break;
    case PROP_HEIGHT: g_value_set_uint (value, s.height); break;
    case PROP_RESIZE_MODE: g_value_set_enum (value, (gint) s.mode); break;
    case PROP_ALIGN: g_value_set_enum (value, (gint) s.align); break;
    case PROP_PAD_VALUE: g_value_set_uint (value, s.pad_value); break;
    case PROP_INTERPOLATION: g_value_set_enum (value, (gint) s.interpolation); break;
    case PROP_CHANNEL_ORDER: g_value_set_enum (value, (gint) s.channel_order); break;
    case PROP_SCALE: g_value_set_double (value, s.scale); break;
    case PROP_MEAN: gst_cuda_prep_vector_to_array (s.mean, value); break;
    case PROP_STD: gst_cuda_prep_vector_to_array (s.std, value); break;
    case PROP_LAYOUT: g_value_set_enum (value, (gint) s.layout); break;
    case PROP_DTYPE: g_value_set_enum (value, (gint) s.dtype); break;
    case PROP_ROI: gst_cuda_prep_vector_to_array (s.roi, value); break;
    case PROP_YUV_MATRIX: g_value_set_enum (value, s.yuv_matrix); break;
    case PROP_YUV_RANGE: g_value_set_enum (value, s.yuv_range); break;
    case PROP_OUTPUT: g_value_set_enum (value, (gint) s.output); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_tensorize_finalize (GObject * object)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (object);
  delete self->impl;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_tensorize_class_init (GstCudaTensorizeClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaPrepBaseClass *base_class = GST_CUDA_PREP_BASE_CLASS (klass);
  const GParamFlags rw = (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_tensorize_set_property;
  gobject_class->get_property = gst_cuda_tensorize_get_property;
  gobject_class->finalize = gst_cuda_tensorize_finalize;

  g_object_class_install_property (gobject_class, PROP_WIDTH,
      g_param_spec_uint ("width", "Width", "Tensor width in pixels", 1, kMaxTensorSide, 640, rw));
  g_object_class_install_property (gobject_class, PROP_HEIGHT,
      g_param_spec_uint ("height", "Height", "Tensor height in pixels", 1, kMaxTensorSide, 640, rw));
  g_object_class_install_property (gobject_class, PROP_RESIZE_MODE,
      g_param_spec_enum ("resize-mode", "Resize mode", "How the frame is fitted into the tensor",
          resize_mode_get_type (), (gint) ResizeMode::Letterbox, rw));
  g_object_class_install_property (gobject_class, PROP_ALIGN,
      g_param_spec_enum ("align", "Align", "Placement of a letterboxed or cropped image",
          align_get_type (), (gint) Align::Center, rw));
  g_object_class_install_property (gobject_class, PROP_PAD_VALUE,
      g_param_spec_uint ("pad-value", "Pad value",
          "Value of the padding in pixel space (0-255), normalised like the image", 0, 255, 114, rw));
  g_object_class_install_property (gobject_class, PROP_INTERPOLATION,
      g_param_spec_enum ("interpolation", "Interpolation", "Resampling filter",
          interpolation_get_type (), (gint) Interpolation::Bilinear, rw));
  g_object_class_install_property (gobject_class, PROP_CHANNEL_ORDER,
      g_param_spec_enum ("channel-order", "Channel order", "Order of the colour channels in the tensor",
          channel_order_get_type (), (gint) ChannelOrder::RGB, rw));
  g_object_class_install_property (gobject_class, PROP_SCALE,
      g_param_spec_double ("scale", "Scale", "out = (pixel * scale - mean) / std",
          -G_MAXDOUBLE, G_MAXDOUBLE, 1.0 / 255.0, rw));
  g_object_class_install_property (gobject_class, PROP_MEAN,
      gst_cuda_prep_param_spec_doubles ("mean", "Mean",
          "Per output channel mean, 1 or 3 values, e.g. \"<0.485, 0.456, 0.406>\"", rw));
  g_object_class_install_property (gobject_class, PROP_STD,
      gst_cuda_prep_param_spec_doubles ("std", "Std",
          "Per output channel standard deviation, 1 or 3 non-zero values, e.g. \"<0.229, 0.224, 0.225>\"", rw));
  g_object_class_install_property (gobject_class, PROP_LAYOUT,
      g_param_spec_enum ("layout", "Layout", "Tensor memory layout", layout_get_type (),
          (gint) Layout::NCHW, rw));
  g_object_class_install_property (gobject_class, PROP_DTYPE,
      g_param_spec_enum ("dtype", "Data type", "Tensor element type", dtype_get_type (),
          (gint) DType::Float32, rw));
  g_object_class_install_property (gobject_class, PROP_ROI,
      gst_cuda_prep_param_spec_ints ("roi", "Region of interest",
          "Source rectangle \"<x, y, width, height>\" to process, clipped to the frame (the meta's "
          "source-rect says what was used); empty (default) = whole frame", rw));
  g_object_class_install_property (gobject_class, PROP_YUV_MATRIX,
      g_param_spec_enum ("yuv-matrix", "YUV matrix",
          "YUV->RGB matrix; auto takes it from the caps colorimetry", yuv_matrix_get_type (),
          YUV_MATRIX_AUTO, rw));
  g_object_class_install_property (gobject_class, PROP_YUV_RANGE,
      g_param_spec_enum ("yuv-range", "YUV range",
          "YUV quantisation range; auto takes it from the caps colorimetry", yuv_range_get_type (),
          YUV_RANGE_AUTO, rw));
  g_object_class_install_property (gobject_class, PROP_OUTPUT,
      g_param_spec_enum ("output", "Output",
          "tensor: the tensor as its own buffer; video-meta: the frame passes through with the "
          "tensor on it as a GstTensorMeta (GStreamer >= 1.26 builds; refused at start otherwise)",
          output_mode_get_type (), OUTPUT_TENSOR,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  gst_element_class_set_static_metadata (element_class, "CUDA tensorize",
      "Filter/Converter/Video/Scaler/Hardware",
      "Resize (letterbox/stretch/crop), colour-convert, normalise and lay out video frames "
      "as a float tensor in one CUDA kernel (CPU fallback)",
      "gst-cudaprep developers");
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("sink", GST_PAD_SINK,
          GST_PAD_ALWAYS, gst_cuda_prep_video_template_caps ()));
  /* output=video-meta passes the frames through: the src pad takes video too. */
  GstCaps *src_caps = gst_caps_make_writable (gst_static_caps_get (&tensor_src_caps));
  gst_caps_append (src_caps, gst_cuda_prep_video_template_caps ());
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("src", GST_PAD_SRC,
          GST_PAD_ALWAYS, src_caps));
  gst_caps_unref (src_caps);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_fixate_caps);
  trans_class->transform_size = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_size);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_decide_allocation);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_propose_allocation);
  trans_class->transform_meta = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_meta);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_ip);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_sink_event);
  base_class->configure = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_configure);

  gst_type_mark_as_plugin_api (resize_mode_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (align_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (interpolation_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (channel_order_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (layout_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (dtype_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (yuv_matrix_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (yuv_range_get_type (), (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (output_mode_get_type (), (GstPluginAPIFlags) 0);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_tensorize_debug, "cudatensorize", 0, "cudatensorize element");
}

static void
gst_cuda_tensorize_init (GstCudaTensorize * self)
{
  self->impl = new GstCudaTensorizeImpl ();
}
