/* Tensor properties shared by cudatensorize and cudatensorbatch, and settings -> kernel specs. */
#include "tensorize_settings.h"

#include <cmath>
#include <sstream>

#include "cudaprep_device.h"
#include "enum_types.h"
#include "pixel_format.h"
#include "property_arrays.h"

using namespace cudaprep;

/* ---- enum types ------------------------------------------------------------------------ */

#define DEFINE_ENUM_TYPE(func, name, ...)                              \
  static GType func(void) {                                            \
    static GType type = 0;                                             \
    static const GEnumValue values[] = {__VA_ARGS__, {0, NULL, NULL}}; \
    return gst_cuda_prep_register_enum(&type, name, values);           \
  }

DEFINE_ENUM_TYPE(resize_mode_get_type, "GstCudaPrepResizeMode",
                 {(gint)ResizeMode::Letterbox, "Keep aspect ratio, pad to the tensor size", "letterbox"},
                 {(gint)ResizeMode::Stretch, "Scale each axis to the tensor size", "stretch"},
                 {(gint)ResizeMode::Crop, "Keep aspect ratio, cover the tensor, crop the overflow", "crop"},
                 {(gint)ResizeMode::Ultralytics,
                  "Ultralytics LetterBox: resize to the rounded unpadded size, pad round(d-0.1)/round(d+0.1)",
                  "ultralytics"})
DEFINE_ENUM_TYPE(align_get_type, "GstCudaPrepAlign", {(gint)Align::Center, "Centre the image in the tensor", "center"},
                 {(gint)Align::TopLeft, "Place the image at the top-left corner", "top-left"})
DEFINE_ENUM_TYPE(interpolation_get_type, "GstCudaPrepInterpolation",
                 {(gint)Interpolation::Bilinear, "Bilinear (cv::resize INTER_LINEAR pixel-centre convention)",
                  "bilinear"},
                 {(gint)Interpolation::Nearest, "Nearest pixel centre (cv::INTER_NEAREST_EXACT)", "nearest"})
DEFINE_ENUM_TYPE(channel_order_get_type, "GstCudaPrepChannelOrder", {(gint)ChannelOrder::RGB, "R, G, B", "rgb"},
                 {(gint)ChannelOrder::BGR, "B, G, R", "bgr"})
DEFINE_ENUM_TYPE(layout_get_type, "GstCudaPrepLayout",
                 {(gint)Layout::NCHW, "Planar: all of channel 0, then 1, then 2 (dimensions W:H:C:B, C = channels)",
                  "nchw"},
                 {(gint)Layout::NHWC, "Interleaved channels (dimensions C:W:H:B)", "nhwc"})
/* "dtype": one value per row of kDTypes (dtypes.h), its name the caps' and GstTensorMeta's. */
static GType dtype_get_type(void) {
  static GType type = 0;
  static const GEnumValue *values = [] {
    static GEnumValue v[kDTypeCount + 1];
    for (int i = 0; i < kDTypeCount; i++)
      v[i] = GEnumValue{(gint)kDTypes[i].dtype, kDTypes[i].description, kDTypes[i].name};
    v[kDTypeCount] = GEnumValue{0, NULL, NULL};
    return v;
  }();
  return gst_cuda_prep_register_enum(&type, "GstCudaPrepDType", values);
}
DEFINE_ENUM_TYPE(yuv_matrix_get_type, "GstCudaPrepYuvMatrix",
                 {GST_CUDA_PREP_YUV_MATRIX_AUTO, "From the caps colorimetry", "auto"},
                 {(gint)YuvMatrix::BT601, "ITU-R BT.601", "bt601"}, {(gint)YuvMatrix::BT709, "ITU-R BT.709", "bt709"},
                 {(gint)YuvMatrix::BT2020, "ITU-R BT.2020", "bt2020"})
