/**
 * SECTION:element-cudatensorize
 * @title: cudatensorize
 *
 * Turns video frames into a detector's input tensor in one fused CUDA kernel per frame:
 * resize (bilinear or nearest) with letterbox, stretch or crop as one affine warp, colour
 * conversion (NV12, NV21, I420, YUY2, UYVY, P010 with the caps' colorimetry and chroma-site),
 * normalisation
 * `out = (pixel * scale - mean) / std`, and HWC -> CHW, to planar float32 or float16.
 * Frames in CUDA memory are read in place (zero copy from nvh264dec or cudaupload);
 * system-memory frames are uploaded. Without a usable GPU the CPU path computes the same
 * function. Every output buffer carries a "GstCudaPrepTransformMeta" custom meta with the
 * source->tensor affine, its inverse and the unpadded rectangle (see gstcudaprepmeta.h).
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

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "chroma_site.h"
#include "pinned_pool.h"
#include "transform_meta.h"
#include "pixel_format.h"
#include "property_arrays.h"
#include "tensor_caps.h"
#include "tensorize.h"
#include "tensorize_batch.h"
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
  PROP_CHROMA_SITE,
  PROP_ROIS,
  PROP_BATCH_SIZE,
  PROP_ROI_META,
  PROP_ROI_TYPE,
  PROP_ROI_MIN_SIZE,
  PROP_ROI_MAX_SIZE,
  PROP_ROI_MARGIN,
};

typedef enum { YUV_MATRIX_AUTO = -1 } YuvMatrixAuto;
typedef enum { YUV_RANGE_AUTO, YUV_RANGE_LIMITED, YUV_RANGE_FULL } YuvRangeSetting;

/* In an anonymous namespace: cudatensorbatch's TensorizeSettings (tensorize_settings.h) has the
 * same name, and two inline constructors of one name in one library are one to the linker. */
namespace {
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
  int chroma_site = GST_CUDA_PREP_CHROMA_SITE_AUTO;
  std::vector<std::vector<int>> rois;   /* empty: one slot, the roi (or the whole frame) */
  int batch_size = 1;
  bool roi_meta = false;                /* regions from upstream GstVideoRegionOfInterestMeta */
  std::string roi_type;                 /* only metas of this roi-type; empty: any */
  int roi_min_size = 0, roi_max_size = 0; /* region width and height bounds; max 0: none */
  double roi_margin = 0.0;              /* fraction of a region's size added on each side */

  /* What the output caps say: a change renegotiates. */
  bool same_shape (const TensorizeSettings & o) const
  {
    return width == o.width && height == o.height && layout == o.layout && dtype == o.dtype &&
        batch_size == o.batch_size;
  }
  bool operator== (const TensorizeSettings & o) const
  {
    return same_shape (o) && mode == o.mode && align == o.align && pad_value == o.pad_value &&
        interpolation == o.interpolation && channel_order == o.channel_order &&
        scale == o.scale && mean == o.mean && std == o.std && roi == o.roi &&
        yuv_matrix == o.yuv_matrix && yuv_range == o.yuv_range && chroma_site == o.chroma_site && rois == o.rois &&
        roi_meta == o.roi_meta && roi_type == o.roi_type && roi_min_size == o.roi_min_size &&
        roi_max_size == o.roi_max_size && roi_margin == o.roi_margin;
  }
};
}  // namespace

/* Streaming state: built in start / set_caps from a settings snapshot, dropped in stop. */
/* The plans of a settings snapshot and an input: the output and one slot plan per region. */
struct TensorizePlans
{
  TensorOutputPlan output {};
  std::vector<SlotPlan> regions;        /* the rois kept, or the one roi / whole frame */
  std::vector<int> region_index;        /* each one's index in rois or among the frame's ROI
                                         * metas; -1 for the roi / whole frame */
  std::vector<int> region_id;           /* the ROI meta's id; -1 if none */
  std::string skipped;                  /* the regions skipped (outside the frame or empty) */
  TensorizeConfig cfg;                  /* what the slot plans are made from (roi aside) */
  std::string frame_desc;
};

