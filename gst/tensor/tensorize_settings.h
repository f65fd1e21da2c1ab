/* The tensor settings of cudatensorize and cudatensorbatch: the same properties, the same enum
 * types and the same translation into the kernels' output spec and slot sources, so that a slot
 * of a batch is made exactly as cudatensorize makes that frame alone.
 *
 * An element keeps a TensorizeSettings behind its object lock, installs the properties with
 * gst_cuda_prep_tensor_properties_install() at ids first_id + TensorProperty, forwards its
 * set/get_property to the functions below, and builds its plans from a snapshot. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>
#include <vector>

#include "chroma_site.h"
#include "gpu_wait.h"
#include "model_info.h"
#include "tensor_caps.h"
#include "tensorize.h"

enum { GST_CUDA_PREP_YUV_MATRIX_AUTO = -1 };
enum { GST_CUDA_PREP_YUV_RANGE_AUTO, GST_CUDA_PREP_YUV_RANGE_LIMITED, GST_CUDA_PREP_YUV_RANGE_FULL };

/* The tensor properties. Their defaults are the kernels' (cudaprep::TensorOutputSpec): the one
 * declaration that the param specs, the plans and the negotiation all read. */
struct TensorizeSettings {
  static constexpr cudaprep::TensorOutputSpec kDefaults{};

  int width = kDefaults.dst_width, height = kDefaults.dst_height;
  cudaprep::ResizeMode mode = kDefaults.mode;
  cudaprep::Align align = kDefaults.align;
  int pad_value = kDefaults.pad_value;
  cudaprep::Interpolation interpolation = kDefaults.interpolation;
  cudaprep::ChannelOrder channel_order = kDefaults.channel_order;
  double scale = kDefaults.scale;
  std::vector<double> mean{kDefaults.mean, kDefaults.mean + 3};
  std::vector<double> std{kDefaults.std, kDefaults.std + 3};
  cudaprep::Layout layout = kDefaults.layout;
  cudaprep::DType dtype = kDefaults.dtype;
  int channels = kDefaults.channels; /* 3: colour; 1: gray (others are refused at start) */
  int yuv_matrix = GST_CUDA_PREP_YUV_MATRIX_AUTO;
  int yuv_range = GST_CUDA_PREP_YUV_RANGE_AUTO;
  int chroma_site = GST_CUDA_PREP_CHROMA_SITE_AUTO;
  /* How the thread waits for a system-memory tensor's download (the GPU path's one long wait). */
  cudaprep::GpuWait gpu_wait = cudaprep::GpuWait::Poll;
  /* Shape properties the user set; cudatensorize takes the others from downstream's caps
   * (tensor_caps.h). */
  bool width_set = false, height_set = false, layout_set = false, dtype_set = false;
  bool channels_set = false;
  /* Normalisation the user set; the others are default_normalisation (dtype) of the dtype the
   * tensor has (the property's, or downstream's where it was never set). */
  bool scale_set = false, mean_set = false, std_set = false;
  /* model-info and model-input (read at start, model_info.h), and which of the values above the
   * file set there (ModelField bits; their *_set flags are then true too): the next start
   * takes them back before it reads the file again, and a property the user sets clears its bit. */
  std::string model_info, model_input;
  unsigned model_set = 0;
  std::string model_group_id; /* the file's group-id, set at start ("" without one) */

  /* The shape properties and which of them were set, for negotiation with downstream. */
  TensorShapeSettings shape_settings(int batch) const {
    TensorShapeSettings t;
    t.value = TensorShape{width, height, layout, dtype, channels, batch};
    t.width_set = width_set;
    t.height_set = height_set;
    t.layout_set = layout_set;
    t.dtype_set = dtype_set;
    t.channels_set = channels_set;
    return t;
  }
  /* These settings with a negotiated shape in place of the properties' values. */
  TensorizeSettings with_shape(const TensorShape &shape) const {
    TensorizeSettings s = *this;
    s.width = shape.width;
    s.height = shape.height;
    s.layout = shape.layout;
    s.dtype = shape.dtype;
    s.channels = shape.channels;
    return s;
  }
  /* What the output caps say: a change renegotiates. */
  bool same_shape(const TensorizeSettings &o) const {
    return width == o.width && height == o.height && layout == o.layout && dtype == o.dtype && channels == o.channels &&
           width_set == o.width_set && height_set == o.height_set && layout_set == o.layout_set &&
           dtype_set == o.dtype_set && channels_set == o.channels_set;
  }
  bool operator==(const TensorizeSettings &o) const {
    return same_shape(o) && mode == o.mode && align == o.align && pad_value == o.pad_value &&
           interpolation == o.interpolation && channel_order == o.channel_order && scale == o.scale && mean == o.mean &&
           std == o.std && scale_set == o.scale_set && mean_set == o.mean_set && std_set == o.std_set &&
           yuv_matrix == o.yuv_matrix && yuv_range == o.yuv_range && chroma_site == o.chroma_site &&
           gpu_wait == o.gpu_wait && model_info == o.model_info && model_input == o.model_input &&
           model_set == o.model_set && model_group_id == o.model_group_id;
  }
  bool operator!=(const TensorizeSettings &o) const { return !(*this == o); }
};

