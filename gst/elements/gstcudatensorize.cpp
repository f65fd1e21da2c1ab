/**
 * SECTION:element-cudatensorize
 * @title: cudatensorize
 *
 * Turns video frames into a detector's input tensor in one fused CUDA kernel per frame:
 * resize (bilinear or nearest) with letterbox, stretch or crop as one affine warp, colour
 * conversion (NV12, NV21, I420, YUY2, UYVY, P010 with the caps' colorimetry and chroma-site),
 * normalisation
 * `out = (pixel * scale - mean) / std`, and HWC -> CHW, to float32, float16, uint8 or int8
 * (integers rounded to nearest even and saturated; scale, mean and std left unset follow the
 * dtype: pixel / 255 for floats, the pixel for uint8, pixel - 128 for int8), 3 colour channels
 * or 1 gray (channels=1: BT.601 luma of RGB input, range-expanded Y of YUV input).
 * Frames in CUDA memory are read in place (zero copy from nvh264dec or cudaupload);
 * system-memory frames are uploaded. Without a usable GPU the CPU path computes the same
 * function. Every output buffer carries a "GstCudaPrepTransformMeta" custom meta with the
 * source->tensor affine, its inverse and the unpadded rectangle (see gstcudaprepmeta.h).
 * The tensor's width, height, layout, dtype and channels, where the properties were never set, follow
 * downstream's caps (tensor_caps.h; the batch dimension must equal batch-size).
 * With output=video-meta (GStreamer >= 1.26 builds) the frame passes through and the tensor
 * rides on it as a GstTensorMeta (tensor_meta_output.h); that mode makes one tensor per frame,
 * so batch-size > 1, rois and roi-meta are refused with it at start.
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

#include "frame_phases.h"
#include "frame_pool.h"
#include "frame_lifetime.h"
#include "meta_regions.h"
#include "transform_meta.h"
#include "pixel_format.h"
#include "property_arrays.h"
#include "region_settings.h"
#include "tensor_caps.h"
#include "tensor_output_target.h"
#include "tensor_meta_output.h"
#include "tensor_pool.h"
#include "tensorize.h"
#include "tensorize_batch.h"
#include "tensorize_settings.h"
#include "tensorizer.h"
#include "versioned_settings.h"

GST_DEBUG_CATEGORY_STATIC(gst_cuda_tensorize_debug);
#define GST_CAT_DEFAULT gst_cuda_tensorize_debug

using namespace cudaprep;

enum {
  PROP_0,
  PROP_ROI,
  PROP_BATCH_SIZE,
  PROP_OUTPUT,
  PROP_REGION_FIRST,                                         /* rois, roi-meta and its filters (region_settings.h) */
  PROP_TENSOR_FIRST = PROP_REGION_FIRST + REGION_PROP_COUNT, /* the tensor properties shared with cudatensorbatch */
};

/* Properties, behind the object lock: the tensor settings (as cudatensorbatch's) and where the
 * slots come from. The streaming thread keeps the copy its state was built from and compares it
 * with these before every frame, so no change can be missed. */
struct CudaTensorizeSettings {
  TensorizeSettings tensor;
  std::vector<int> roi;   /* empty: whole frame */
  RegionSettings regions; /* rois, roi-meta: without either, one slot, the roi (or the whole frame) */
  int batch_size = 1;
  bool batch_size_set = false;                            /* downstream's batch must agree: messages say which */
  GstCudaPrepOutput output = GST_CUDA_PREP_OUTPUT_TENSOR; /* changed in NULL / READY only */

  /* What the output caps say: a change renegotiates. */
  bool same_shape(const CudaTensorizeSettings &o) const {
    return tensor.same_shape(o.tensor) && batch_size == o.batch_size && output == o.output;
  }
  TensorShapeSettings shape_settings() const {
    TensorShapeSettings t = tensor.shape_settings(batch_size);
    t.batch_set = batch_size_set;
    return t;
  }
  /* These settings with the shape negotiated with downstream in place of the properties'. */
  CudaTensorizeSettings with_shape(const TensorShape &shape) const {
    CudaTensorizeSettings s = *this;
    s.tensor = tensor.with_shape(shape);
    return s;
  }
  bool operator==(const CudaTensorizeSettings &o) const {
    return tensor == o.tensor && batch_size == o.batch_size && batch_size_set == o.batch_size_set && roi == o.roi &&
           regions == o.regions && output == o.output;
  }
};

/* Streaming state: built in start / set_caps from a settings snapshot, dropped in stop. */
/* The plans of a settings snapshot and an input: the output and one slot plan per region. */
struct TensorizePlans {
  TensorOutputPlan output{};
  RegionPlans regions;           /* the rois kept, the one roi / whole frame, or the frame's metas' */
  guint32 padding_output_id = 0; /* names `output` in pinned buffers' padding keys */
};