struct TensorizeState
{
  TensorizeSettings built_from; /* the snapshot the plans were made from */
  TensorizePlans plans;
  gboolean have_plan = FALSE;
  std::vector<BatchSlot> slots; /* batch-size slots, sized per caps, reused every tensor */
  std::vector<CudaPrepSlotMeta> slot_metas;
  size_t next_region = 0;       /* first region of the queued frame's next tensor */
  gboolean warned_meta_skip = FALSE; /* roi-meta: regions skipped are warned about once */
  gboolean output_cuda = FALSE;
  std::unique_ptr<Tensorizer> tensorizer;
  cuda::DeviceBuffer scratch;   /* GPU path with system-memory output */
  std::string posted_error;     /* the last settings error posted, so it is posted once */
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


static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("other/tensors(memory:CUDAMemory), format = (string) static, "
        "num_tensors = (int) 1, types = (string) { float32, float16 }, "
        "framerate = (fraction) [ 0/1, MAX ]; "
        GST_CUDA_PREP_TENSOR_CAPS_STR));

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
    {(gint) Layout::NCHW, "Planar: all of channel 0, then 1, then 2 (dimensions W:H:3:B)", "nchw"},
    {(gint) Layout::NHWC, "Interleaved channels (dimensions 3:W:H:B)", "nhwc"})
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

static Status clip_roi (const Rect & r, int frame_w, int frame_h, const char *frame_desc, Rect * out);

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
  return clip_roi (Rect {roi[0], roi[1], roi[2], roi[3]}, frame_w, frame_h, frame_desc, out);
}

/* A rectangle clipped to the frame (documented); an empty result is an error. */
static Status
clip_roi (const Rect & r, int frame_w, int frame_h, const char *frame_desc, Rect * out)
{
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

static Status add_region (TensorizePlans * p, const Rect & r, double margin, const char *kind, int index,
    int id);

/* The kernel plans for a settings snapshot and an input; every invalid setting gets its own
 * message. Without @info (at start, before caps) the checks that need no caps are made, with
 * the largest frame the element takes. Regions (rois) partly outside the frame are clipped to
 * it, as roi is; regions entirely outside or empty are skipped and listed in plans->skipped. */
static Status
build_plans (const TensorizeSettings & s, const GstVideoInfo * info, TensorizePlans * plans)
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
  gst_cuda_prep_chroma_siting (s.chroma_site, info, &cfg);

  if (!(s.roi_margin >= 0.0 && s.roi_margin <= 10.0))
    return Status::error ("roi-margin " + std::to_string (s.roi_margin) + " is out of range (0..10)");
  if (s.roi_max_size > 0 && s.roi_max_size < s.roi_min_size)
    return Status::error ("roi-max-size " + std::to_string (s.roi_max_size) + " is below roi-min-size " +
        std::to_string (s.roi_min_size));
  TensorizePlans p;
  p.cfg = cfg;
  p.frame_desc = frame_desc;
  CUDAPREP_RETURN_IF_ERROR (make_output_plan (cfg, &p.output));
  const uint64_t bytes = (uint64_t) slot_bytes (p.output) * (uint64_t) s.batch_size;
  if (bytes > kMaxTensorBytes)      /* one GstBuffer, one pool allocation (guint sizes) */
    return Status::error ("batch of " + std::to_string (s.batch_size) + " tensors " + std::to_string (s.width) +
        "x" + std::to_string (s.height) + "x3 needs " + std::to_string (bytes) + " bytes, more than the " +
        std::to_string (kMaxTensorBytes) + "-byte limit of one buffer");
  if (s.rois.empty () && !s.roi_meta) {
    p.regions.emplace_back ();
    p.region_index.push_back (-1);
    p.region_id.push_back (-1);
    CUDAPREP_RETURN_IF_ERROR (make_slot_plan (cfg, cfg, &p.regions.back ()));
  }
  for (size_t i = 0; i < s.rois.size () && !s.roi_meta; i++) {
    if (s.rois[i].size () != 4)
      return Status::error ("rois item " + std::to_string (i) + " needs 4 values <x, y, width, height>, got " +
          std::to_string (s.rois[i].size ()));
    const Rect r {s.rois[i][0], s.rois[i][1], s.rois[i][2], s.rois[i][3]};
    CUDAPREP_RETURN_IF_ERROR (add_region (&p, r, s.roi_margin, "rois item", (int) i, -1));
  }
  *plans = std::move (p);
  return Status ();
}

/* Adds region @r grown by @margin of its width / height on each side (outward to whole
 * pixels), then clipped to the frame, as a slot plan; a region entirely outside the frame or
 * empty is listed in p->skipped instead. */