DEFINE_ENUM_TYPE(yuv_range_get_type, "GstCudaPrepYuvRange",
                 {GST_CUDA_PREP_YUV_RANGE_AUTO, "From the caps colorimetry", "auto"},
                 {GST_CUDA_PREP_YUV_RANGE_LIMITED, "Limited (16-235 luma, 16-240 chroma)", "limited"},
                 {GST_CUDA_PREP_YUV_RANGE_FULL, "Full (0-255)", "full"})

/* ---- properties ------------------------------------------------------------------------ */

void gst_cuda_prep_tensor_properties_install(GObjectClass *klass, guint first_id) {
  const GParamFlags rw = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const TensorizeSettings d;
  GParamSpec *specs[TENSOR_PROP_COUNT];

  /* The shape properties: never set, they follow downstream's caps (tensor_caps.h). */
  specs[TENSOR_PROP_WIDTH] = g_param_spec_uint("width", "Width",
                                               "Tensor width in pixels. Never "
                                               "set, it is taken from downstream's caps where they fix it (else 640)",
                                               1, kMaxTensorSide, d.width, rw);
  specs[TENSOR_PROP_HEIGHT] =
      g_param_spec_uint("height", "Height",
                        "Tensor height in pixels. "
                        "Never set, it is taken from downstream's caps where they fix it (else 640)",
                        1, kMaxTensorSide, d.height, rw);
  specs[TENSOR_PROP_RESIZE_MODE] =
      g_param_spec_enum("resize-mode", "Resize mode", "How the frame is fitted into the tensor", resize_mode_get_type(),
                        (gint)d.mode, rw);
  specs[TENSOR_PROP_ALIGN] = g_param_spec_enum("align", "Align", "Placement of a letterboxed or cropped image",
                                               align_get_type(), (gint)d.align, rw);
  specs[TENSOR_PROP_PAD_VALUE] = g_param_spec_uint(
      "pad-value", "Pad value", "Value of the padding in pixel space (0-255), normalised like the image", 0, 255,
      d.pad_value, rw);
  specs[TENSOR_PROP_INTERPOLATION] = g_param_spec_enum("interpolation", "Interpolation", "Resampling filter",
                                                       interpolation_get_type(), (gint)d.interpolation, rw);
  specs[TENSOR_PROP_CHANNEL_ORDER] =
      g_param_spec_enum("channel-order", "Channel order", "Order of the colour channels in the tensor",
                        channel_order_get_type(), (gint)d.channel_order, rw);
  specs[TENSOR_PROP_SCALE] =
      g_param_spec_double("scale", "Scale",
                          "out = (pixel * scale - mean) / std. Unset: by dtype, 1/255 for float32 / float16, 1 for "
                          "uint8 / int8 (reads back the value for the dtype property)",
                          -G_MAXDOUBLE, G_MAXDOUBLE, d.scale, rw);
  specs[TENSOR_PROP_MEAN] = gst_cuda_prep_param_spec_doubles(
      "mean", "Mean",
      "Per output channel mean, 1 or 3 values, e.g. \"<0.485, 0.456, 0.406>\" (channels=1: the "
      "first). Unset: by dtype, <0, 0, 0>, or <128, 128, 128> for int8",
      rw);
  specs[TENSOR_PROP_STD] =
      gst_cuda_prep_param_spec_doubles("std", "Std",
                                       "Per output channel standard deviation, 1 or 3 non-zero values, e.g. "
                                       "\"<0.229, 0.224, 0.225>\" (channels=1: the first). Unset: <1, 1, 1>",
                                       rw);
  specs[TENSOR_PROP_LAYOUT] = g_param_spec_enum("layout", "Layout",
                                                "Tensor memory layout. "
                                                "Never set, it is taken from downstream's caps where they fix it",
                                                layout_get_type(), (gint)d.layout, rw);
  specs[TENSOR_PROP_DTYPE] =
      g_param_spec_enum("dtype", "Data type",
                        "Tensor element type; integer types take the normalised value rounded to nearest (ties to "
                        "even) and saturated to the type's range. scale, mean and std left unset follow it: "
                        "float32 / float16 pixel / 255, uint8 the pixel, int8 pixel - 128. Never set, it is taken "
                        "from downstream's caps where they fix it",
                        dtype_get_type(), (gint)d.dtype, rw);
  specs[TENSOR_PROP_YUV_MATRIX] =
      g_param_spec_enum("yuv-matrix", "YUV matrix", "YUV->RGB matrix; auto takes it from the caps colorimetry",
                        yuv_matrix_get_type(), GST_CUDA_PREP_YUV_MATRIX_AUTO, rw);
  specs[TENSOR_PROP_YUV_RANGE] =
      g_param_spec_enum("yuv-range", "YUV range", "YUV quantisation range; auto takes it from the caps colorimetry",
                        yuv_range_get_type(), GST_CUDA_PREP_YUV_RANGE_AUTO, rw);

  specs[TENSOR_PROP_CHROMA_SITE] = gst_cuda_prep_param_spec_chroma_site();
  /* 2 is in the range and reaches the plan's check, which refuses it with one clear error. */
  specs[TENSOR_PROP_CHANNELS] =
      g_param_spec_uint("channels", "Channels",
                        "3: colour in channel-order; 1: gray, BT.601 luma 0.299 R + 0.587 G + 0.114 B of RGB input "
                        "(as cv::cvtColor RGB2GRAY), the range-expanded Y of YUV input, GRAY8 as it is; "
                        "channel-order is then ignored, and nchw and nhwc are the same bytes. 2 is refused at start. "
                        "Never set, it is taken from downstream's caps where they fix it",
                        1, 3, d.channels, rw);

  specs[TENSOR_PROP_GPU_WAIT] =
      g_param_spec_enum("gpu-wait", "GPU wait",
                        "How the streaming thread waits for a system-memory tensor's download, the one wait of "
                        "the GPU path that lasts (a CUDA tensor is not waited for on GStreamer 1.24+): poll "
                        "(default: sleeps through most of the download's usual time, then checks every few "
                        "microseconds; about spin's latency for part of its CPU), blocking (the least CPU; the "
                        "driver's wake-up can come 100 us late), spin (lowest latency, a CPU core busy for the "
                        "whole download) or stream-sync (cudaStreamSynchronize)",
                        GST_TYPE_CUDA_PREP_GPU_WAIT, (gint)d.gpu_wait, rw);

  const GParamFlags ready = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  specs[TENSOR_PROP_MODEL_INFO] = g_param_spec_string(
      "model-info", "Model info",
      "A .modelinfo file (the model's own description, as onnxinference reads it), read at start: its input "
      "tensor's dims (in dims-order), type and ranges set width, height, layout, channels, dtype, the batch size "
      "and the normalisation (ranges min,max: out = pixel * (max - min) / 255 + min, i.e. scale = 1/255, "
      "mean = -min / (max - min), std = 1 / (max - min)). A property set to another value is an error at start",
      NULL, ready);
  specs[TENSOR_PROP_MODEL_INPUT] = g_param_spec_string(
      "model-input", "Model input",
      "Which input tensor of model-info to make, by its id (or section name), where the file describes several "
      "(NULL: the one with dir=input)",
      NULL, ready);

  for (guint i = 0; i < TENSOR_PROP_COUNT; i++) g_object_class_install_property(klass, first_id + i, specs[i]);
}