struct TensorizeState {
  CudaTensorizeSettings built_from; /* the snapshot the plans were made from (with shape) */
  gint built_version = -1;          /* the settings_version of that snapshot */
  TensorShape shape;                /* negotiated with downstream: the plans are made with it */
  TensorizePlans plans;
  gboolean have_plan = FALSE;
  std::vector<BatchSlot> slots; /* batch-size slots, sized per caps, reused every tensor */
  std::vector<CudaPrepSlotMeta> slot_metas;
  CudaPrepTransformMetaWriter transform_meta; /* kept on pool buffers, see transform_meta.h */
  size_t next_region = 0;                     /* first region of the queued frame's next tensor */
  std::vector<MetaRegion> meta_regions;       /* roi-meta: the queued frame's, reused frame to frame */
  gboolean warned_meta_skip = FALSE;          /* roi-meta: regions skipped are warned about once */
  gboolean output_cuda = FALSE;
  std::unique_ptr<Tensorizer> tensorizer;
  std::string posted_error;     /* the last settings error posted, so it is posted once */
  TensorRefusal refusal;        /* downstream takes no tensor we make: posted once */
  TensorMetaOutput meta_output; /* output=video-meta: the tensors' pool */
  FrameLifetime lifetime;       /* when input frames may leave (frame_lifetime.h) */
};

/* The element's C++ state (one object, created in init, deleted in finalize). */
struct GstCudaTensorizeImpl {
  VersionedSettings<CudaTensorizeSettings> settings;
  TensorizeState state;
};

struct _GstCudaTensorize {
  GstCudaPrepBase parent;
  GstCudaTensorizeImpl *impl;
};

#define gst_cuda_tensorize_parent_class parent_class
G_DEFINE_TYPE(GstCudaTensorize, gst_cuda_tensorize, GST_TYPE_CUDA_PREP_BASE);
GST_ELEMENT_REGISTER_DEFINE(cudatensorize, "cudatensorize", GST_RANK_NONE, GST_TYPE_CUDA_TENSORIZE);

/* ---- settings -> plan ----------------------------------------------------------------- */

/* The kernel plans for a settings snapshot and an input; every invalid setting gets its own
 * message. Without @info (at start, before caps) the checks that need no caps are made, with
 * the largest frame the element takes. Regions (rois) partly outside the frame are clipped to
 * it, as roi is; regions entirely outside or empty are skipped and listed in plans->skipped. */
static Status build_plans(const CudaTensorizeSettings &s, const GstVideoInfo *info, TensorizePlans *plans) {
  TensorizeConfig cfg;
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_output_spec(s.tensor, &cfg));
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_slot_source(s.tensor, s.roi, info, &cfg));
  if (s.output == GST_CUDA_PREP_OUTPUT_VIDEO_META) {
    /* The frame carries one tensor: several slots, or several tensors a frame, do not fit. */
    if (s.batch_size > 1 || s.regions.regions())
      return Status::error(
          "output=video-meta puts one single-frame tensor on each frame: it "
          "takes no batch-size > 1 (batch-size=" +
          std::to_string(s.batch_size) +
          "), rois or "
          "roi-meta; use output=tensor for batches and regions");
    if (!TensorMetaOutput::supported())
      return Status::error(
          "output=video-meta needs GStreamer >= 1.26 (GstTensorMeta of the "
          "gstreamer-analytics-1.0 library); this build has no such library: use output=tensor");
  }
  TensorizePlans p;
  CUDAPREP_RETURN_IF_ERROR(
      gst_cuda_prep_region_plans_init(&p.regions, cfg, cfg, gst_cuda_prep_frame_desc(info), s.regions));
  CUDAPREP_RETURN_IF_ERROR(make_output_plan(cfg, &p.output));
  CUDAPREP_RETURN_IF_ERROR(
      check_buffer_bytes(p.output.dst_width, p.output.dst_height, p.output.channels, p.output.dtype, s.batch_size));
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_region_plans_static(&p.regions, s.regions));
  *plans = std::move(p);
  return Status();
}

/* Makes the plans of a snapshot @state's. One warning names the regions that are skipped. */
static void adopt_plans(GstCudaTensorize *self, TensorizePlans &&plans) {
  TensorizeState &state = self->impl->state;
  if (!plans.regions.skipped.empty())
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Regions skipped"),
                        ("%s (they never fill a slot)", plans.regions.skipped.c_str()));
  state.plans = std::move(plans);
  state.plans.padding_output_id = gst_cuda_prep_new_padding_output_id();
}

static void post_settings_error(GstCudaTensorize *self, const Status &st, const char *context) {
  gst_cuda_prep_post_settings_error(GST_ELEMENT(self), self->impl->state.posted_error, st, context);
}

static CudaTensorizeSettings settings_snapshot(GstCudaTensorize *self, gint *version = NULL) {
  return self->impl->settings.snapshot(self, version);
}

/* ---- caps ----------------------------------------------------------------------------- */

static GstCudaPrepOutput output_mode(GstCudaTensorize *self) {
  return self->impl->settings.read(self, [](const CudaTensorizeSettings &s) { return s.output; });
}

static TensorShapeSettings shape_settings(GstCudaTensorize *self) {
  return self->impl->settings.read(self, [](const CudaTensorizeSettings &s) { return s.shape_settings(); });
}

/* The frame itself, when the tensor rides on it as a meta. */
static GstCaps *same_caps(GstCaps *caps, GstCaps *filter) {
  if (!filter) return gst_caps_ref(caps);
  return gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
}

/* output=video-meta: the frame's caps; on GStreamer >= 1.28 the src caps also describe the tensor
 * on the frame in their "tensors" field (tensor_meta_output.h), which the sink side drops. */