static Status
add_region (TensorizePlans * p, const Rect & r, double margin, const char *kind, int index, int id)
{
  Rect grown = r;
  if (margin > 0.0 && !r.empty ()) {
    const double mx = margin * r.w, my = margin * r.h;
    const double x0 = std::floor (r.x - mx), y0 = std::floor (r.y - my);
    const double x1 = std::ceil (r.x + r.w + mx), y1 = std::ceil (r.y + r.h + my);
    grown = Rect {(int) x0, (int) y0, (int) (x1 - x0), (int) (y1 - y0)};
  }
  Rect clipped;
  Status st = clip_roi (grown, p->cfg.src_width, p->cfg.src_height, p->frame_desc.c_str (), &clipped);
  if (!st.ok ()) {
    p->skipped += std::string (p->skipped.empty ()? "" : "; ") + kind + " " + std::to_string (index) + ": " +
        st.message ();
    return Status ();
  }
  SlotSourceSpec source = p->cfg;
  source.roi = clipped;
  p->regions.emplace_back ();
  p->region_index.push_back (index);
  p->region_id.push_back (id);
  return make_slot_plan (p->cfg, source, &p->regions.back ());
}

/* Makes the plans of a snapshot @state's. One warning names the regions that are skipped. */
static void
adopt_plans (GstCudaTensorize * self, TensorizePlans && plans)
{
  TensorizeState &state = self->impl->state;
  if (!plans.skipped.empty ())
    GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("Regions skipped"),
        ("%s (they never fill a slot)", plans.skipped.c_str ()));
  state.plans = std::move (plans);
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

static void
output_geometry (GstCudaTensorize * self, int *w, int *h, int *batch, Layout * layout, DType * dtype)
{
  GST_OBJECT_LOCK (self);
  const TensorizeSettings &s = self->impl->settings;
  *w = s.width;
  *h = s.height;
  *batch = s.batch_size;
  *layout = s.layout;
  *dtype = s.dtype;
  GST_OBJECT_UNLOCK (self);
}

static GstCaps *
gst_cuda_tensorize_transform_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * filter)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  gboolean gpu = gst_cuda_prep_base_gpu_possible (GST_CUDA_PREP_BASE (self));

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
      int w, h, batch;
      Layout layout;
      DType dtype;
      output_geometry (self, &w, &h, &batch, &layout, &dtype);
      gchar *dims = gst_cuda_prep_tensor_dimensions (w, h, layout, batch);
      out = gst_structure_new ("other/tensors", "format", G_TYPE_STRING, "static",
          "num_tensors", G_TYPE_INT, 1, "types", G_TYPE_STRING, gst_cuda_prep_tensor_type_name (dtype),
          "dimensions", G_TYPE_STRING, dims, NULL);
      g_free (dims);
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

static gboolean
gst_cuda_tensorize_transform_size (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, gsize size, GstCaps * othercaps, gsize * othersize)
{
  const TensorizeState &state = GST_CUDA_TENSORIZE (trans)->impl->state;
  if (direction != GST_PAD_SINK || !state.have_plan)
    return FALSE;
  *othersize = batch_bytes (state.plans.output, (int) state.slots.size ());
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
  } else if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP) {
    /* a flush drops the queued frame: the next one starts at its first region */
    GST_CUDA_TENSORIZE (trans)->impl->state.next_region = 0;
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
  TensorizePlans plans;
  state.posted_error.clear ();
  Status st = build_plans (settings_snapshot (self), NULL, &plans);
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
  TensorizePlans plans;
  Status st = build_plans (state.built_from, info, &plans);
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
  adopt_plans (self, std::move (plans));
  state.have_plan = TRUE;
  state.next_region = 0;
  state.warned_meta_skip = FALSE;
  state.slots.assign (state.built_from.batch_size, BatchSlot ());
  state.slot_metas.assign (state.built_from.batch_size, CudaPrepSlotMeta ());
  state.output_cuda = gst_cuda_prep_caps_has_cuda_feature (outcaps, 0);
  state.tensorizer = device.gpu () ? make_tensorizer_cuda (device.stream ()) : make_tensorizer_cpu ();

  if (device.gpu ()) {
    CudaPrepScopedContext ctx (device, GST_ELEMENT (self));
    if (!ctx.ok ())
      return FALSE;
    device.sync ();             /* the old scratch may still be read */
    state.scratch.reset ();
    st = state.tensorizer->reserve (state.built_from.batch_size);
    if (st.ok () && !state.output_cuda)
      st = state.scratch.allocate (batch_bytes (state.plans.output, state.built_from.batch_size));
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA memory"),
          ("%s", st.message ().c_str ()));
      return FALSE;
    }
  }
  GST_INFO_OBJECT (self, "%dx%d %s -> tensor %dx%dx3 (%s, %s), %s path, output in %s memory",
      GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info),
      state.plans.output.dst_width, state.plans.output.dst_height,
      state.plans.output.layout == Layout::NCHW ? "nchw" : "nhwc",
      gst_cuda_prep_tensor_type_name (state.plans.output.dtype),
      device.gpu () ? "CUDA" : "CPU", state.output_cuda ? "CUDA" : "system");
  return TRUE;
}