GParamSpec *gst_cuda_prep_param_spec_roi(const gchar *blurb) {
  return gst_cuda_prep_param_spec_ints(
      "roi", "Region of interest", blurb,
      (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
}

/* Assigns @v to @field; TRUE when the value changed. */
template <typename T>
static gboolean assign(T &field, T v) {
  const gboolean changed = !(field == v);
  field = std::move(v);
  return changed;
}

/* The model-info field a property sets (0: none): setting it makes the value the user's. */
static unsigned model_field_of(guint prop) {
  switch (prop) {
    case TENSOR_PROP_WIDTH: return MODEL_FIELD_WIDTH;
    case TENSOR_PROP_HEIGHT: return MODEL_FIELD_HEIGHT;
    case TENSOR_PROP_LAYOUT: return MODEL_FIELD_LAYOUT;
    case TENSOR_PROP_DTYPE: return MODEL_FIELD_DTYPE;
    case TENSOR_PROP_CHANNELS: return MODEL_FIELD_CHANNELS;
    case TENSOR_PROP_SCALE:
    case TENSOR_PROP_MEAN:
    case TENSOR_PROP_STD: return MODEL_FIELD_NORMALISATION;
    default: return 0;
  }
}

static std::string string_value(const GValue *value) {
  const gchar *v = g_value_get_string(value);
  return v ? v : "";
}

gboolean gst_cuda_prep_tensor_property_set(TensorizeSettings &s, guint prop, const GValue *value,
                                           gboolean *shape_changed) {
  *shape_changed = FALSE;
  s.model_set &= ~model_field_of(prop);
  switch (prop) {
    /* Setting a shape property, even to its current value, takes it out of negotiation. */
    case TENSOR_PROP_WIDTH:
      *shape_changed = assign(s.width, (int)g_value_get_uint(value)) | assign(s.width_set, true);
      break;
    case TENSOR_PROP_HEIGHT:
      *shape_changed = assign(s.height, (int)g_value_get_uint(value)) | assign(s.height_set, true);
      break;
    case TENSOR_PROP_RESIZE_MODE: s.mode = (ResizeMode)g_value_get_enum(value); break;
    case TENSOR_PROP_ALIGN: s.align = (Align)g_value_get_enum(value); break;
    case TENSOR_PROP_PAD_VALUE: s.pad_value = g_value_get_uint(value); break;
    case TENSOR_PROP_INTERPOLATION: s.interpolation = (Interpolation)g_value_get_enum(value); break;
    case TENSOR_PROP_CHANNEL_ORDER: s.channel_order = (ChannelOrder)g_value_get_enum(value); break;
    case TENSOR_PROP_SCALE:
      s.scale = g_value_get_double(value);
      s.scale_set = true;
      break;
    case TENSOR_PROP_MEAN:
      s.mean = gst_cuda_prep_vector_from_array<double>(value);
      s.mean_set = true;
      break;
    case TENSOR_PROP_STD:
      s.std = gst_cuda_prep_vector_from_array<double>(value);
      s.std_set = true;
      break;
    case TENSOR_PROP_LAYOUT:
      *shape_changed = assign(s.layout, (Layout)g_value_get_enum(value)) | assign(s.layout_set, true);
      break;
    case TENSOR_PROP_DTYPE:
      *shape_changed = assign(s.dtype, (DType)g_value_get_enum(value)) | assign(s.dtype_set, true);
      break;
    case TENSOR_PROP_YUV_MATRIX: s.yuv_matrix = g_value_get_enum(value); break;
    case TENSOR_PROP_YUV_RANGE: s.yuv_range = g_value_get_enum(value); break;
    case TENSOR_PROP_CHROMA_SITE: s.chroma_site = g_value_get_enum(value); break;
    case TENSOR_PROP_CHANNELS:
      *shape_changed = assign(s.channels, (int)g_value_get_uint(value)) | assign(s.channels_set, true);
      break;
    case TENSOR_PROP_GPU_WAIT: s.gpu_wait = (GpuWait)g_value_get_enum(value); break;
    case TENSOR_PROP_MODEL_INFO: s.model_info = string_value(value); break;
    case TENSOR_PROP_MODEL_INPUT: s.model_input = string_value(value); break;
    default: return FALSE;
  }
  return TRUE;
}

/* scale, mean and std as the tensor uses them: the user's where set, else the dtype's default. */
static void effective_normalisation(const TensorizeSettings &s, double *scale, std::vector<double> *mean,
                                    std::vector<double> *std) {
  const Normalisation d = default_normalisation(s.dtype);
  *scale = s.scale_set ? s.scale : d.scale;
  *mean = s.mean_set ? s.mean : std::vector<double>(d.mean, d.mean + 3);
  *std = s.std_set ? s.std : std::vector<double>(d.std, d.std + 3);
}

gboolean gst_cuda_prep_tensor_property_get(const TensorizeSettings &s, guint prop, GValue *value) {
  if (prop == TENSOR_PROP_SCALE || prop == TENSOR_PROP_MEAN || prop == TENSOR_PROP_STD) {
    double scale;
    std::vector<double> mean, std;
    effective_normalisation(s, &scale, &mean, &std);
    if (prop == TENSOR_PROP_SCALE)
      g_value_set_double(value, scale);
    else
      gst_cuda_prep_vector_to_array(prop == TENSOR_PROP_MEAN ? mean : std, value);
    return TRUE;
  }
  switch (prop) {
    case TENSOR_PROP_WIDTH: g_value_set_uint(value, s.width); break;
    case TENSOR_PROP_HEIGHT: g_value_set_uint(value, s.height); break;
    case TENSOR_PROP_RESIZE_MODE: g_value_set_enum(value, (gint)s.mode); break;
    case TENSOR_PROP_ALIGN: g_value_set_enum(value, (gint)s.align); break;
    case TENSOR_PROP_PAD_VALUE: g_value_set_uint(value, s.pad_value); break;
    case TENSOR_PROP_INTERPOLATION: g_value_set_enum(value, (gint)s.interpolation); break;
    case TENSOR_PROP_CHANNEL_ORDER: g_value_set_enum(value, (gint)s.channel_order); break;
    case TENSOR_PROP_LAYOUT: g_value_set_enum(value, (gint)s.layout); break;
    case TENSOR_PROP_DTYPE: g_value_set_enum(value, (gint)s.dtype); break;
    case TENSOR_PROP_YUV_MATRIX: g_value_set_enum(value, s.yuv_matrix); break;
    case TENSOR_PROP_YUV_RANGE: g_value_set_enum(value, s.yuv_range); break;
    case TENSOR_PROP_CHROMA_SITE: g_value_set_enum(value, s.chroma_site); break;
    case TENSOR_PROP_CHANNELS: g_value_set_uint(value, s.channels); break;
    case TENSOR_PROP_GPU_WAIT: g_value_set_enum(value, (gint)s.gpu_wait); break;
    case TENSOR_PROP_MODEL_INFO: g_value_set_string(value, s.model_info.empty() ? NULL : s.model_info.c_str()); break;
    case TENSOR_PROP_MODEL_INPUT:
      g_value_set_string(value, s.model_input.empty() ? NULL : s.model_input.c_str());
      break;
    default: return FALSE;
  }
  return TRUE;
}

/* ---- settings -> kernel specs ---------------------------------------------------------- */

static Status read_three(const std::vector<double> &in, const char *name, double out[3]) {
  if (in.size() == 1) {
    out[0] = out[1] = out[2] = in[0];
    return Status();
  }
  if (in.size() != 3)
    return Status::error(std::string(name) + " needs 1 or 3 values (one per output channel), got " +
                         std::to_string(in.size()));
  for (int i = 0; i < 3; i++) out[i] = in[i];
  return Status();
}

Status gst_cuda_prep_output_spec(const TensorizeSettings &s, TensorOutputSpec *spec) {
  std::vector<double> mean, std;
  effective_normalisation(s, &spec->scale, &mean, &std);
  CUDAPREP_RETURN_IF_ERROR(read_three(mean, "mean", spec->mean));
  CUDAPREP_RETURN_IF_ERROR(read_three(std, "std", spec->std));
  spec->dst_width = s.width;
  spec->dst_height = s.height;
  spec->mode = s.mode;
  spec->align = s.align;
  spec->pad_value = s.pad_value;
  spec->interpolation = s.interpolation;
  spec->channel_order = s.channel_order;
  spec->layout = s.layout;
  spec->dtype = s.dtype;
  spec->channels = s.channels;
  return Status();
}

static std::string rect_text(const Region64 &r) {
  return "<" + std::to_string(r.x) + "," + std::to_string(r.y) + "," + std::to_string(r.w) + "," + std::to_string(r.h) +
         ">";
}

std::string gst_cuda_prep_frame_desc(const GstVideoInfo *info) {
  if (!info) return std::string();
  return " (" + std::to_string(GST_VIDEO_INFO_WIDTH(info)) + "x" + std::to_string(GST_VIDEO_INFO_HEIGHT(info)) + ")";
}

Region64 gst_cuda_prep_grow_region(const Rect &r, double margin) {
  Region64 g{r.x, r.y, r.w, r.h};
  if (margin <= 0.0 || r.empty()) return g;
  /* |x|, |w| < 2^31 and margin <= 10: every value here is an exact double and fits 64 bits. */
  const double mx = margin * r.w, my = margin * r.h;
  const double x0 = std::floor(r.x - mx), y0 = std::floor(r.y - my);
  const double x1 = std::ceil((double)r.x + r.w + mx), y1 = std::ceil((double)r.y + r.h + my);
  return Region64{(int64_t)x0, (int64_t)y0, (int64_t)(x1 - x0), (int64_t)(y1 - y0)};
}

Status gst_cuda_prep_clip_rect(const Region64 &r, int frame_w, int frame_h, const std::string &frame_desc, Rect *out) {
  if (r.w <= 0 || r.h <= 0)
    return Status::error("roi width and height must be positive, got " + std::to_string(r.w) + "x" +
                         std::to_string(r.h));
  const int64_t x0 = MAX(r.x, (int64_t)0), y0 = MAX(r.y, (int64_t)0);
  const int64_t x1 = MIN(r.x + r.w, (int64_t)frame_w);
  const int64_t y1 = MIN(r.y + r.h, (int64_t)frame_h);
  if (x1 <= x0 || y1 <= y0) return Status::error("roi " + rect_text(r) + " is entirely outside the frame" + frame_desc);
  *out = Rect{(int)x0, (int)y0, (int)(x1 - x0), (int)(y1 - y0)};
  return Status();
}

/* The roi property as the rectangle of a frame_w x frame_h frame it selects: clipped to the
 * frame (documented); an empty result is an error. */
static Status resolve_roi(const std::vector<int> &roi, int frame_w, int frame_h, const std::string &frame_desc,
                          Rect *out) {
  if (roi.empty()) {
    *out = Rect{0, 0, frame_w, frame_h};
    return Status();
  }
  if (roi.size() != 4)
    return Status::error("roi needs 4 values <x, y, width, height>, got " + std::to_string(roi.size()));
  return gst_cuda_prep_clip_rect(Region64{roi[0], roi[1], roi[2], roi[3]}, frame_w, frame_h, frame_desc, out);
}

Status gst_cuda_prep_slot_source(const TensorizeSettings &s, const std::vector<int> &roi, const GstVideoInfo *info,
                                 SlotSourceSpec *source) {
  source->format = PixelFormat::BGR;
  source->src_width = source->src_height = kMaxSourceSide;
  if (info) {
    gst_cuda_prep_pixel_format_from_video(GST_VIDEO_INFO_FORMAT(info), &source->format);
    source->src_width = GST_VIDEO_INFO_WIDTH(info);
    source->src_height = GST_VIDEO_INFO_HEIGHT(info);
  }
  CUDAPREP_RETURN_IF_ERROR(
      resolve_roi(roi, source->src_width, source->src_height, gst_cuda_prep_frame_desc(info), &source->roi));

  if (s.yuv_matrix != GST_CUDA_PREP_YUV_MATRIX_AUTO) {
    source->yuv_matrix = (YuvMatrix)s.yuv_matrix;
  } else if (info) {
    switch (info->colorimetry.matrix) {
      case GST_VIDEO_COLOR_MATRIX_BT709: source->yuv_matrix = YuvMatrix::BT709; break;
      case GST_VIDEO_COLOR_MATRIX_BT2020: source->yuv_matrix = YuvMatrix::BT2020; break;
      default:
        /* BT.601; FCC, SMPTE 240M and unknown too: the closest of those we implement. */
        source->yuv_matrix = YuvMatrix::BT601;
        break;
    }
  }
  if (s.yuv_range != GST_CUDA_PREP_YUV_RANGE_AUTO)
    source->yuv_full_range = s.yuv_range == GST_CUDA_PREP_YUV_RANGE_FULL;
  else if (info)
    source->yuv_full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  gst_cuda_prep_chroma_siting(s.chroma_site, info, source);
  return Status();
}

void gst_cuda_prep_post_settings_error(GstElement *element, std::string &posted, const Status &st,
                                       const char *context) {
  if (posted == st.message()) return;
  posted = st.message();
  GstElementFactory *factory = gst_element_get_factory(element);
  GST_ELEMENT_ERROR(
      element, LIBRARY, SETTINGS,
      ("Invalid %s settings: %s", factory ? GST_OBJECT_NAME(factory) : GST_ELEMENT_NAME(element), st.message().c_str()),
      ("%s", context));
}

/* ---- model-info ------------------------------------------------------------------------ */

Status gst_cuda_prep_model_info_load(const TensorizeSettings &s, ModelInput *m, bool *have) {
  *have = !s.model_info.empty();
  if (!*have) return Status();
  const bool user_layout = s.layout_set && !(s.model_set & MODEL_FIELD_LAYOUT);
  return gst_cuda_prep_model_info_read(s.model_info, s.model_input, user_layout ? s.layout : Layout::NCHW, m);
}

static std::string num(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

static std::string nums(const std::vector<double> &v) {
  std::string out;
  for (double x : v) out += (out.empty() ? "" : ",") + num(x);
  return "<" + out + ">";
}

static const char *layout_name(Layout l) { return l == Layout::NHWC ? "nhwc" : "nchw"; }

/* value[i] of a 1- or 3-value property; NaN when it has another count (refused later). */
static double channel_value(const std::vector<double> &v, int i) {
  if (v.size() == 1) return v[0];
  if (v.size() == 3) return v[i];
  return NAN;
}

static bool close_to(double a, double b) {
  return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::max(std::fabs(a), std::fabs(b)));
}

Status gst_cuda_prep_model_info_apply(TensorizeSettings &s, ModelBatch &batch, const ModelInput *m) {
  TensorizeSettings t = s;
  ModelBatch b = batch;
  const TensorizeSettings d;
  /* What the last start took from a file goes back to the defaults first. */
  if (t.model_set & MODEL_FIELD_WIDTH) t.width = d.width, t.width_set = false;
  if (t.model_set & MODEL_FIELD_HEIGHT) t.height = d.height, t.height_set = false;
  if (t.model_set & MODEL_FIELD_LAYOUT) t.layout = d.layout, t.layout_set = false;
  if (t.model_set & MODEL_FIELD_DTYPE) t.dtype = d.dtype, t.dtype_set = false;
  if (t.model_set & MODEL_FIELD_CHANNELS) t.channels = d.channels, t.channels_set = false;
  if (t.model_set & MODEL_FIELD_NORMALISATION) {
    t.scale = d.scale, t.mean = d.mean, t.std = d.std;
    t.scale_set = t.mean_set = t.std_set = false;
  }
  if (t.model_set & MODEL_FIELD_BATCH) b.value = b.unset_value, b.set = false;
  t.model_set = 0;
  t.model_group_id = m ? m->group_id : std::string();

  if (m) {
    const std::string source = "model-info " + m->file + ": [" + m->section + "] ";
    const std::string dims = source + "dims=" + m->dims_text + (m->col_major ? " (col-major)" : "");
    auto contradiction = [](const std::string &property, const std::string &file) {
      return Status::error(property + " contradicts " + file);
    };
    /* Each value of the file: a property the user set must agree; else the file's is taken. */
    auto take_int = [&](int file_value, int &value, bool &set, unsigned field, const char *name) {
      if (file_value <= 0) return Status(); /* -1: the file leaves it open */
      if (set && value != file_value)
        return contradiction(std::string(name) + "=" + std::to_string(value),
                             dims + " (" + name + " " + std::to_string(file_value) + ")");
      if (!set) value = file_value, set = true, t.model_set |= field;
      return Status();
    };
    CUDAPREP_RETURN_IF_ERROR(take_int(m->width, t.width, t.width_set, MODEL_FIELD_WIDTH, "width"));
    CUDAPREP_RETURN_IF_ERROR(take_int(m->height, t.height, t.height_set, MODEL_FIELD_HEIGHT, "height"));
    CUDAPREP_RETURN_IF_ERROR(take_int(m->channels, t.channels, t.channels_set, MODEL_FIELD_CHANNELS, "channels"));
    CUDAPREP_RETURN_IF_ERROR(take_int(m->batch, b.value, b.set, MODEL_FIELD_BATCH, "batch-size"));
    if (t.layout_set && t.layout != m->layout)
      return contradiction(std::string("layout=") + layout_name(t.layout), dims + " (" + layout_name(m->layout) + ")");
    if (!t.layout_set) t.layout = m->layout, t.layout_set = true, t.model_set |= MODEL_FIELD_LAYOUT;
    if (t.dtype_set && t.dtype != m->dtype)
      return contradiction(std::string("dtype=") + dtype_info(t.dtype).name,
                           source + "type=" + dtype_info(m->dtype).name);
    if (!t.dtype_set) t.dtype = m->dtype, t.dtype_set = true, t.model_set |= MODEL_FIELD_DTYPE;

    double scale, mean[3], std[3];
    if (gst_cuda_prep_model_info_normalisation(*m, &scale, mean, std)) {
      if (t.scale_set || t.mean_set || t.std_set) {
        /* The user's normalisation (the dtype's default for what was left unset) must be the
         * same map, pixel * mul + add, for every channel the tensor has. */
        double us;
        std::vector<double> um, ud;
        effective_normalisation(t, &us, &um, &ud);
        bool same = true;
        for (int c = 0; c < t.channels; c++) {
          const double u_mul = us / channel_value(ud, c), u_add = -channel_value(um, c) / channel_value(ud, c);
          const double f_mul = scale / std[c], f_add = -mean[c] / std[c];
          same = same && close_to(u_mul, f_mul) && close_to(u_add, f_add);
        }
        if (!same) {
          std::string set;
          if (t.scale_set) set += "scale=" + num(t.scale);
          if (t.mean_set) set += (set.empty() ? "" : ", ") + std::string("mean=") + nums(t.mean);
          if (t.std_set) set += (set.empty() ? "" : ", ") + std::string("std=") + nums(t.std);
          return contradiction(set, source + "ranges=" + m->ranges_text + " (out = pixel * (max - min) / 255 + min)");
        }
      } else {
        t.scale = scale;
        t.mean.assign(mean, mean + 3);
        t.std.assign(std, std + 3);
        t.scale_set = t.mean_set = t.std_set = true;
        t.model_set |= MODEL_FIELD_NORMALISATION;
      }
    }
  }
  s = std::move(t);
  batch = b;
  return Status();
}