static GstCaps *video_meta_caps(GstCudaTensorize *self, GstPadDirection direction, GstCaps *caps, GstCaps *filter) {
  GstStructure *tensors = NULL;
  if (direction == GST_PAD_SINK)
    tensors = self->impl->settings.read(self, [](const CudaTensorizeSettings &s) {
      return gst_cuda_prep_tensors_field(s.shape_settings().value, s.tensor.model_group_id);
    });
  if (gst_caps_is_any(caps) || (direction == GST_PAD_SINK && !tensors)) {
    if (tensors) gst_structure_free(tensors);
    return same_caps(caps, filter);
  }
  GstCaps *out = gst_caps_copy(caps);
  for (guint i = 0; i < gst_caps_get_size(out); i++) {
    GstStructure *s = gst_caps_get_structure(out, i);
    if (tensors)
      gst_structure_set(s, "tensors", GST_TYPE_STRUCTURE, tensors, NULL);
    else
      gst_structure_remove_field(s, "tensors");
  }
  if (tensors) gst_structure_free(tensors);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(out);
    out = tmp;
  }
  return out;
}

static GstCaps *gst_cuda_tensorize_transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                                  GstCaps *filter) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(trans);
  gboolean gpu = gst_cuda_prep_base_gpu_possible(GST_CUDA_PREP_BASE(self));

  if (output_mode(self) == GST_CUDA_PREP_OUTPUT_VIDEO_META) return video_meta_caps(self, direction, caps, filter);
  if (gst_caps_is_any(caps)) {
    GstPad *other = direction == GST_PAD_SINK ? trans->srcpad : trans->sinkpad;
    GstCaps *tmpl = gst_pad_get_pad_template_caps(other);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect_full(filter, tmpl, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref(tmpl);
      tmpl = tmp;
    }
    return tmpl;
  }

  GstCaps *result = gst_caps_new_empty();
  /* From downstream's caps: only the tensors the element makes lead to video it takes. */
  GstCaps *made = direction == GST_PAD_SRC ? gst_cuda_prep_tensor_open_caps(NULL, TRUE, TRUE) : NULL;

  for (guint i = 0; i < gst_caps_get_size(caps); i++) {
    const GstStructure *in = gst_caps_get_structure(caps, i);
    gboolean in_cuda = gst_cuda_prep_caps_has_cuda_feature(caps, i);
    const GValue *fr = gst_structure_get_value(in, "framerate");
    if (made) {
      GstCaps *one = gst_caps_copy_nth(caps, i);
      const gboolean takes_ours = gst_caps_can_intersect(one, made);
      gst_caps_unref(one);
      if (!takes_ours) continue;
    }

    if (direction == GST_PAD_SINK) {
      /* Any shape: downstream may fix it (fixate_caps fills in what it leaves open), and
       * configure refuses one that contradicts a property the user set, naming both. Without a
       * GPU, tensors can only be in system memory; else the same memory as the input first. */
      result = gst_caps_merge(result, gst_cuda_prep_tensor_open_caps(fr, gpu, in_cuda));
      continue;
    }
    GstStructure *out = gst_structure_new_empty("video/x-raw");
    GValue formats = G_VALUE_INIT;
    gst_cuda_prep_video_formats_value(&formats);
    gst_structure_take_value(out, "format", &formats);
    gst_structure_set(out, "width", GST_TYPE_INT_RANGE, 1, kMaxSourceSide, "height", GST_TYPE_INT_RANGE, 1,
                      kMaxSourceSide, NULL);
    if (fr)
      gst_structure_set_value(out, "framerate", fr);
    else
      gst_structure_set(out, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);

    /* Same memory as the other side first: no copy either way. */
    GstCaps *both = gst_caps_new_full(gst_structure_copy(out), NULL);
    GstCaps *dev = gst_caps_new_full(out, NULL);
    gst_caps_set_features(dev, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
    gst_caps_append(both, dev);
    /* The same memory as the tensor first; without a GPU, CUDA input last. */
    result = gst_caps_merge(result, gst_cuda_prep_caps_order_memory(both, gpu, in_cuda));
  }

  /* A downstream that takes none of them gets its one error here, where a source asks before it
   * sends caps (videotestsrc would otherwise report only not-negotiated). */
  if (made && gst_caps_is_empty(result)) {
    /* (@caps may be empty already: basetransform filtered downstream's answer by what we make) */
    GstCaps *peer = gst_pad_peer_query_caps(trans->srcpad, NULL);
    if (!gst_caps_is_any(peer) && !gst_caps_can_intersect(peer, made))
      self->impl->state.refusal.post_no_intersection(GST_ELEMENT(self), made, peer);
    gst_caps_unref(peer);
  }
  if (made) gst_caps_unref(made);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = tmp;
  }
  GST_DEBUG_OBJECT(self, "%s caps %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, direction == GST_PAD_SINK ? "sink" : "src",
                   caps, result);
  return result;
}