static gboolean
gst_cuda_tensorize_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  GstCaps *outcaps = NULL;
  GstBufferPool *pool = NULL;
  GstCaps *pool_caps = NULL;
  guint size;

  gst_query_parse_allocation (query, &outcaps, NULL);
  const TensorizeState &state = self->impl->state;
  if (!outcaps || !state.have_plan)
    return FALSE;
  const gsize bytes = batch_bytes (state.plans.output, (int) state.slots.size ());

#if CUDAPREP_HAVE_CUDA
  if (state.output_cuda) {
    /* GstCudaBufferPool sizes its memory from video caps: describe the contiguous tensor as
     * one RGBA row, so the allocation has no row padding. */
    GstVideoInfo vinfo;
    gst_video_info_set_format (&vinfo, GST_VIDEO_FORMAT_RGBA, (guint) ((bytes + 3) / 4), 1);
    pool = gst_cuda_buffer_pool_new (gst_cuda_prep_base_device (base).context ());
    pool_caps = gst_video_info_to_caps (&vinfo);
    size = (guint) GST_VIDEO_INFO_SIZE (&vinfo);
  }
#endif
  if (!pool) {
    /* GPU tensors for system memory are downloaded: into pinned memory, at DMA speed. */
    pool = gst_cuda_prep_pinned_pool_new (gst_cuda_prep_base_device (base));
    if (!pool)
      pool = gst_buffer_pool_new ();
    pool_caps = gst_caps_ref (outcaps);
    size = (guint) bytes;
  }

  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, pool_caps, size, 2, 0);
  gst_caps_unref (pool_caps);
  if (state.output_cuda)
    gst_cuda_prep_base_set_pool_stream (base, config);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Could not configure the output buffer pool"),
        ("%" G_GSIZE_FORMAT " bytes per tensor", bytes));
    gst_object_unref (pool);
    return FALSE;
  }
  /* The pool may round the size up (CUDA pitch); buffers are trimmed to the tensor. */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);

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
  const gboolean cuda_pool = pool != NULL;
  if (!pool)
    pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  if (cuda_pool)
    gst_cuda_prep_base_set_pool_stream (base, config);  /* upstream then writes on our stream */
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

  TensorizePlans plans;
  Status st = build_plans (snapshot, gst_cuda_prep_base_input (GST_CUDA_PREP_BASE (self)).info (),
      &plans);
  if (!st.ok ()) {
    post_settings_error (self, st, "changed while playing");
    return FALSE;
  }
  adopt_plans (self, std::move (plans));
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

  const int batch = (int) state.slots.size ();
  const gsize bytes = batch_bytes (state.plans.output, batch);
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
  /* Slots [next_region, next_region + batch) of this frame's regions; the rest are empty. */
  const size_t n_regions = state.plans.regions.size ();
  for (int k = 0; k < batch; k++) {
    const size_t r = state.next_region + k;
    BatchSlot &slot = state.slots[k];
    CudaPrepSlotMeta &meta = state.slot_metas[k];
    slot.empty = r >= n_regions;
    meta = CudaPrepSlotMeta ();
    meta.empty = slot.empty;
    meta.source_pts = GST_BUFFER_PTS (inbuf);
    if (slot.empty) {
      meta.transform.dst_width = state.plans.output.dst_width;
      meta.transform.dst_height = state.plans.output.dst_height;
      continue;
    }
    slot.plan = state.plans.regions[r];
    slot.src = view;
    meta.transform = slot.plan.transform;
    meta.source_rect = slot.plan.roi;
    meta.region_index = state.plans.region_index[r];
    meta.region_id = state.plans.region_id[r];
  }
  TensorizeBatch tb;
  tb.output = state.plans.output;
  tb.slots = state.slots.data ();
  tb.count = batch;
  void *dst = download ? state.scratch.data () : out_map.data;
  /* A batch of one frame keeps the single-frame kernel (no slot table upload). */
  Status st = batch == 1 && !state.slots[0].empty ?
      state.tensorizer->run (combine_plan (tb.output, state.slots[0].plan), view, dst) :
      state.tensorizer->run_batch (tb, dst, bytes);
  if (st.ok () && download)
    st = cuda::copy_2d_async (out_map.data, bytes, state.scratch.data (), bytes, bytes, 1,
        cuda::CopyKind::DeviceToHost, device.stream ());
  /* The tensor is complete, and the GPU done with the input frame, before either leaves;
   * unless both are ordered on our stream (1.24+): then the tensor's memory carries the stream
   * and is marked as needing a sync, so a CUDA consumer orders on it and a host map waits. */
  const gboolean ordered = !download && device.orders (outbuf) && input.stream_ordered (device, &frame);
  if (st.ok () && download)
    st = device.sync_sleeping ();       /* a copy of megabytes: no core spins meanwhile */
  else if (st.ok () && !ordered)
    st = device.sync ();
  gst_buffer_unmap (outbuf, &out_map);
  const gboolean unmapped = input.unmap (GST_ELEMENT (self), device, &frame, FALSE);

  if (!st.ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Tensorize failed"), ("%s", st.message ().c_str ()));
    return GST_FLOW_ERROR;
  }
  if (!unmapped)
    return GST_FLOW_ERROR;
  gst_cuda_prep_buffer_add_batch_transform_meta (outbuf, state.slot_metas.data (), batch);
  return GST_FLOW_OK;
}