/* Property ids relative to the first_id an element installs them at. */
enum TensorProperty {
  TENSOR_PROP_WIDTH,
  TENSOR_PROP_HEIGHT,
  TENSOR_PROP_RESIZE_MODE,
  TENSOR_PROP_ALIGN,
  TENSOR_PROP_PAD_VALUE,
  TENSOR_PROP_INTERPOLATION,
  TENSOR_PROP_CHANNEL_ORDER,
  TENSOR_PROP_SCALE,
  TENSOR_PROP_MEAN,
  TENSOR_PROP_STD,
  TENSOR_PROP_LAYOUT,
  TENSOR_PROP_DTYPE,
  TENSOR_PROP_YUV_MATRIX,
  TENSOR_PROP_YUV_RANGE,
  TENSOR_PROP_CHROMA_SITE,
  TENSOR_PROP_CHANNELS,
  TENSOR_PROP_GPU_WAIT,
  TENSOR_PROP_MODEL_INFO,
  TENSOR_PROP_MODEL_INPUT,
  TENSOR_PROP_COUNT,
};

/* The settings a model-info file sets (TensorizeSettings::model_set). */
enum ModelField : unsigned {
  MODEL_FIELD_WIDTH = 1 << 0,
  MODEL_FIELD_HEIGHT = 1 << 1,
  MODEL_FIELD_LAYOUT = 1 << 2,
  MODEL_FIELD_DTYPE = 1 << 3,
  MODEL_FIELD_CHANNELS = 1 << 4,
  MODEL_FIELD_NORMALISATION = 1 << 5, /* scale, mean and std */
  MODEL_FIELD_BATCH = 1 << 6,         /* the element's batch-size */
};

/* The element's batch-size as model-info sees it: its value, whether the user set it, and the
 * value it takes back when the file no longer sets it. */
struct ModelBatch {
  int value;
  bool set;
  int unset_value;
};

/* At start, outside the object lock: reads the file s.model_info names (model_info.h); *have is
 * false when it names none. The layout property breaks the tie of dims that fit both layouts. */
cudaprep::Status gst_cuda_prep_model_info_load(const TensorizeSettings &s, ModelInput *m, bool *have);
/* Then, under the lock: takes back what model-info set at the last start, then sets width,
 * height, layout, channels, dtype, the batch and scale / mean / std from @m's input tensor (NULL:
 * none). A property the user set that says otherwise is one error naming both ("width=320
 * contradicts model-info FILE: [images] dims=1,3,640,640 (width 640)"); @s and @batch are then
 * left as they were. */
cudaprep::Status gst_cuda_prep_model_info_apply(TensorizeSettings &s, ModelBatch &batch, const ModelInput *m);

/* Installs width .. gpu-wait (GST_PARAM_MUTABLE_PLAYING), model-info and model-input
 * (GST_PARAM_MUTABLE_READY) at ids first_id + TensorProperty. */
void gst_cuda_prep_tensor_properties_install(GObjectClass *klass, guint first_id);
/* The "roi" property ("<x, y, width, height>", clipped to the frame), for elements and pads. */
GParamSpec *gst_cuda_prep_param_spec_roi(const gchar *blurb);

/* Call with the object lock held. @prop is relative to first_id; FALSE when it is not one of
 * these properties. *shape_changed tells whether the output caps must be renegotiated. scale,
 * mean and std never set read back as default_normalisation (dtype) of the dtype property. */
gboolean gst_cuda_prep_tensor_property_set(TensorizeSettings &s, guint prop, const GValue *value,
                                           gboolean *shape_changed);
gboolean gst_cuda_prep_tensor_property_get(const TensorizeSettings &s, guint prop, GValue *value);

/* The output-wide part of the settings, scale / mean / std never set taken from
 * default_normalisation (s.dtype). Errors name the property ("std needs 1 or 3 values"). */
cudaprep::Status gst_cuda_prep_output_spec(const TensorizeSettings &s, cudaprep::TensorOutputSpec *spec);
/* " (WxH)" of the frame @info describes, for messages; "" without @info (checks before caps). */
std::string gst_cuda_prep_frame_desc(const GstVideoInfo *info);
/* A region of a frame in 64 bits: a rectangle from the properties or metas, grown by a margin,
 * can leave the range of int before it is clipped to the frame. */
struct Region64 {
  int64_t x = 0, y = 0, w = 0, h = 0;
};
/* @r grown by @margin of its width / height on each side, outward to whole pixels. */
Region64 gst_cuda_prep_grow_region(const cudaprep::Rect &r, double margin);
/* @r clipped to a frame_w x frame_h frame (documented for roi and rois); an empty @r, or a
 * result that is empty, is an error naming @r ("... entirely outside the frame" + @frame_desc). */
cudaprep::Status gst_cuda_prep_clip_rect(const Region64 &r, int frame_w, int frame_h, const std::string &frame_desc,
                                         cudaprep::Rect *out);
/* The source of a slot: the frame @info describes (NULL: the largest frame the element takes,
 * for checks before caps), the @roi property (empty: whole frame; clipped to the frame; one
 * entirely outside is an error) and the colorimetry (caps, or the yuv-* overrides). */
cudaprep::Status gst_cuda_prep_slot_source(const TensorizeSettings &s, const std::vector<int> &roi,
                                           const GstVideoInfo *info, cudaprep::SlotSourceSpec *source);

/* Posts "Invalid <element factory> settings: <message>" on @element, once: not again while
 * @posted (the element's record of the last one posted) holds the same message. */
void gst_cuda_prep_post_settings_error(GstElement *element, std::string &posted, const cudaprep::Status &st,
                                       const char *context);