static GstCaps *gst_cuda_tensorize_fixate_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                               GstCaps *othercaps) {
  if (direction == GST_PAD_SINK && !gst_caps_is_empty(othercaps)) {
    othercaps = gst_caps_make_writable(gst_caps_truncate(othercaps));
    GstStructure *s = gst_caps_get_structure(othercaps, 0);
    if (gst_structure_has_name(s, "other/tensors"))
      gst_cuda_prep_tensor_fixate_shape(s, shape_settings(GST_CUDA_TENSORIZE(trans)));
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->fixate_caps(trans, direction, caps, othercaps);
}

static gboolean gst_cuda_tensorize_transform_size(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps,
                                                  gsize size, GstCaps *othercaps, gsize *othersize) {
  const TensorizeState &state = GST_CUDA_TENSORIZE(trans)->impl->state;
  if (direction != GST_PAD_SINK || !state.have_plan) return FALSE;
  *othersize = batch_bytes(state.plans.output, (int)state.slots.size());
  return TRUE;
}

/* ---- per caps ------------------------------------------------------------------------- */

/* A downstream that refuses our tensor would only get a bare not-negotiated: say what we
 * produce and which property sets it. (Negotiation itself is left to GstBaseTransform.) */
static void explain_refused_output(GstCudaTensorize *self, GstCaps *incaps) {
  GstBaseTransform *trans = GST_BASE_TRANSFORM(self);
  if (!gst_pad_is_linked(trans->srcpad)) return;
  GstCaps *produced = GST_BASE_TRANSFORM_GET_CLASS(self)->transform_caps(trans, GST_PAD_SINK, incaps, NULL);
  GstCaps *peer = gst_pad_peer_query_caps(trans->srcpad, NULL);
  if (!gst_caps_can_intersect(produced, peer))
    self->impl->state.refusal.post_no_intersection(GST_ELEMENT(self), produced, peer);
  gst_caps_unref(produced);
  gst_caps_unref(peer);
}

static gboolean gst_cuda_tensorize_sink_event(GstBaseTransform *trans, GstEvent *event) {
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    explain_refused_output(GST_CUDA_TENSORIZE(trans), caps);
  } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
    /* a flush drops the queued frame: the next one starts at its first region */
    GST_CUDA_TENSORIZE(trans)->impl->state.next_region = 0;
  } else if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
    /* no next frame will release the held ones: give them back to their producer now */
    CudaPrepDevice &device = gst_cuda_prep_base_device(GST_CUDA_PREP_BASE(trans));
    CudaPrepScopedContext ctx(device, GST_ELEMENT(trans));
    Status st = ctx.ok() ? GST_CUDA_TENSORIZE(trans)->impl->state.lifetime.release_all() : Status();
    if (!st.ok()) GST_ELEMENT_WARNING(trans, STREAM, FAILED, ("CUDA error at EOS"), ("%s", st.message().c_str()));
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

/* ---- start / per caps ----------------------------------------------------------------- */

/* model-info: the file is read (outside the lock) and its values set (model_info.h). */
static Status apply_model_info(GstCudaTensorize *self) {
  ModelInput model;
  bool have = false;
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_model_info_load(settings_snapshot(self).tensor, &model, &have));
  Status st;
  self->impl->settings.write(self, [&](CudaTensorizeSettings &s) {
    ModelBatch batch{s.batch_size, s.batch_size_set, CudaTensorizeSettings().batch_size};
    st = gst_cuda_prep_model_info_apply(s.tensor, batch, have ? &model : NULL);
    s.batch_size = batch.value;
    s.batch_size_set = batch.set;
  });
  return st;
}

/* Settings that are wrong whatever the caps are refused here, once. */
static gboolean gst_cuda_tensorize_start(GstBaseTransform *trans) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(trans);
  TensorizeState &state = self->impl->state;
  TensorizePlans plans;
  state.posted_error.clear();
  state.refusal.forget();
  Status st = apply_model_info(self);
  if (st.ok()) st = build_plans(settings_snapshot(self), NULL, &plans);
  if (!st.ok()) {
    post_settings_error(self, st, "checked at start, before caps");
    return FALSE;
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans);
}