/* roi-meta: this frame's regions from its GstVideoRegionOfInterestMeta, filtered by roi-type and
 * size (the region's own width and height, before the margin). The vectors keep their capacity
 * from frame to frame. Regions skipped are warned about once per stream. */
static Status
collect_meta_regions (GstCudaTensorize * self, GstBuffer * inbuf)
{
  TensorizeState &state = self->impl->state;
  TensorizePlans &p = state.plans;
  const TensorizeSettings &s = state.built_from;
  p.regions.clear ();
  p.region_index.clear ();
  p.region_id.clear ();
  p.skipped.clear ();
  const GQuark type = s.roi_type.empty ()? 0 : g_quark_from_string (s.roi_type.c_str ());
  gpointer iter = NULL;
  int index = 0;
  while (GstMeta * m = gst_buffer_iterate_meta_filtered (inbuf, &iter,
          GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *) m;
    const int i = index++;
    const int w = (int) MIN (roi->w, (guint) kMaxSourceSide), h = (int) MIN (roi->h, (guint) kMaxSourceSide);
    if ((type && roi->roi_type != type) || w < s.roi_min_size || h < s.roi_min_size ||
        (s.roi_max_size > 0 && (w > s.roi_max_size || h > s.roi_max_size)))
      continue;
    const Rect r {(int) MIN (roi->x, (guint) kMaxSourceSide), (int) MIN (roi->y, (guint) kMaxSourceSide), w, h};
    CUDAPREP_RETURN_IF_ERROR (add_region (&p, r, s.roi_margin, "region meta", i, roi->id));
  }
  if (!p.skipped.empty () && !state.warned_meta_skip) {
    state.warned_meta_skip = TRUE;
    GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("Regions skipped"),
        ("%s (warned once per stream)", p.skipped.c_str ()));
  }
  return Status ();
}

/* One input frame gives ceil(regions / batch-size) tensors (at least one): GstBaseTransform
 * calls this until it returns no buffer, and the frame stays queued until its last tensor. */