static gboolean gst_cuda_tensorize_configure(GstCudaPrepBase *base, GstCaps *incaps, GstCaps *outcaps) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(base);
  TensorizeState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device(base);
  const GstVideoInfo *info = gst_cuda_prep_base_input(base).info();

  state.built_from = settings_snapshot(self, &state.built_version);
  state.have_plan = FALSE;
  const gboolean meta_mode = state.built_from.output == GST_CUDA_PREP_OUTPUT_VIDEO_META;
  state.shape = state.built_from.shape_settings().value;
  TensorizePlans plans;
  /* Settings wrong whatever downstream takes get the error they get at start (channels=5 set
   * while playing is no "downstream takes 5 channels"). */
  Status st = build_plans(state.built_from, info, &plans);
  if (st.ok() && !meta_mode &&
      !(st = gst_cuda_prep_tensor_shape_from_caps(outcaps, state.built_from.shape_settings(), "cudatensorize",
                                                  &state.shape))
           .ok()) {
    state.refusal.post_contradiction(GST_ELEMENT(self), st, outcaps);
    return FALSE;
  }
  if (st.ok()) st = build_plans(state.built_from.with_shape(state.shape), info, &plans);
  if (!st.ok()) {
    gchar *caps = gst_caps_to_string(incaps);
    post_settings_error(self, st, (std::string("input caps ") + caps).c_str());
    g_free(caps);
    return FALSE;
  }
  if (GST_VIDEO_INFO_IS_YUV(info) && state.built_from.tensor.yuv_matrix == GST_CUDA_PREP_YUV_MATRIX_AUTO &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT601 &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT709 &&
      info->colorimetry.matrix != GST_VIDEO_COLOR_MATRIX_BT2020)
    GST_WARNING_OBJECT(self, "colour matrix %d not supported, using BT.601", info->colorimetry.matrix);
  adopt_plans(self, std::move(plans));
  state.have_plan = TRUE;
  state.next_region = 0;
  state.warned_meta_skip = FALSE;
  state.slots.assign(state.built_from.batch_size, BatchSlot());
  state.slot_metas.assign(state.built_from.batch_size, CudaPrepSlotMeta());
  /* A tensor on the frame is in CUDA memory whenever the GPU makes it. */
  state.output_cuda = meta_mode ? device.gpu() : gst_cuda_prep_caps_has_cuda_feature(outcaps, 0);
  state.tensorizer = device.gpu() ? make_tensorizer_cuda(device.stream()) : make_tensorizer_cpu();

  if (device.gpu()) {
    CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
    if (!ctx.ok()) return FALSE;
    device.sync(); /* held frames may still be read */
    state.lifetime.reset();
    st = state.tensorizer->reserve(state.built_from.batch_size);
    if (!st.ok()) {
      GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA memory"),
                        ("%s", st.message().c_str()));
      return FALSE;
    }
  }
  std::string error;
  if (meta_mode && !state.meta_output.configure(device, state.output_cuda, state.plans.output, &error)) {
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Could not make the tensor pool"), ("%s", error.c_str()));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "%dx%d %s -> tensor %dx%dx%d (%s, %s), %s path, output in %s memory",
                  GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info), GST_VIDEO_INFO_NAME(info),
                  state.plans.output.dst_width, state.plans.output.dst_height, state.plans.output.channels,
                  state.plans.output.layout == Layout::NCHW ? "nchw" : "nhwc",
                  gst_cuda_prep_tensor_type_name(state.plans.output.dtype), device.gpu() ? "CUDA" : "CPU",
                  state.output_cuda ? "CUDA" : "system");
  return TRUE;
}

static gboolean gst_cuda_tensorize_decide_allocation(GstBaseTransform *trans, GstQuery *query) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(trans);
  const TensorizeState &state = self->impl->state;
  if (state.built_from.output == GST_CUDA_PREP_OUTPUT_VIDEO_META) {
    /* The frame itself goes on and the tensors have their own pool: no output pool to fill. */
    while (gst_query_get_n_allocation_pools(query) > 0) gst_query_remove_nth_allocation_pool(query, 0);
    return TRUE;
  }
  if (!state.have_plan) return FALSE;
  return gst_cuda_prep_tensor_pool_decide(GST_ELEMENT(self), query,
                                          gst_cuda_prep_base_device(GST_CUDA_PREP_BASE(trans)), state.output_cuda,
                                          batch_bytes(state.plans.output, (int)state.slots.size()));
}

static gboolean gst_cuda_tensorize_propose_allocation(GstBaseTransform *trans, GstQuery *decide_query,
                                                      GstQuery *query) {
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  if (gst_query_get_n_allocation_pools(query) > 0) return TRUE;
  /* Frames of another stream are held until the kernel has read them: ask for that many more. */
  return gst_cuda_prep_propose_frame_pool(gst_cuda_prep_base_device(GST_CUDA_PREP_BASE(trans)), query,
                                          FrameLifetime::kDepth);
}

/* Only metas that say nothing about video geometry survive into the tensor. */
static gboolean gst_cuda_tensorize_transform_meta(GstBaseTransform *trans, GstBuffer *outbuf, GstMeta *meta,
                                                  GstBuffer *inbuf) {
  const gchar *const *tags = gst_meta_api_type_get_tags(meta->info->api);
  return !tags || !tags[0];
}

/* ---- per frame ------------------------------------------------------------------------ */

/* Brings the plan up to date with the settings before a frame (versioned_settings.h). A change
 * of the tensor's shape waits for the renegotiation that set_property requested. */
static gboolean refresh_plan(GstCudaTensorize *self) {
  TensorizeState &state = self->impl->state;
  CudaTensorizeSettings snapshot;
  if (!self->impl->settings.changed_since(self, &state.built_version, state.built_from, &snapshot) ||
      !snapshot.same_shape(state.built_from))
    return TRUE;

  TensorizePlans plans;
  Status st =
      build_plans(snapshot.with_shape(state.shape), gst_cuda_prep_base_input(GST_CUDA_PREP_BASE(self)).info(), &plans);
  if (!st.ok()) {
    post_settings_error(self, st, "changed while playing");
    return FALSE;
  }
  adopt_plans(self, std::move(plans));
  state.built_from = std::move(snapshot);
  return TRUE;
}

/* One tensor of @inbuf into @outbuf; @phases: the frame's phase log, begun by the caller. */
static GstFlowReturn tensorize_frame(GstCudaTensorize *self, GstBuffer *inbuf, GstBuffer *outbuf, FramePhases &phases) {
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE(self);
  TensorizeState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device(base);
  CudaPrepVideoInput &input = gst_cuda_prep_base_input(base);

  const int batch = (int)state.slots.size();
  const gsize bytes = batch_bytes(state.plans.output, batch);
  if (gst_buffer_get_size(outbuf) < bytes) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Output buffer too small"),
                      ("%" G_GSIZE_FORMAT " < %" G_GSIZE_FORMAT, gst_buffer_get_size(outbuf), bytes));
    return GST_FLOW_ERROR;
  }
  gst_buffer_set_size(outbuf, bytes);

  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok()) return GST_FLOW_ERROR;
  GstVideoFrame frame;
  ImageView view;
  if (!input.map(GST_ELEMENT(self), device, inbuf, FALSE, &frame, &view)) return GST_FLOW_ERROR;
  phases.mark("map");

  /* Slots [next_region, next_region + batch) of this frame's regions; the rest are empty. */
  const RegionPlans &regions = state.plans.regions;
  const size_t n_regions = regions.size();
  for (int k = 0; k < batch; k++) {
    const size_t r = state.next_region + k;
    BatchSlot &slot = state.slots[k];
    CudaPrepSlotMeta &meta = state.slot_metas[k];
    slot.empty = r >= n_regions;
    meta = CudaPrepSlotMeta();
    meta.empty = slot.empty;
    meta.source_pts = GST_BUFFER_PTS(inbuf);
    if (slot.empty) {
      meta.transform.dst_width = state.plans.output.dst_width;
      meta.transform.dst_height = state.plans.output.dst_height;
      continue;
    }
    slot.plan = regions.regions[r];
    slot.src = view;
    meta.transform = slot.plan.transform;
    meta.source_rect = slot.plan.roi;
    meta.region_index = regions.region_index[r];
    meta.region_id = regions.region_id[r];
  }
  TensorizeBatch tb;
  tb.output = state.plans.output;
  tb.slots = state.slots.data();
  tb.count = batch;
  phases.mark("slots");
  /* With output=video-meta the frame goes on downstream: it is never held (frame_lifetime.h). */
  const gboolean input_ordered = input.stream_ordered(device, &frame);
  state.lifetime.begin_output(state.built_from.output != GST_CUDA_PREP_OUTPUT_VIDEO_META);
  state.lifetime.add_input(inbuf, input_ordered);
  /* A batch of one frame takes the single-frame kernel (the one benchmarked and tuned for single
   * frames), not the batch kernel with one slot; only that kernel can leave padding rows out. */
  const gboolean single = batch == 1 && !state.slots[0].empty;
  const guint64 padding_key =
      single ? gst_cuda_prep_padding_key(state.plans.padding_output_id, state.slots[0].plan.active_y0,
                                         state.slots[0].plan.active_y1)
             : 0;
  TensorOutputTarget target;
  Status st = target.begin(device, state.tensorizer->on_device(), state.output_cuda, outbuf, padding_key);
  phases.mark("map out");
  if (st.ok()) {
    st = single
             ? state.tensorizer->run(combine_plan(tb.output, state.slots[0].plan), view, target.data(), target.rows())
             : state.tensorizer->run_batch(tb, target.data(), bytes);
    phases.mark(target.rows() == PaddingRows::Keep ? "kernel (padding kept)" : "kernel");
  }
  if (st.ok()) {
    state.transform_meta.attach(outbuf, state.slot_metas.data(), batch, (int)(state.next_region / batch),
                                (int)MAX((size_t)1, (n_regions + batch - 1) / batch));
    phases.mark("meta");
  }
  st = target.finish(device, state.built_from.tensor.gpu_wait, state.lifetime, std::move(st));
  const gboolean download = state.tensorizer->on_device() && !state.output_cuda;
  phases.mark(target.left_on_stream() ? (input_ordered ? "ordered" : "hold") : download ? "download" : "sync");
  const gboolean unmapped = input.unmap(GST_ELEMENT(self), device, &frame, FALSE);
  phases.mark("unmap");

  if (!st.ok()) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Tensorize failed"), ("%s", st.message().c_str()));
    return GST_FLOW_ERROR;
  }
  return unmapped ? GST_FLOW_OK : GST_FLOW_ERROR;
}

static GstFlowReturn gst_cuda_tensorize_transform(GstBaseTransform *trans, GstBuffer *inbuf, GstBuffer *outbuf) {
  FramePhases phases(GST_CAT_DEFAULT, GST_OBJECT(trans));
  return tensorize_frame(GST_CUDA_TENSORIZE(trans), inbuf, outbuf, phases);
}

/* roi-meta: this frame's regions from its metas (see meta_regions.h), filtered by class and size
 * (the region's own width and height, before the margin). The vectors keep their capacity from
 * frame to frame. Regions skipped are warned about once per stream. */
static Status collect_meta_regions(GstCudaTensorize *self, GstBuffer *inbuf) {
  TensorizeState &state = self->impl->state;
  RegionPlans &p = state.plans.regions;
  CUDAPREP_RETURN_IF_ERROR(
      gst_cuda_prep_region_plans_from_metas(&p, state.built_from.regions, inbuf, &state.meta_regions));
  if (!p.skipped.empty() && !state.warned_meta_skip) {
    state.warned_meta_skip = TRUE;
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Regions skipped"), ("%s (warned once per stream)", p.skipped.c_str()));
  }
  return Status();
}