static GstFlowReturn
gst_cuda_tensorize_generate_output (GstBaseTransform * trans, GstBuffer ** outbuf)
{
  GstCudaTensorize *self = GST_CUDA_TENSORIZE (trans);
  TensorizeState &state = self->impl->state;
  GstBuffer *inbuf = trans->queued_buf;
  *outbuf = NULL;
  if (!inbuf)
    return GST_FLOW_OK;
  GstFlowReturn ret = GST_FLOW_OK;
  if (!state.have_plan) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("No caps negotiated before the first buffer"), (NULL));
    ret = GST_FLOW_NOT_NEGOTIATED;
  } else if (state.next_region == 0 && !refresh_plan (self)) {
    ret = GST_FLOW_ERROR;       /* settings are taken between frames, never between its tensors */
  } else if (state.next_region == 0 && state.built_from.roi_meta) {
    Status st = collect_meta_regions (self, inbuf);
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Bad region of interest"), ("%s", st.message ().c_str ()));
      ret = GST_FLOW_ERROR;
    }
  }
  if (ret == GST_FLOW_OK)
    ret = GST_BASE_TRANSFORM_GET_CLASS (trans)->prepare_output_buffer (trans, inbuf, outbuf);
  if (ret == GST_FLOW_OK)
    ret = gst_cuda_tensorize_transform (trans, inbuf, *outbuf);
  state.next_region += state.slots.size ();
  if (ret != GST_FLOW_OK && *outbuf) {
    gst_buffer_unref (*outbuf);
    *outbuf = NULL;
  }
  if (ret != GST_FLOW_OK || state.next_region >= state.plans.regions.size ()) {
    trans->queued_buf = NULL;
    gst_buffer_unref (inbuf);
    state.next_region = 0;
  }
  return ret;
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
  state.next_region = 0;
  state.tensorizer.reset ();
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
    case PROP_WIDTH: geometry = s.width != (int) g_value_get_uint (value); s.width = g_value_get_uint (value); break;
    case PROP_HEIGHT: geometry = s.height != (int) g_value_get_uint (value); s.height = g_value_get_uint (value); break;
    case PROP_RESIZE_MODE: s.mode = (ResizeMode) g_value_get_enum (value); break;
    case PROP_ALIGN: s.align = (Align) g_value_get_enum (value); break;
    case PROP_PAD_VALUE: s.pad_value = g_value_get_uint (value); break;
    case PROP_INTERPOLATION: s.interpolation = (Interpolation) g_value_get_enum (value); break;
    case PROP_CHANNEL_ORDER: s.channel_order = (ChannelOrder) g_value_get_enum (value); break;
    case PROP_SCALE: s.scale = g_value_get_double (value); break;
    case PROP_MEAN: s.mean = gst_cuda_prep_vector_from_array<double> (value); break;
    case PROP_STD: s.std = gst_cuda_prep_vector_from_array<double> (value); break;
    case PROP_LAYOUT: geometry = s.layout != (Layout) g_value_get_enum (value); s.layout = (Layout) g_value_get_enum (value); break;
    case PROP_DTYPE: geometry = s.dtype != (DType) g_value_get_enum (value); s.dtype = (DType) g_value_get_enum (value); break;
    case PROP_ROI: s.roi = gst_cuda_prep_vector_from_array<int> (value); break;
    case PROP_YUV_MATRIX: s.yuv_matrix = g_value_get_enum (value); break;
    case PROP_YUV_RANGE: s.yuv_range = g_value_get_enum (value); break;
    case PROP_CHROMA_SITE: s.chroma_site = g_value_get_enum (value); break;
    case PROP_ROIS: s.rois = gst_cuda_prep_rects_from_array (value); break;
    case PROP_BATCH_SIZE: geometry = s.batch_size != g_value_get_int (value); s.batch_size = g_value_get_int (value); break;
    case PROP_ROI_META: s.roi_meta = g_value_get_boolean (value); break;
    case PROP_ROI_TYPE: s.roi_type = g_value_get_string (value) ? g_value_get_string (value) : ""; break;
    case PROP_ROI_MIN_SIZE: s.roi_min_size = g_value_get_int (value); break;
    case PROP_ROI_MAX_SIZE: s.roi_max_size = g_value_get_int (value); break;
    case PROP_ROI_MARGIN: s.roi_margin = g_value_get_double (value); break;
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
    case PROP_CHROMA_SITE: g_value_set_enum (value, s.chroma_site); break;
    case PROP_ROIS: gst_cuda_prep_rects_to_array (s.rois, value); break;
    case PROP_BATCH_SIZE: g_value_set_int (value, s.batch_size); break;
    case PROP_ROI_META: g_value_set_boolean (value, s.roi_meta); break;
    case PROP_ROI_TYPE: g_value_set_string (value, s.roi_type.c_str ()); break;
    case PROP_ROI_MIN_SIZE: g_value_set_int (value, s.roi_min_size); break;
    case PROP_ROI_MAX_SIZE: g_value_set_int (value, s.roi_max_size); break;
    case PROP_ROI_MARGIN: g_value_set_double (value, s.roi_margin); break;
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
  g_object_class_install_property (gobject_class, PROP_CHROMA_SITE, gst_cuda_prep_param_spec_chroma_site ());

  g_object_class_install_property (gobject_class, PROP_ROIS,
      gst_cuda_prep_param_spec_rects ("rois", "Regions of interest",
          "Regions \"<<x, y, width, height>, ...>\" of each frame, one batch slot each (roi is "
          "then not used). Regions partly outside the frame are clipped to it; regions entirely "
          "outside or empty are skipped with a warning. More regions than batch-size give several "
          "tensors for the same frame; the meta's slots say which region each slot came from", rw));
  g_object_class_install_property (gobject_class, PROP_BATCH_SIZE,
      g_param_spec_int ("batch-size", "Batch size",
          "Slots per tensor (the last dimension of the caps, fixed so that caps stay static); "
          "slots without a region hold the pad value and are marked empty in the meta",
          1, kMaxBatchSlots, 1, rw));
  g_object_class_install_property (gobject_class, PROP_ROI_META,
      g_param_spec_boolean ("roi-meta", "Regions from metas",
          "Take the regions from each frame's GstVideoRegionOfInterestMeta (e.g. a detector's "
          "boxes), one slot each, instead of rois / roi; the meta's slots give each one's index and "
          "id. (GstAnalyticsODMtd on GStreamer 1.24+ is not read yet.)", FALSE, rw));
  g_object_class_install_property (gobject_class, PROP_ROI_TYPE,
      g_param_spec_string ("roi-type", "Region type",
          "roi-meta: only regions of this roi-type (e.g. \"car\"); empty (default) = any", "", rw));
  g_object_class_install_property (gobject_class, PROP_ROI_MIN_SIZE,
      g_param_spec_int ("roi-min-size", "Region minimum size",
          "roi-meta: only regions at least this wide and high (before roi-margin)", 0, kMaxSourceSide, 0, rw));
  g_object_class_install_property (gobject_class, PROP_ROI_MAX_SIZE,
      g_param_spec_int ("roi-max-size", "Region maximum size",
          "roi-meta: only regions at most this wide and high (before roi-margin); 0 = no limit", 0,
          kMaxSourceSide, 0, rw));
  g_object_class_install_property (gobject_class, PROP_ROI_MARGIN,
      g_param_spec_double ("roi-margin", "Region margin",
          "Fraction of a region's width / height added on each side (rois and roi-meta), rounded "
          "outward to whole pixels, then clipped to the frame; e.g. 0.1 grows a 100-px box to 120 px",
          0.0, 10.0, 0.0, rw));
  gst_element_class_set_static_metadata (element_class, "CUDA tensorize",
      "Filter/Converter/Video/Scaler/Hardware",
      "Resize (letterbox/stretch/crop), colour-convert, normalise and lay out video frames "
      "as a float tensor in one CUDA kernel (CPU fallback)",
      "gst-cudaprep developers");
  gst_element_class_add_pad_template (element_class, gst_pad_template_new ("sink", GST_PAD_SINK,
          GST_PAD_ALWAYS, gst_cuda_prep_video_template_caps ()));
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_caps);
  trans_class->transform_size = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_size);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_decide_allocation);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_propose_allocation);
  trans_class->transform_meta = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform_meta);
  /* generate_output calls transform once per tensor; transform stays set all the same, since a
   * GstBaseTransform without transform or transform_ip is taken for a passthrough element. */
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_transform);
  trans_class->generate_output = GST_DEBUG_FUNCPTR (gst_cuda_tensorize_generate_output);
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

  GST_DEBUG_CATEGORY_INIT (gst_cuda_tensorize_debug, "cudatensorize", 0, "cudatensorize element");
}

static void
gst_cuda_tensorize_init (GstCudaTensorize * self)
{
  self->impl = new GstCudaTensorizeImpl ();
}