/* output=video-meta: the frame's tensor is made into a pool buffer exactly as for output=tensor,
 * then put on the frame, which goes downstream as *outbuf. Takes @inbuf. */
static GstFlowReturn put_tensor_on_frame(GstCudaTensorize *self, GstBuffer *inbuf, GstBuffer **outbuf,
                                         FramePhases &phases) {
  TensorMetaOutput &meta_output = self->impl->state.meta_output;
  GstBuffer *tensor = NULL;
  GstFlowReturn ret = meta_output.acquire(&tensor); /* flushing: no frame is lost silently */
  if (ret == GST_FLOW_OK) {
    ret = tensorize_frame(self, inbuf, tensor, phases);
    if (ret != GST_FLOW_OK) gst_buffer_unref(tensor);
  }
  if (ret != GST_FLOW_OK) {
    gst_buffer_unref(inbuf);
    return ret;
  }
  GstBuffer *frame = gst_buffer_make_writable(inbuf);
  std::string error;
  if (!meta_output.attach(frame, tensor, &error)) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Could not attach the tensor to the frame"), ("%s", error.c_str()));
    gst_buffer_unref(frame);
    return GST_FLOW_ERROR;
  }
  *outbuf = frame;
  return GST_FLOW_OK;
}

/* One input frame gives ceil(regions / batch-size) tensors (at least one): GstBaseTransform
 * calls this until it returns no buffer, and the frame stays queued until its last tensor. */
static GstFlowReturn gst_cuda_tensorize_generate_output(GstBaseTransform *trans, GstBuffer **outbuf) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(trans);
  TensorizeState &state = self->impl->state;
  GstBuffer *inbuf = trans->queued_buf;
  *outbuf = NULL;
  if (!inbuf) return GST_FLOW_OK;
  FramePhases phases(GST_CAT_DEFAULT, GST_OBJECT(self));
  GstFlowReturn ret = GST_FLOW_OK;
  if (!state.have_plan) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("No caps negotiated before the first buffer"), (NULL));
    ret = GST_FLOW_NOT_NEGOTIATED;
  } else if (state.next_region == 0 && !refresh_plan(self)) {
    ret = GST_FLOW_ERROR; /* settings are taken between frames, never between its tensors */
  } else if (state.next_region == 0 && state.built_from.regions.roi_meta) {
    Status st = collect_meta_regions(self, inbuf);
    if (!st.ok()) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Bad region of interest"), ("%s", st.message().c_str()));
      ret = GST_FLOW_ERROR;
    }
  }
  phases.mark("settings");
  if (ret == GST_FLOW_OK && state.built_from.output == GST_CUDA_PREP_OUTPUT_VIDEO_META) {
    trans->queued_buf = NULL; /* one tensor a frame (refused otherwise at start) */
    return put_tensor_on_frame(self, inbuf, outbuf, phases);
  }
  if (ret == GST_FLOW_OK) ret = GST_BASE_TRANSFORM_GET_CLASS(trans)->prepare_output_buffer(trans, inbuf, outbuf);
  phases.mark("output buffer");
  if (ret == GST_FLOW_OK) ret = tensorize_frame(self, inbuf, *outbuf, phases);
  state.next_region += state.slots.size();
  if (ret != GST_FLOW_OK && *outbuf) {
    gst_buffer_unref(*outbuf);
    *outbuf = NULL;
  }
  if (ret != GST_FLOW_OK || state.next_region >= state.plans.regions.size()) {
    trans->queued_buf = NULL;
    gst_buffer_unref(inbuf);
    state.next_region = 0;
  }
  return ret;
}

static gboolean gst_cuda_tensorize_stop(GstBaseTransform *trans) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE(trans);
  TensorizeState &state = self->impl->state;
  {
    CudaPrepScopedContext ctx(gst_cuda_prep_base_device(base), GST_ELEMENT(self));
    gst_cuda_prep_base_device(base).sync();
    state.lifetime.reset();
  }
  state.have_plan = FALSE;
  state.next_region = 0;
  state.tensorizer.reset();
  state.meta_output.reset();
  return GST_BASE_TRANSFORM_CLASS(parent_class)->stop(trans);
}

/* ---- properties ----------------------------------------------------------------------- */

static void gst_cuda_tensorize_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(object);
  gboolean geometry = FALSE;

  /* output changes the caps of both pads, model-info is read: taken at start */
  if ((pspec->flags & GST_PARAM_MUTABLE_READY) && !gst_cuda_prep_ready_property_changeable(object, pspec)) return;
  gboolean known = TRUE;
  self->impl->settings.write(self, [&](CudaTensorizeSettings &s) {
    if (prop_id >= PROP_TENSOR_FIRST) {
      known = gst_cuda_prep_tensor_property_set(s.tensor, prop_id - PROP_TENSOR_FIRST, value, &geometry);
      return;
    }
    if (prop_id >= PROP_REGION_FIRST) {
      known = gst_cuda_prep_region_property_set(s.regions, prop_id - PROP_REGION_FIRST, value);
      return;
    }
    switch (prop_id) {
      case PROP_ROI: s.roi = gst_cuda_prep_vector_from_array<int>(value); break;
      case PROP_BATCH_SIZE:
        geometry = s.batch_size != g_value_get_int(value);
        s.batch_size = g_value_get_int(value);
        s.batch_size_set = true;
        s.tensor.model_set &= ~MODEL_FIELD_BATCH;
        break;
      case PROP_OUTPUT: s.output = (GstCudaPrepOutput)g_value_get_enum(value); break;
      default: known = FALSE; break;
    }
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);

  /* The streaming thread takes the new settings before the next frame (its state is never
   * touched here); a new tensor shape (width, height, layout, dtype, channels, batch-size)
   * renegotiates. */
  if (geometry) gst_base_transform_reconfigure_src(GST_BASE_TRANSFORM(self));
}

static void gst_cuda_tensorize_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(object);
  const gboolean known = self->impl->settings.read(self, [&](const CudaTensorizeSettings &s) -> gboolean {
    if (prop_id >= PROP_TENSOR_FIRST)
      return gst_cuda_prep_tensor_property_get(s.tensor, prop_id - PROP_TENSOR_FIRST, value);
    if (prop_id >= PROP_REGION_FIRST)
      return gst_cuda_prep_region_property_get(s.regions, prop_id - PROP_REGION_FIRST, value);
    switch (prop_id) {
      case PROP_ROI: gst_cuda_prep_vector_to_array(s.roi, value); break;
      case PROP_BATCH_SIZE: g_value_set_int(value, s.batch_size); break;
      case PROP_OUTPUT: g_value_set_enum(value, (gint)s.output); break;
      default: return FALSE;
    }
    return TRUE;
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_tensorize_finalize(GObject *object) {
  GstCudaTensorize *self = GST_CUDA_TENSORIZE(object);
  delete self->impl;
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_cuda_tensorize_class_init(GstCudaTensorizeClass *klass) {
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudaPrepBaseClass *base_class = GST_CUDA_PREP_BASE_CLASS(klass);
  const CudaTensorizeSettings d; /* the defaults the param specs declare */
  const GParamFlags rw = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_tensorize_set_property;
  gobject_class->get_property = gst_cuda_tensorize_get_property;
  gobject_class->finalize = gst_cuda_tensorize_finalize;

  gst_cuda_prep_tensor_properties_install(gobject_class, PROP_TENSOR_FIRST);
  g_object_class_install_property(
      gobject_class, PROP_ROI,
      gst_cuda_prep_param_spec_roi(
          "Source rectangle \"<x, y, width, height>\" to process, clipped "
          "to the frame (the meta's source-rect says what was used); empty (default) = whole frame"));
  g_object_class_install_property(
      gobject_class, PROP_BATCH_SIZE,
      g_param_spec_int("batch-size", "Batch size",
                       "Slots per tensor (the last dimension of the caps, fixed so that caps stay static); "
                       "slots without a region hold the pad value and are marked empty in the meta",
                       1, kMaxBatchSlots, d.batch_size, rw));
  gst_cuda_prep_region_properties_install(gobject_class, PROP_REGION_FIRST, ~0u, REGION_SCOPE_TENSORIZE);
  g_object_class_install_property(
      gobject_class, PROP_OUTPUT,
      g_param_spec_enum("output", "Output",
                        "tensor: the tensor as its own buffer; video-meta: the frame passes through with the "
                        "tensor on it as a GstTensorMeta (GStreamer >= 1.26 builds, batch-size 1, no rois or "
                        "roi-meta; refused at start otherwise)",
                        gst_cuda_prep_output_get_type(), d.output,
                        (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));
  gst_element_class_set_static_metadata(
      element_class, "CUDA tensorize", "Filter/Converter/Video/Scaler/Hardware",
      "Resize (letterbox/stretch/crop), colour-convert, normalise and lay out video frames "
      "as a float or 8-bit tensor in one CUDA kernel (CPU fallback)",
      "gst-cudaprep developers");
  gst_element_class_add_pad_template(
      element_class, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, gst_cuda_prep_video_template_caps()));
  /* output=video-meta passes the frames through: the src pad takes video too. */
  GstCaps *src_caps = gst_cuda_prep_tensor_template_caps();
  gst_caps_append(src_caps, gst_cuda_prep_video_template_caps());
  gst_element_class_add_pad_template(element_class, gst_pad_template_new("src", GST_PAD_SRC, GST_PAD_ALWAYS, src_caps));
  gst_caps_unref(src_caps);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_fixate_caps);
  trans_class->transform_size = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_transform_size);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_decide_allocation);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_propose_allocation);
  trans_class->transform_meta = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_transform_meta);
  /* generate_output calls transform once per tensor; transform stays set all the same, since a
   * GstBaseTransform without transform or transform_ip is taken for a passthrough element. */
  trans_class->transform = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_transform);
  trans_class->generate_output = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_generate_output);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_sink_event);
  base_class->configure = GST_DEBUG_FUNCPTR(gst_cuda_tensorize_configure);

  GST_DEBUG_CATEGORY_INIT(gst_cuda_tensorize_debug, "cudatensorize", 0, "cudatensorize element");
}

static void gst_cuda_tensorize_init(GstCudaTensorize *self) { self->impl = new GstCudaTensorizeImpl(); }
