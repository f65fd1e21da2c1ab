/**
 * SECTION:element-cudatensorbatch
 * @title: cudatensorbatch
 *
 * Batches N video streams into one tensor `other/tensors` of dimensions W:H:C:B (NCHW; C:W:H:B
 * for NHWC; C = 3, or 1 with channels=1 gray), of float32, float16, uint8 or int8, one slot per sink pad, in one pass
 * per batch (one kernel launch on the GPU). Each slot is prepared exactly as cudatensorize prepares that frame alone,
 * with the same tensor properties; each pad has its own caps (size, format) and its own "roi".
 *
 * Slot i holds the i-th sink pad in the order of the pads' numbers. A batch collects, from
 * every pad, its next frame that starts before the batch ends: the batch starts at the
 * earliest pending frame and lasts that frame's duration, so every frame goes into exactly
 * one batch, and a slower stream leaves its slot empty in the batches between its frames.
 * Non-live, a batch waits for a frame (or EOS) on every pad; live, it is made when every pad
 * has a frame or when the aggregator's "latency" (the timeout) has passed since its start (on
 * the pipeline clock: a batch stamped ahead of the clock waits for its time). A slot without a
 * frame (stalled pad, EOS, slower stream, no pad) is filled with the normalised pad value and
 * marked empty in the meta. EOS on every pad ends the stream. With batch-size=0 (default) the
 * batch has one slot per sink pad: pads requested or released while playing change it at the
 * next batch boundary (the output caps are renegotiated).
 *
 * Regions: a pad with "rois" (rectangles) or "roi-meta" (each frame's ROI metas or, with
 * GStreamer's analytics library, its GstAnalyticsODMtds, filtered by roi-type, roi-min-size and
 * roi-max-size, grown by roi-margin; per pad, or element-wide for the pads that set none) gives
 * one slot per region of its frame instead of one per frame, and none when its frame has no
 * region. A batch window's slots are taken in pad order; those beyond them are empty, and more
 * than batch-size give several tensors with the window's timestamps, none dropped. Regions need
 * a fixed batch-size. Each slot is `cudatensorize roi=<region>` of that frame alone.
 *
 * batch-mode=fixed (default) keeps the caps static, W:H:C:B with B = batch-size. With
 * batch-mode=dynamic each tensor holds exactly its window's slots (K, at most batch-size; no
 * empty slot), as NNStreamer's flexible tensors: caps other/tensors,format=flexible, each
 * buffer a 128-byte GstTensorMetaInfo header (dimensions W:H:C:K) then the tensor; the pool's
 * buffers are sized for batch-size slots. A window without slot gives a GAP event, no tensor.
 *
 * Every batch carries a "GstCudaPrepTransformMeta" with, per slot, the source pad, the source
 * buffer's PTS, whether the slot is empty, the region's index and id (the ROI meta's or ODMtd's)
 * and the transform mapping the slot to its frame; and which of the window's tensors it is
 * ("tensor-index" of "tensors").
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 cudatensorbatch name=b width=640 height=640 ! fakesink \
 *     videotestsrc ! video/x-raw,format=NV12,width=1920,height=1080 ! b.sink_0 \
 *     videotestsrc pattern=ball ! video/x-raw,format=BGR,width=1280,height=720 ! b.sink_1
 * ]|
 */
#include "gstcudatensorbatch.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frame_pool.h"
#include "cuda_device.h"
#include "cuda_element_core.h"
#include "enum_types.h"
#include "gstcudatensorbatchpad.h"
#include "pixel_format.h"
#include "region_settings.h"
#include "tensor_caps.h"
#include "frame_lifetime.h"
#include "tensor_output_target.h"
#include "tensor_pool.h"
#include "tensorize_settings.h"
#include "tensorizer.h"
#include "transform_meta.h"
#include "versioned_settings.h"

GST_DEBUG_CATEGORY_STATIC(gst_cuda_tensor_batch_debug);
#define GST_CAT_DEFAULT gst_cuda_tensor_batch_debug

using namespace cudaprep;

enum {
  PROP_0,
  PROP_BATCH_SIZE,
  PROP_BATCH_MODE,
  PROP_REGION_FIRST,                                       /* roi-meta and its filters: the pads' defaults */
  PROP_CORE_FIRST = PROP_REGION_FIRST + REGION_PROP_COUNT, /* device-id, backend (cuda_element_core.h) */
  PROP_TENSOR_FIRST = PROP_CORE_FIRST + CORE_PROP_COUNT,   /* then the tensor properties */
};

/* batch-mode: how many slots a tensor has. */
enum BatchMode {
  BATCH_MODE_FIXED,   /* batch-size slots: static caps W:H:C:B, empty slots where a window has fewer */
  BATCH_MODE_DYNAMIC, /* a window's slots (at most batch-size a tensor): flexible caps (tensor_caps.h) */
};

static GType batch_mode_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {BATCH_MODE_FIXED, "batch-size slots a tensor (static caps W:H:C:B); slots without a frame or region are empty",
       "fixed"},
      {BATCH_MODE_DYNAMIC,
       "A tensor holds exactly its batch window's slots, at most batch-size (other/tensors,format=flexible: "
       "NNStreamer's header before each tensor gives its shape)",
       "dynamic"},
      {0, NULL, NULL}};
  return gst_cuda_prep_register_enum(&type, "GstCudaTensorBatchMode", values);
}

/* Properties, behind the object lock (versioned_settings.h): batch_size and batch_mode are taken
 * at start (NULL / READY only), the tensor settings before every batch. device-id and backend
 * are the core's. */
struct BatchSettings {
  TensorizeSettings tensor;
  guint batch_size = 0; /* 0: one slot per sink pad */
  gint batch_mode = BATCH_MODE_FIXED;
  RegionSettings regions; /* roi-meta and filters of the pads that set none of their own (no rois) */

  bool operator==(const BatchSettings &o) const {
    return tensor == o.tensor && batch_size == o.batch_size && batch_mode == o.batch_mode && regions == o.regions;
  }
};

/* One slot of a batch window: region @region of @pad's frame, or (region -1) the empty slot of a
 * pad without regions that has no frame in this window. */
struct WindowSlot {
  GstCudaTensorBatchPad *pad;
  int region;
};

/* Streaming state: built in start and at negotiation, dropped in stop. */
struct BatchState {
  BatchSettings built_from; /* the snapshot the output plan was made from */
  gint built_version = -1;
  TensorShape shape;         /* negotiated with downstream: the output plan is made with it */
  TensorShape pending_shape; /* of the caps being negotiated */
  TensorOutputSpec spec{};
  TensorOutputPlan output{};
  gboolean have_output = FALSE;
  guint64 generation = 0; /* bumped with every new output plan: pads rebuild theirs */
  int slots = 0;          /* B of the negotiated caps; with a dynamic batch, the most a tensor holds */
  int pending_slots = 0;  /* B of the caps being negotiated */
  gboolean output_cuda = FALSE;
  gboolean dynamic = FALSE;         /* flexible caps: a tensor holds its window's slots, after a header */
  gboolean pending_dynamic = FALSE; /* of the caps being negotiated */
  guint8 header[kFlexibleHeaderBytes] = {};
  gsize bytes = 0; /* of a full tensor (header included): the pool's buffers */
  std::unique_ptr<Tensorizer> tensorizer;
  std::vector<BatchSlot> batch; /* sized at negotiation: no allocation per batch */
  std::vector<CudaPrepSlotMeta> meta;
  std::vector<WindowSlot> window;                   /* this batch window's slots, in pad order; reused */
  CudaPrepTransformMetaWriter transform_meta;       /* kept on pool buffers, see transform_meta.h */
  FrameLifetime lifetime;                           /* when the slots' frames may leave (frame_lifetime.h) */
  std::vector<GstCudaTensorBatchPad *> pads;        /* this batch's pads, slot order; reused */
  std::string posted_error;                         /* the last settings error posted, so it is posted once */
  TensorRefusal refusal;                            /* downstream takes no tensor we make: posted once */
  GstClockTime last_duration = GST_CLOCK_TIME_NONE; /* of the last batch */
};

struct GstCudaTensorBatchImpl {
  VersionedSettings<BatchSettings> settings;
  CudaPrepElementCore core;                      /* device properties, the device start .. stop */
  std::vector<GstCudaTensorBatchPad *> released; /* pads released, staging not freed */
  BatchState state;
};

struct _GstCudaTensorBatch {
  GstAggregator parent;
  GstCudaTensorBatchImpl *impl;
};

/* GstChildProxy: the sink pads are the children, so their properties are set by name from a
 * launch line ("cudatensorbatch name=b sink_0::roi=\"<0,0,320,240>\"", as compositor's
 * "sink_1::xpos=160"); gst_parse_launch waits for the pad's child-added when it comes later. */
static GObject *gst_cuda_tensor_batch_child_by_index(GstChildProxy *proxy, guint index) {
  GstElement *element = GST_ELEMENT(proxy);
  GST_OBJECT_LOCK(element);
  GObject *child = (GObject *)g_list_nth_data(element->sinkpads, index);
  if (child) gst_object_ref(child);
  GST_OBJECT_UNLOCK(element);
  return child;
}

static guint gst_cuda_tensor_batch_children_count(GstChildProxy *proxy) {
  GstElement *element = GST_ELEMENT(proxy);
  GST_OBJECT_LOCK(element);
  const guint count = element->numsinkpads;
  GST_OBJECT_UNLOCK(element);
  return count;
}

static void gst_cuda_tensor_batch_child_proxy_init(gpointer g_iface, gpointer iface_data) {
  GstChildProxyInterface *iface = (GstChildProxyInterface *)g_iface;
  iface->get_child_by_index = gst_cuda_tensor_batch_child_by_index;
  iface->get_children_count = gst_cuda_tensor_batch_children_count;
}

#define gst_cuda_tensor_batch_parent_class parent_class
G_DEFINE_TYPE_WITH_CODE(GstCudaTensorBatch, gst_cuda_tensor_batch, GST_TYPE_AGGREGATOR,
                        G_IMPLEMENT_INTERFACE(GST_TYPE_CHILD_PROXY, gst_cuda_tensor_batch_child_proxy_init));
GST_ELEMENT_REGISTER_DEFINE(cudatensorbatch, "cudatensorbatch", GST_RANK_NONE, GST_TYPE_CUDA_TENSOR_BATCH);

/* ---- settings ------------------------------------------------------------------------- */

static BatchSettings settings_snapshot(GstCudaTensorBatch *self, gint *version = NULL) {
  return self->impl->settings.snapshot(self, version);
}

static void post_settings_error(GstCudaTensorBatch *self, const Status &st, const char *context) {
  gst_cuda_prep_post_settings_error(GST_ELEMENT(self), self->impl->state.posted_error, st, context);
}

/* The output plan of tensor settings @s with a batch of @slots: one GstBuffer. */
static Status build_output(const TensorizeSettings &s, int slots, TensorOutputSpec *spec, TensorOutputPlan *output) {
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_output_spec(s, spec));
  CUDAPREP_RETURN_IF_ERROR(make_output_plan(*spec, output));
  return check_buffer_bytes(output->dst_width, output->dst_height, output->channels, output->dtype, slots);
}

/* Brings the output plan up to date with the settings before a batch (versioned_settings.h); a
 * shape change waits for the renegotiation set_property requested. */
static gboolean refresh_output(GstCudaTensorBatch *self) {
  BatchState &state = self->impl->state;
  BatchSettings snapshot;
  if (!self->impl->settings.changed_since(self, &state.built_version, state.built_from, &snapshot) ||
      !snapshot.tensor.same_shape(state.built_from.tensor))
    return TRUE;
  TensorOutputSpec spec;
  TensorOutputPlan output;
  Status st = build_output(snapshot.tensor.with_shape(state.shape), state.slots, &spec, &output);
  if (!st.ok()) {
    post_settings_error(self, st, "changed while playing");
    return FALSE;
  }
  state.spec = spec;
  state.output = output;
  state.built_from = std::move(snapshot);
  state.generation++;
  return TRUE;
}

/* The region settings of a pad: its own over the element's; regions need a fixed batch-size. */
static Status pad_regions(const BatchSettings &s, const CudaTensorBatchPadSettings &own, RegionSettings *out) {
  *out = own.regions.over(s.regions, !own.roi.empty());
  if (out->regions() && s.batch_size == 0)
    return Status::error(std::string(out->roi_meta ? "roi-meta" : "rois") +
                         " needs a fixed batch-size: with batch-size=0 every sink pad has one slot, and a pad's "
                         "regions have none (set batch-size to the slots per tensor)");
  return gst_cuda_prep_region_settings_check(*out, NULL);
}

/* Brings a pad's slot plans up to date with its caps, its properties and the output plan. */
static gboolean refresh_pad_plan(GstCudaTensorBatch *self, GstCudaTensorBatchPad *pad) {
  BatchState &state = self->impl->state;
  CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
  if (!ps.have_caps) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("No caps on %s before its first buffer", GST_PAD_NAME(pad)), (NULL));
    return FALSE;
  }
  if (ps.have_plan && ps.built_generation == state.generation &&
      ps.built_version == gst_cuda_tensor_batch_pad_settings_version(pad))
    return TRUE;
  guint version = 0;
  const CudaTensorBatchPadSettings own = gst_cuda_tensor_batch_pad_settings(pad, &version);
  RegionSettings regions;
  SlotSourceSpec source;
  Status st = pad_regions(state.built_from, own, &regions);
  /* The pad's roi is its one slot, not used while it has regions: not held against its frame. */
  static const std::vector<int> kWholeFrame;
  if (st.ok())
    st = gst_cuda_prep_slot_source(state.built_from.tensor, regions.regions() ? kWholeFrame : own.roi, ps.input.info(),
                                   &source);
  if (st.ok())
    st = gst_cuda_prep_region_plans_init(&ps.plans, state.spec, source, gst_cuda_prep_frame_desc(ps.input.info()),
                                         regions);
  if (st.ok()) st = gst_cuda_prep_region_plans_static(&ps.plans, regions);
  if (!st.ok()) {
    ps.have_plan = FALSE;
    post_settings_error(self, Status::error(std::string(GST_PAD_NAME(pad)) + ": " + st.message()),
                        "pad caps, properties or tensor settings");
    return FALSE;
  }
  if (!ps.plans.skipped.empty())
    GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Regions skipped"),
                        ("%s: %s (they never fill a slot)", GST_PAD_NAME(pad), ps.plans.skipped.c_str()));
  ps.regions = std::move(regions);
  ps.have_plan = TRUE;
  ps.built_generation = state.generation;
  ps.built_version = version;
  return TRUE;
}

/* ---- pads ----------------------------------------------------------------------------- */

static guint pad_number(GstPad *pad) {
  const gchar *name = GST_PAD_NAME(pad);
  return (guint)g_ascii_strtoull(name + strlen("sink_"), NULL, 10);
}

/* This batch's pads in slot order (references held until release_pads). */
static void collect_pads(GstCudaTensorBatch *self, std::vector<GstCudaTensorBatchPad *> &pads) {
  pads.clear();
  GST_OBJECT_LOCK(self);
  for (GList *l = GST_ELEMENT(self)->sinkpads; l; l = l->next)
    pads.push_back(GST_CUDA_TENSOR_BATCH_PAD(gst_object_ref(l->data)));
  GST_OBJECT_UNLOCK(self);
  std::sort(pads.begin(), pads.end(), [](GstCudaTensorBatchPad *a, GstCudaTensorBatchPad *b) {
    return pad_number(GST_PAD(a)) < pad_number(GST_PAD(b));
  });
}

static void release_pads(std::vector<GstCudaTensorBatchPad *> &pads) {
  for (GstCudaTensorBatchPad *pad : pads) gst_object_unref(pad);
  pads.clear();
}

static GstPad *gst_cuda_tensor_batch_request_new_pad(GstElement *element, GstPadTemplate *templ, const gchar *name,
                                                     const GstCaps *caps) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(element);
  GST_OBJECT_LOCK(self);
  const guint pads = element->numsinkpads;
  GST_OBJECT_UNLOCK(self);
  const guint batch_size = self->impl->settings.read(self, [](const BatchSettings &s) { return s.batch_size; });
  if (batch_size > 0 && pads >= batch_size) {
    GST_ELEMENT_ERROR(self, CORE, PAD, ("batch-size=%u: no slot left for another sink pad", batch_size),
                      ("%u sink pads already; set batch-size=0 (one slot per pad) or larger", pads));
    /* A launch line links before anyone reads the bus and reports only "could not link": say
     * why where it shows with default settings too. */
    g_log("cudaprep", G_LOG_LEVEL_WARNING,
          "%s: batch-size=%u: no slot left for another sink "
          "pad (%u already); set batch-size=0 (one slot per pad) or larger",
          GST_ELEMENT_NAME(self), batch_size, pads);
    return NULL;
  }
  GstPad *pad = GST_ELEMENT_CLASS(parent_class)->request_new_pad(element, templ, name, caps);
  if (!pad) return NULL;
  gst_child_proxy_child_added(GST_CHILD_PROXY(element), G_OBJECT(pad), GST_OBJECT_NAME(pad));
  /* With one slot per pad the output shape changes: renegotiated before the next batch. */
  if (batch_size == 0) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
  return pad;
}

static void gst_cuda_tensor_batch_release_pad(GstElement *element, GstPad *pad) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(element);
  /* Its GPU staging is freed by the streaming thread with the context current (drop_released),
   * not whenever the pad dies. */
  GST_OBJECT_LOCK(self);
  self->impl->released.push_back(GST_CUDA_TENSOR_BATCH_PAD(gst_object_ref(pad)));
  GST_OBJECT_UNLOCK(self);
  const guint batch_size = self->impl->settings.read(self, [](const BatchSettings &s) { return s.batch_size; });
  gst_child_proxy_child_removed(GST_CHILD_PROXY(element), G_OBJECT(pad), GST_OBJECT_NAME(pad));
  GST_ELEMENT_CLASS(parent_class)->release_pad(element, pad);
  if (batch_size == 0) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
}

/* Frees what released pads held on the device, with the context current. Streaming thread,
 * stop or finalize. */
static void drop_released(GstCudaTensorBatch *self) {
  std::vector<GstCudaTensorBatchPad *> released;
  GST_OBJECT_LOCK(self);
  released.swap(self->impl->released);
  GST_OBJECT_UNLOCK(self);
  if (released.empty()) return;
  CudaPrepScopedContext ctx(self->impl->core.device(), GST_ELEMENT(self));
  for (GstCudaTensorBatchPad *pad : released) {
    gst_cuda_tensor_batch_pad_state(pad).input.reset();
    gst_object_unref(pad);
  }
}

/* ---- caps ----------------------------------------------------------------------------- */

/* The fastest framerate among the pads' caps: batches come at the fastest stream's pace. */
static void fastest_framerate(GstCudaTensorBatch *self, gint *num, gint *den) {
  *num = 0;
  *den = 1;
  GST_OBJECT_LOCK(self);
  for (GList *l = GST_ELEMENT(self)->sinkpads; l; l = l->next) {
    GstCaps *caps = gst_pad_get_current_caps(GST_PAD(l->data));
    gint n = 0, d = 1;
    if (caps && gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &n, &d) && n > 0 && d > 0 &&
        (gint64)n * *den > (gint64)*num * d) {
      *num = n;
      *den = d;
    }
    if (caps) gst_caps_unref(caps);
  }
  GST_OBJECT_UNLOCK(self);
}

static int slots_wanted(GstCudaTensorBatch *self) {
  const guint batch_size = self->impl->settings.read(self, [](const BatchSettings &s) { return s.batch_size; });
  GST_OBJECT_LOCK(self);
  const guint pads = GST_ELEMENT(self)->numsinkpads;
  GST_OBJECT_UNLOCK(self);
  return (int)(batch_size > 0 ? batch_size : MAX(pads, 1u));
}

/* The shape properties with this batch's slots: batch-size, or one slot per sink pad. */
static TensorShapeSettings shape_settings(const BatchSettings &s, int slots) {
  TensorShapeSettings t = s.tensor.shape_settings(slots);
  t.batch_set = s.batch_size > 0;
  t.batch_from_pads = s.batch_size == 0;
  return t;
}

/* The tensor's shape from downstream's caps, as cudatensorize takes it (tensor_caps.h): what
 * downstream leaves open takes the properties' values; a property set that contradicts it,
 * or a downstream that takes no tensor we make, is one error, posted once. */
static GstFlowReturn gst_cuda_tensor_batch_update_src_caps(GstAggregator *agg, GstCaps *downstream, GstCaps **ret) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  BatchState &state = self->impl->state;
  const BatchSettings settings = settings_snapshot(self);
  const TensorShapeSettings shape = shape_settings(settings, slots_wanted(self));
  const gboolean dynamic = settings.batch_mode == BATCH_MODE_DYNAMIC;
  gint fps_n, fps_d;
  fastest_framerate(self, &fps_n, &fps_d);
  GValue fps = G_VALUE_INIT;
  g_value_init(&fps, GST_TYPE_FRACTION);
  gst_value_set_fraction(&fps, fps_n, fps_d);
  /* CUDA memory first where the GPU runs: the tensor stays on the device. A dynamic batch's
   * buffers are trimmed to each tensor, which GstCudaMemory's buffers do not allow (resizing one
   * leaves it, or a copy of it, at the pool's size): its tensors are in (pinned) system memory. */
  const gboolean gpu = self->impl->core.device().gpu();
  GstCaps *ours = dynamic ? gst_cuda_prep_tensor_flexible_caps(&fps, FALSE, FALSE)
                          : gst_cuda_prep_tensor_open_caps(&fps, gpu, TRUE);
  g_value_unset(&fps);

  *ret = gst_caps_intersect_full(ours, downstream, GST_CAPS_INTERSECT_FIRST);
  if (gst_caps_is_empty(*ret)) {
    if (dynamic)
      state.refusal.post_no_flexible(GST_ELEMENT(self), "batch-mode=dynamic", ours, downstream);
    else
      state.refusal.post_no_intersection(GST_ELEMENT(self), ours, downstream);
    gst_caps_unref(ours);
    gst_clear_caps(ret);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  gst_caps_unref(ours);
  *ret = gst_caps_make_writable(gst_caps_truncate(*ret));
  state.pending_dynamic = dynamic;
  if (dynamic) {
    /* The shape is the properties': downstream reads each tensor's from its header. */
    state.pending_shape = shape.value;
    return GST_FLOW_OK;
  }
  gst_cuda_prep_tensor_fixate_shape(gst_caps_get_structure(*ret, 0), shape);
  Status st = gst_cuda_prep_tensor_shape_from_caps(*ret, shape, "cudatensorbatch", &state.pending_shape);
  if (!st.ok()) {
    state.refusal.post_contradiction(GST_ELEMENT(self), st, downstream);
    gst_clear_caps(ret);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  return GST_FLOW_OK;
}

/* Output plan and slot arrays for the negotiated batch: made here, never per
 * batch. */
static gboolean gst_cuda_tensor_batch_negotiated_src_caps(GstAggregator *agg, GstCaps *caps) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  BatchState &state = self->impl->state;
  CudaPrepDevice &device = self->impl->core.device();

  state.built_from = settings_snapshot(self, &state.built_version);
  state.have_output = FALSE;
  const int slots = state.pending_shape.batch;
  Status st = build_output(state.built_from.tensor.with_shape(state.pending_shape), slots, &state.spec, &state.output);
  if (!st.ok()) {
    post_settings_error(self, st, "at negotiation");
    return FALSE;
  }
  state.generation++;
  state.shape = state.pending_shape;
  state.slots = slots;
  state.output_cuda = gst_cuda_prep_caps_has_cuda_feature(caps, 0);
  state.dynamic = state.pending_dynamic;
  /* A dynamic batch's buffers are sized for the most slots a tensor holds, and trimmed to each. */
  state.bytes = (state.dynamic ? kFlexibleHeaderBytes : 0) + batch_bytes(state.output, state.slots);
  state.batch.assign(state.slots, BatchSlot());
  state.meta.assign(state.slots, CudaPrepSlotMeta());
  state.window.reserve(2 * state.slots);
  state.pads.reserve(state.slots + 8);

  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok()) return FALSE;
  if (device.gpu()) device.sync(); /* the last batch may still read the slot table reserve() replaces */
  st = state.tensorizer->reserve(state.slots);
  if (!st.ok()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Could not allocate CUDA memory"), ("%s", st.message().c_str()));
    return FALSE;
  }
  state.have_output = TRUE;
  GST_INFO_OBJECT(self, "%s batch of %d: tensor %dx%dx%d (%s, %s), %s path, output in %s memory",
                  state.dynamic ? "dynamic" : "fixed", state.slots, state.output.dst_width, state.output.dst_height,
                  state.output.channels, state.output.layout == Layout::NCHW ? "nchw" : "nhwc",
                  gst_cuda_prep_tensor_type_name(state.output.dtype), device.gpu() ? "CUDA" : "CPU",
                  state.output_cuda ? "CUDA" : "system");
  return TRUE;
}

static gboolean gst_cuda_tensor_batch_decide_allocation(GstAggregator *agg, GstQuery *query) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  const BatchState &state = self->impl->state;
  if (!state.have_output) return FALSE;
  return gst_cuda_prep_tensor_pool_decide(GST_ELEMENT(self), query, self->impl->core.device(), state.output_cuda,
                                          state.bytes);
}

static gboolean gst_cuda_tensor_batch_propose_allocation(GstAggregator *agg, GstAggregatorPad *pad,
                                                         GstQuery *decide_query, GstQuery *query) {
  /* Frames with padded rows or planes at offsets are read in place. */
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  /* Upstream's frames in a pool on our stream (1.24+): a decoder then writes each in the order
   * of our work, and the batch waits for none of them. */
  if (gst_query_get_n_allocation_pools(query) == 0)
    gst_cuda_prep_propose_frame_pool(GST_CUDA_TENSOR_BATCH(agg)->impl->core.device(), query, 0);
  return TRUE;
}

/* A pad's caps: its own size and format, parsed and staged for on the GPU. */
static gboolean configure_pad(GstCudaTensorBatch *self, GstCudaTensorBatchPad *pad, GstCaps *caps) {
  CudaPrepDevice &device = self->impl->core.device();
  CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
  if (!self->impl->core.check_memory(GST_ELEMENT(self), caps, GST_PAD_NAME(pad))) return FALSE;
  ps.have_caps = FALSE;
  ps.have_plan = FALSE;
  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok() || !ps.input.configure(GST_ELEMENT(self), device, caps)) return FALSE;
  ps.have_caps = TRUE;
  GST_INFO_OBJECT(pad, "%dx%d %s", GST_VIDEO_INFO_WIDTH(ps.input.info()), GST_VIDEO_INFO_HEIGHT(ps.input.info()),
                  GST_VIDEO_INFO_NAME(ps.input.info()));
  return TRUE;
}

static gboolean gst_cuda_tensor_batch_sink_event(GstAggregator *agg, GstAggregatorPad *aggpad, GstEvent *event) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    const gboolean ok = configure_pad(self, GST_CUDA_TENSOR_BATCH_PAD(aggpad), caps);
    /* The output framerate follows the fastest pad. */
    if (ok) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(agg));
    gst_event_unref(event); /* a video caps event is not for the tensor side */
    return ok;
  }
  return GST_AGGREGATOR_CLASS(parent_class)->sink_event(agg, aggpad, event);
}

static gboolean gst_cuda_tensor_batch_sink_query(GstAggregator *agg, GstAggregatorPad *pad, GstQuery *query) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  if (self->impl->core.answer_context_query(GST_ELEMENT(agg), query) ||
      self->impl->core.refuse_oversized_frame(GST_ELEMENT(agg), query))
    return TRUE;
  if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
    /* CUDA memory first where the GPU runs; without one, last. */
    GstCaps *caps = gst_cuda_prep_caps_order_memory(gst_cuda_prep_video_template_caps(),
                                                    self->impl->core.gpu_possible(GST_ELEMENT(self)), TRUE);
    GstCaps *filter = NULL;
    gst_query_parse_caps(query, &filter);
    if (filter) {
      GstCaps *tmp = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
      gst_caps_unref(caps);
      caps = tmp;
    }
    gst_query_set_caps_result(query, caps);
    gst_caps_unref(caps);
    return TRUE;
  }
  return GST_AGGREGATOR_CLASS(parent_class)->sink_query(agg, pad, query);
}

static gboolean gst_cuda_tensor_batch_src_query(GstAggregator *agg, GstQuery *query) {
  if (GST_CUDA_TENSOR_BATCH(agg)->impl->core.answer_context_query(GST_ELEMENT(agg), query)) return TRUE;
  return GST_AGGREGATOR_CLASS(parent_class)->src_query(agg, query);
}

static void gst_cuda_tensor_batch_set_context(GstElement *element, GstContext *context) {
  GST_CUDA_TENSOR_BATCH(element)->impl->core.set_context(element, context);
  GST_ELEMENT_CLASS(parent_class)->set_context(element, context);
}

/* ---- start / stop --------------------------------------------------------------------- */

/* model-info: the file is read (outside the lock) and its values set (model_info.h); batch-size 0
 * (one slot per pad) is a batch-size never set. */
static Status apply_model_info(GstCudaTensorBatch *self) {
  ModelInput model;
  bool have = false;
  CUDAPREP_RETURN_IF_ERROR(gst_cuda_prep_model_info_load(settings_snapshot(self).tensor, &model, &have));
  Status st;
  self->impl->settings.write(self, [&](BatchSettings &s) {
    ModelBatch batch{(int)s.batch_size, s.batch_size != 0, (int)BatchSettings().batch_size};
    st = gst_cuda_prep_model_info_apply(s.tensor, batch, have ? &model : NULL);
    s.batch_size = (guint)batch.value;
  });
  return st;
}

/* Settings that are wrong whatever the caps are refused here, once. */
static gboolean check_settings_at_start(GstCudaTensorBatch *self) {
  Status st = apply_model_info(self);
  const BatchSettings settings = settings_snapshot(self);
  const TensorizeSettings &s = settings.tensor;
  TensorOutputSpec spec;
  TensorOutputPlan output;
  if (st.ok()) st = build_output(s, slots_wanted(self), &spec, &output);
  std::vector<GstCudaTensorBatchPad *> pads;
  collect_pads(self, pads);
  if (st.ok()) st = gst_cuda_prep_region_settings_check(settings.regions, NULL);
  if (st.ok() && settings.batch_mode == BATCH_MODE_DYNAMIC && settings.batch_size == 0)
    st = Status::error(
        "batch-mode=dynamic needs a fixed batch-size: the most slots a tensor holds (its buffers are sized for it; "
        "a window with more gives several tensors)");
  for (size_t i = 0; st.ok() && i < pads.size(); i++) {
    const CudaTensorBatchPadSettings own = gst_cuda_tensor_batch_pad_settings(pads[i], NULL);
    RegionSettings regions;
    SlotSourceSpec source;
    SlotPlan plan;
    st = pad_regions(settings, own, &regions);
    if (st.ok()) st = gst_cuda_prep_slot_source(s, own.roi, NULL, &source);
    if (st.ok()) st = make_slot_plan(spec, source, &plan);
    if (!st.ok()) st = Status::error(std::string(GST_PAD_NAME(pads[i])) + ": " + st.message());
  }
  release_pads(pads);
  if (!st.ok()) {
    post_settings_error(self, st, "checked at start, before caps");
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_cuda_tensor_batch_start(GstAggregator *agg) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  GstCudaTensorBatchImpl *impl = self->impl;
  impl->state.posted_error.clear();
  impl->state.refusal.forget();
  if (!check_settings_at_start(self) || !impl->core.start(GST_ELEMENT(self))) return FALSE;
  impl->state.tensorizer =
      impl->core.device().gpu() ? make_tensorizer_cuda(impl->core.device().stream()) : make_tensorizer_cpu();
  return TRUE;
}

static gboolean gst_cuda_tensor_batch_stop(GstAggregator *agg) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  GstCudaTensorBatchImpl *impl = self->impl;
  BatchState &state = impl->state;
  std::vector<GstCudaTensorBatchPad *> pads;
  collect_pads(self, pads);
  {
    CudaPrepScopedContext ctx(impl->core.device(), GST_ELEMENT(self));
    impl->core.device().sync();
    for (GstCudaTensorBatchPad *pad : pads) {
      CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
      ps.input.reset();
      ps.have_caps = ps.have_plan = ps.warned_meta_skip = FALSE;
    }
    drop_released(self);
    state.tensorizer.reset(); /* its CUDA slot table needs the context */
  }
  release_pads(pads);
  state.have_output = FALSE;
  state.slots = 0;
  state.last_duration = GST_CLOCK_TIME_NONE;
  impl->core.stop();
  return TRUE;
}

/* ---- per batch ------------------------------------------------------------------------ */

/* The frame duration of @buffer on @pad: its own, else the pad's frame rate. */
static GstClockTime frame_duration(GstCudaTensorBatchPad *pad, GstBuffer *buffer) {
  if (GST_BUFFER_DURATION_IS_VALID(buffer)) return GST_BUFFER_DURATION(buffer);
  const GstVideoInfo *info = gst_cuda_tensor_batch_pad_state(pad).input.info();
  if (GST_VIDEO_INFO_FPS_N(info) > 0 && GST_VIDEO_INFO_FPS_D(info) > 0)
    return gst_util_uint64_scale_int(GST_SECOND, GST_VIDEO_INFO_FPS_D(info), GST_VIDEO_INFO_FPS_N(info));
  return GST_CLOCK_TIME_NONE;
}

static GstClockTime running_time(GstCudaTensorBatchPad *pad, GstBuffer *buffer) {
  GstAggregatorPad *aggpad = GST_AGGREGATOR_PAD(pad);
  GST_OBJECT_LOCK(pad);
  const GstClockTime rt = gst_segment_to_running_time(&aggpad->segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buffer));
  GST_OBJECT_UNLOCK(pad);
  return rt;
}

/* The batch window: it starts at the earliest pending frame and lasts that frame's duration;
 * a pad's frame belongs to this batch when it starts before the window ends (or when times
 * are unknown). */
struct BatchWindow {
  GstClockTime start = GST_CLOCK_TIME_NONE;
  GstClockTime duration = GST_CLOCK_TIME_NONE;
  gboolean takes(GstClockTime rt) const {
    return !GST_CLOCK_TIME_IS_VALID(rt) || !GST_CLOCK_TIME_IS_VALID(start) || !GST_CLOCK_TIME_IS_VALID(duration) ||
           rt < start + duration;
  }
};

static BatchWindow batch_window(const std::vector<GstCudaTensorBatchPad *> &pads, int slots) {
  BatchWindow w;
  for (int i = 0; i < slots && i < (int)pads.size(); i++) {
    GstBuffer *buf = gst_aggregator_pad_peek_buffer(GST_AGGREGATOR_PAD(pads[i]));
    if (!buf) continue;
    const GstClockTime rt = running_time(pads[i], buf);
    if (GST_CLOCK_TIME_IS_VALID(rt) && (!GST_CLOCK_TIME_IS_VALID(w.start) || rt < w.start)) {
      w.start = rt;
      w.duration = frame_duration(pads[i], buf);
    }
    gst_buffer_unref(buf);
  }
  return w;
}

/* Takes @pad's next frame when it belongs to this batch and maps it, with its regions (roi-meta:
 * this frame's); then appends the pad's slots to the window: one per region of its frame, or,
 * for a pad without rois and roi-meta, its one slot (empty without a frame). */
static gboolean take_frame(GstCudaTensorBatch *self, GstCudaTensorBatchPad *pad, const BatchWindow &w) {
  BatchState &state = self->impl->state;
  CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
  GstBuffer *buf = gst_aggregator_pad_peek_buffer(GST_AGGREGATOR_PAD(pad));
  gboolean take = FALSE;
  if (buf) {
    take = w.takes(running_time(pad, buf));
    gst_buffer_unref(buf);
  }
  if (take) ps.buffer = gst_aggregator_pad_pop_buffer(GST_AGGREGATOR_PAD(pad));
  /* A gap (GAP event, or a gap buffer) holds no frame. */
  const gboolean frame =
      ps.buffer && !(GST_BUFFER_FLAG_IS_SET(ps.buffer, GST_BUFFER_FLAG_GAP) && gst_buffer_get_size(ps.buffer) == 0);
  if (frame && !refresh_pad_plan(self, pad)) return FALSE;
  if (!frame) {
    /* The regions in use are those the plans were built with; before its first frame, the
     * pad's properties say. */
    gboolean regions = ps.have_plan && ps.regions.regions();
    if (!ps.have_plan) {
      RegionSettings r;
      regions = pad_regions(state.built_from, gst_cuda_tensor_batch_pad_settings(pad, NULL), &r).ok() && r.regions();
    }
    /* A dynamic batch holds no empty slot. */
    if (!regions && !state.dynamic) state.window.push_back(WindowSlot{pad, -1});
    return TRUE;
  }
  if (ps.regions.roi_meta) {
    Status st = gst_cuda_prep_region_plans_from_metas(&ps.plans, ps.regions, ps.buffer, &ps.meta_regions);
    if (!st.ok()) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Bad region of interest"),
                        ("%s: %s", GST_PAD_NAME(pad), st.message().c_str()));
      return FALSE;
    }
    if (!ps.plans.skipped.empty() && !ps.warned_meta_skip) {
      ps.warned_meta_skip = TRUE;
      GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("Regions skipped"),
                          ("%s: %s (warned once per stream)", GST_PAD_NAME(pad), ps.plans.skipped.c_str()));
    }
  }
  if (ps.plans.size() == 0) return TRUE; /* no region in this frame: no slot */
  if (!ps.input.map(GST_ELEMENT(self), self->impl->core.device(), ps.buffer, FALSE, &ps.frame, &ps.view)) return FALSE;
  ps.mapped = TRUE;
  for (size_t r = 0; r < ps.plans.size(); r++) state.window.push_back(WindowSlot{pad, (int)r});
  return TRUE;
}

/* Unmaps and drops the frames of this batch. */
static gboolean finish_slots(GstCudaTensorBatch *self) {
  CudaPrepScopedContext ctx(self->impl->core.device(), GST_ELEMENT(self));
  gboolean ok = ctx.ok();
  for (GstCudaTensorBatchPad *pad : self->impl->state.pads) {
    CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
    if (ps.mapped) ok &= ps.input.unmap(GST_ELEMENT(self), self->impl->core.device(), &ps.frame, FALSE);
    ps.mapped = FALSE;
    gst_clear_buffer(&ps.buffer);
  }
  self->impl->state.window.clear();
  return ok;
}

/* The slots of tensor @k of this window: B, or with a dynamic batch those of the window left
 * for it (at most B). */
static int tensor_slots(const BatchState &state, size_t k) {
  if (!state.dynamic) return state.slots;
  return (int)MIN((size_t)state.slots, state.window.size() - k * state.slots);
}

/* Fills the @count slots of tensor @k of this window: window slots [k * B, k * B + count), the
 * rest empty. */
static void fill_slots(GstCudaTensorBatch *self, size_t k, int count) {
  BatchState &state = self->impl->state;
  for (int i = 0; i < count; i++) {
    const size_t n = k * state.slots + i;
    BatchSlot &slot = state.batch[i];
    CudaPrepSlotMeta &meta = state.meta[i];
    slot.empty = true;
    meta = CudaPrepSlotMeta();
    meta.empty = true;
    meta.transform.dst_width = state.output.dst_width;
    meta.transform.dst_height = state.output.dst_height;
    if (n >= state.window.size()) continue; /* no pad or region for this slot */
    const WindowSlot &ws = state.window[n];
    CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(ws.pad);
    meta.source_pad = GST_PAD_NAME(ws.pad);
    if (ps.buffer) meta.source_pts = GST_BUFFER_PTS(ps.buffer);
    if (ws.region < 0) continue;
    slot.plan = ps.plans.regions[ws.region];
    slot.src = ps.view;
    slot.empty = false;
    meta.empty = false;
    meta.transform = slot.plan.transform;
    meta.source_rect = slot.plan.roi;
    meta.region_index = ps.plans.region_index[ws.region];
    meta.region_id = ps.plans.region_id[ws.region];
  }
}

/* The flexible tensor's header (tensor_caps.h) of a batch of @count slots at @dst, the start of
 * the tensor's memory: copied on the element's stream on the GPU path, before the kernel. */
static Status write_header(GstCudaTensorBatch *self, uint8_t *dst, int count) {
  BatchState &state = self->impl->state;
  TensorShape shape = state.shape;
  shape.batch = count;
  gst_cuda_prep_tensor_flexible_header(shape, state.header);
  if (!state.tensorizer->on_device()) {
    memcpy(dst, state.header, kFlexibleHeaderBytes);
    return Status();
  }
  return cuda::copy_2d_async(dst, kFlexibleHeaderBytes, state.header, kFlexibleHeaderBytes, kFlexibleHeaderBytes, 1,
                             cuda::CopyKind::HostToDevice, self->impl->core.device().stream());
}

/* Tensor @k of this window into @outbuf in one pass, with its transform meta (attached while the
 * GPU works); on return the tensor is complete in memory, or left on the element's stream that
 * its memory carries (see gst_cuda_prep_write_tensor). */
static GstFlowReturn write_tensor(GstCudaTensorBatch *self, GstBuffer *outbuf, size_t k, size_t tensors) {
  BatchState &state = self->impl->state;
  CudaPrepDevice &device = self->impl->core.device();
  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok()) return GST_FLOW_ERROR;
  const int count = tensor_slots(state, k);
  fill_slots(self, k, count);
  TensorizeBatch batch;
  batch.output = state.output;
  batch.slots = state.batch.data();
  batch.count = count;
  const gsize header = state.dynamic ? kFlexibleHeaderBytes : 0;
  const gsize bytes = header + batch_bytes(state.output, count);
  gst_buffer_set_size(outbuf, bytes);
  if (gst_buffer_get_size(outbuf) != bytes) { /* a buffer that cannot be trimmed: never a wrong size */
    GST_ELEMENT_ERROR(
        self, RESOURCE, FAILED, ("Could not size the output buffer"),
        ("a tensor of %" G_GSIZE_FORMAT " bytes in a buffer of %" G_GSIZE_FORMAT, bytes, gst_buffer_get_size(outbuf)));
    return GST_FLOW_ERROR;
  }
  /* The slots' frames go back to their producers once unmapped, and the batch holds none: it
   * waits for its kernel unless every frame is ordered on its stream (frame_lifetime.h). */
  state.lifetime.begin_output(FALSE);
  for (GstCudaTensorBatchPad *pad : state.pads) {
    CudaTensorBatchPadState &ps = gst_cuda_tensor_batch_pad_state(pad);
    if (ps.mapped) state.lifetime.add_input(ps.buffer, ps.input.stream_ordered(device, &ps.frame));
  }
  TensorOutputTarget target;
  Status st = target.begin(device, state.tensorizer->on_device(), state.output_cuda, outbuf, 0);
  if (st.ok() && state.dynamic) st = write_header(self, target.data(), count);
  if (st.ok()) st = state.tensorizer->run_batch(batch, target.data() + header, bytes - header); /* every row */
  if (st.ok()) state.transform_meta.attach(outbuf, state.meta.data(), count, (int)k, (int)tensors);
  st = target.finish(device, state.built_from.tensor.gpu_wait, state.lifetime, std::move(st));
  if (!st.ok()) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Batch tensorize failed"), ("%s", st.message().c_str()));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* Takes this window's frames (mapped with the context current) and lists their slots. */
static gboolean take_frames(GstCudaTensorBatch *self, const BatchWindow &w) {
  BatchState &state = self->impl->state;
  CudaPrepScopedContext ctx(self->impl->core.device(), GST_ELEMENT(self));
  if (!ctx.ok()) return FALSE;
  state.window.clear();
  gboolean ok = TRUE;
  for (int i = 0; ok && i < state.slots && i < (int)state.pads.size(); i++) ok = take_frame(self, state.pads[i], w);
  return ok;
}

/* A window without slot of a dynamic batch gives no tensor: a GAP event covers its time, so that
 * downstream's position advances. Only once a tensor has gone out (the stream's first tensor
 * carries the segment that a GAP needs before it). */
static void push_gap(GstCudaTensorBatch *self, const BatchWindow &w) {
  if (!GST_CLOCK_TIME_IS_VALID(w.start)) return;
  GstPad *srcpad = GST_AGGREGATOR_SRC_PAD(self);
  GstEvent *segment = gst_pad_get_sticky_event(srcpad, GST_EVENT_SEGMENT, 0);
  if (!segment) return;
  gst_event_unref(segment);
  gst_pad_push_event(srcpad, gst_event_new_gap(w.start, w.duration));
}

/* The tensors of window @w: its frames taken and their slots listed in pad order (pad 0's,
 * then pad 1's, ...), then ceil(slots / B) tensors with the window's timestamps (a fixed batch:
 * at least one; a dynamic one: none, a GAP instead, when the window has no slot),
 * each pushed (without the CUDA context current) before the next is made. */
static GstFlowReturn run_window(GstCudaTensorBatch *self, const BatchWindow &w) {
  GstAggregator *agg = GST_AGGREGATOR(self);
  BatchState &state = self->impl->state;
  GstAggregatorPad *srcpad = GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(agg));
  if (!take_frames(self, w)) {
    finish_slots(self);
    return GST_FLOW_ERROR;
  }
  /* A fixed batch gives at least one tensor (all slots empty); a dynamic one none when the
   * window has no slot. */
  const size_t tensors = MAX((size_t)(state.dynamic ? 0 : 1), (state.window.size() + state.slots - 1) / state.slots);
  GstBufferPool *pool = gst_aggregator_get_buffer_pool(agg);
  if (!pool) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("No output buffer pool"), (NULL));
    finish_slots(self);
    return GST_FLOW_ERROR;
  }
  if (!gst_buffer_pool_is_active(pool)) gst_buffer_pool_set_active(pool, TRUE);
  state.last_duration = w.duration;
  GST_OBJECT_LOCK(self);
  if (GST_CLOCK_TIME_IS_VALID(w.start))
    srcpad->segment.position = w.start + (GST_CLOCK_TIME_IS_VALID(w.duration) ? w.duration : 0);
  GST_OBJECT_UNLOCK(self);
  gst_aggregator_selected_samples(agg, w.start, GST_CLOCK_TIME_NONE, w.duration, NULL);
  GstFlowReturn ret = GST_FLOW_OK;
  for (size_t k = 0; k < tensors && ret == GST_FLOW_OK; k++) {
    GstBuffer *outbuf = NULL;
    ret = gst_buffer_pool_acquire_buffer(pool, &outbuf, NULL);
    if (ret != GST_FLOW_OK) break;
    ret = write_tensor(self, outbuf, k, tensors);
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref(outbuf);
      break;
    }
    GST_BUFFER_PTS(outbuf) = w.start;
    GST_BUFFER_DURATION(outbuf) = w.duration;
    ret = gst_aggregator_finish_buffer(agg, outbuf);
  }
  if (tensors == 0) push_gap(self, w);
  gst_object_unref(pool);
  const gboolean unmapped = finish_slots(self);
  return ret == GST_FLOW_OK && !unmapped ? GST_FLOW_ERROR : ret;
}

static gboolean all_eos(const std::vector<GstCudaTensorBatchPad *> &pads) {
  for (GstCudaTensorBatchPad *pad : pads)
    if (!gst_aggregator_pad_is_eos(GST_AGGREGATOR_PAD(pad)) || gst_aggregator_pad_has_buffer(GST_AGGREGATOR_PAD(pad)))
      return FALSE;
  return TRUE;
}

static gboolean any_buffer(const std::vector<GstCudaTensorBatchPad *> &pads, int slots) {
  for (int i = 0; i < slots && i < (int)pads.size(); i++)
    if (gst_aggregator_pad_has_buffer(GST_AGGREGATOR_PAD(pads[i]))) return TRUE;
  return FALSE;
}

/* A live timeout found no frame at all: no batch. The next deadline is one batch period from
 * now, so that stalled sources are polled at the batch rate rather than in a busy loop. */
static void defer_deadline(GstCudaTensorBatch *self) {
  GstAggregator *agg = GST_AGGREGATOR(self);
  GstClock *clock = gst_element_get_clock(GST_ELEMENT(self));
  if (!clock) return;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(GST_ELEMENT(self));
  const GstClockTime last = self->impl->state.last_duration;
  const GstClockTime latency = gst_aggregator_get_latency(agg);
  GstClockTime step = 10 * GST_MSECOND;
  if (GST_CLOCK_TIME_IS_VALID(last) && last > 0)
    step = last;
  else if (GST_CLOCK_TIME_IS_VALID(latency))
    step = MAX(latency, step);
  GstAggregatorPad *srcpad = GST_AGGREGATOR_PAD(GST_AGGREGATOR_SRC_PAD(agg));
  GST_OBJECT_LOCK(self);
  srcpad->segment.position = (now > base ? now - base : 0) + step;
  GST_OBJECT_UNLOCK(self);
}

static GstFlowReturn make_batch(GstCudaTensorBatch *self) {
  BatchState &state = self->impl->state;

  if (!state.have_output) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION,
                      ("No output caps negotiated before the first "
                       "batch"),
                      (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!state.pads.empty() && all_eos(state.pads)) return GST_FLOW_EOS;
  if (!any_buffer(state.pads, state.slots)) {
    defer_deadline(self);
    return GST_AGGREGATOR_FLOW_NEED_DATA;
  }
  if (!refresh_output(self)) return GST_FLOW_ERROR;

  return run_window(self, batch_window(state.pads, state.slots));
}

/* The time the next batch's deadline counts from (the aggregator waits "latency" past it for the
 * other pads): its earliest frame, so that a batch never leaves before its own time plus the
 * latency; with no frame queued, the source pad's position, which defer_deadline moves on. */
static GstClockTime gst_cuda_tensor_batch_get_next_time(GstAggregator *agg) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  BatchState &state = self->impl->state; /* the aggregate thread's, as in aggregate */
  collect_pads(self, state.pads);
  const BatchWindow w = batch_window(state.pads, state.slots);
  release_pads(state.pads);
  return GST_CLOCK_TIME_IS_VALID(w.start) ? w.start : gst_aggregator_simple_get_next_time(agg);
}

static GstFlowReturn gst_cuda_tensor_batch_aggregate(GstAggregator *agg, gboolean timeout) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(agg);
  BatchState &state = self->impl->state;
  drop_released(self);
  collect_pads(self, state.pads);
  /* A timeout only means that some pads have no frame: their slots are empty. */
  GstFlowReturn ret = make_batch(self);
  release_pads(state.pads);
  return ret;
}

/* ---- properties ----------------------------------------------------------------------- */

static void gst_cuda_tensor_batch_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(object);
  GstCudaTensorBatchImpl *impl = self->impl;
  if (impl->core.set_property(object, prop_id - PROP_CORE_FIRST, value, pspec)) return;
  if ((pspec->flags & GST_PARAM_MUTABLE_READY) && !gst_cuda_prep_ready_property_changeable(object, pspec)) return;
  gboolean shape_changed = FALSE, known = TRUE;
  impl->settings.write(self, [&](BatchSettings &s) {
    if (prop_id == PROP_BATCH_SIZE) {
      s.batch_size = g_value_get_uint(value);
      s.tensor.model_set &= ~MODEL_FIELD_BATCH;
    } else if (prop_id == PROP_BATCH_MODE)
      s.batch_mode = g_value_get_enum(value);
    else if (prop_id >= PROP_REGION_FIRST && prop_id < PROP_CORE_FIRST)
      gst_cuda_prep_region_property_set(s.regions, prop_id - PROP_REGION_FIRST, value);
    else
      known = prop_id >= PROP_TENSOR_FIRST &&
              gst_cuda_prep_tensor_property_set(s.tensor, prop_id - PROP_TENSOR_FIRST, value, &shape_changed);
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  /* Streaming state is never touched here: the streaming thread sees the new settings before
   * the next batch; a new tensor shape goes through renegotiation. */
  if (shape_changed) gst_pad_mark_reconfigure(GST_AGGREGATOR_SRC_PAD(self));
}

static void gst_cuda_tensor_batch_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstCudaTensorBatch *self = GST_CUDA_TENSOR_BATCH(object);
  GstCudaTensorBatchImpl *impl = self->impl;
  if (impl->core.get_property(object, prop_id - PROP_CORE_FIRST, value)) return;
  const gboolean known = impl->settings.read(self, [&](const BatchSettings &s) -> gboolean {
    if (prop_id == PROP_BATCH_SIZE) {
      g_value_set_uint(value, s.batch_size);
      return TRUE;
    }
    if (prop_id == PROP_BATCH_MODE) {
      g_value_set_enum(value, s.batch_mode);
      return TRUE;
    }
    if (prop_id >= PROP_REGION_FIRST && prop_id < PROP_CORE_FIRST)
      return gst_cuda_prep_region_property_get(s.regions, prop_id - PROP_REGION_FIRST, value);
    return (gboolean)(prop_id >= PROP_TENSOR_FIRST &&
                      gst_cuda_prep_tensor_property_get(s.tensor, prop_id - PROP_TENSOR_FIRST, value));
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_tensor_batch_finalize(GObject *object) {
  drop_released(GST_CUDA_TENSOR_BATCH(object));
  delete GST_CUDA_TENSOR_BATCH(object)->impl;
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_cuda_tensor_batch_class_init(GstCudaTensorBatchClass *klass) {
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstAggregatorClass *agg_class = GST_AGGREGATOR_CLASS(klass);
  const GParamFlags ready_only = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  gobject_class->set_property = gst_cuda_tensor_batch_set_property;
  gobject_class->get_property = gst_cuda_tensor_batch_get_property;
  gobject_class->finalize = gst_cuda_tensor_batch_finalize;

  g_object_class_install_property(
      gobject_class, PROP_BATCH_SIZE,
      g_param_spec_uint("batch-size", "Batch size",
                        "Slots per batch (B of the output dimensions). 0: one slot per sink pad, changing "
                        "at the next batch when pads are requested or released. A fixed size keeps the caps "
                        "static: slots without a pad or region are empty, more regions than slots give "
                        "several tensors for the batch (same timestamps), and no more pads than slots can be "
                        "requested. Pads with rois or roi-meta need a fixed size. With batch-mode=dynamic: the "
                        "most slots a tensor holds. NULL/READY only",
                        0, kMaxBatchSlots, BatchSettings().batch_size, ready_only));
  g_object_class_install_property(
      gobject_class, PROP_BATCH_MODE,
      g_param_spec_enum("batch-mode", "Batch mode",
                        "fixed: every tensor has batch-size slots (static caps W:H:C:B), empty ones where a window "
                        "has fewer frames or regions. dynamic: each tensor holds exactly its window's slots (at "
                        "most batch-size, which it needs; more give several tensors), no empty slot, and a window "
                        "without any gives no tensor but a GAP event; the caps are other/tensors,format=flexible "
                        "(NNStreamer's flexible tensors: each buffer starts with a 128-byte GstTensorMetaInfo "
                        "header giving W:H:C:K, then the tensor), and a downstream that takes only static caps is "
                        "a negotiation error. NULL/READY only",
                        batch_mode_get_type(), BatchSettings().batch_mode, ready_only));
  gst_cuda_prep_region_properties_install(gobject_class, PROP_REGION_FIRST, ~(1u << REGION_PROP_ROIS),
                                          REGION_SCOPE_BATCH);
  CudaPrepElementCore::install_properties(gobject_class, PROP_CORE_FIRST);
  gst_cuda_prep_tensor_properties_install(gobject_class, PROP_TENSOR_FIRST);

  gst_element_class_set_static_metadata(
      element_class, "CUDA tensor batch", "Filter/Converter/Video/Scaler/Hardware",
      "Batches N video streams into one tensor W:H:C:B, each slot resized, "
      "colour-converted and normalised as cudatensorize would, in one CUDA kernel per batch "
      "(CPU fallback)",
      "gst-cudaprep developers");
  gst_element_class_add_pad_template(
      element_class,
      gst_pad_template_new_with_gtype("sink_%u", GST_PAD_SINK, GST_PAD_REQUEST, gst_cuda_prep_video_template_caps(),
                                      GST_TYPE_CUDA_TENSOR_BATCH_PAD));
  GstCaps *src_caps = gst_cuda_prep_tensor_template_caps();
  gst_element_class_add_pad_template(element_class, gst_pad_template_new_with_gtype("src", GST_PAD_SRC, GST_PAD_ALWAYS,
                                                                                    src_caps, GST_TYPE_AGGREGATOR_PAD));
  gst_caps_unref(src_caps);

  element_class->request_new_pad = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_request_new_pad);
  element_class->release_pad = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_release_pad);
  element_class->set_context = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_set_context);
  agg_class->aggregate = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_aggregate);
  agg_class->start = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_start);
  agg_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_stop);
  agg_class->get_next_time = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_get_next_time);
  agg_class->update_src_caps = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_update_src_caps);
  agg_class->negotiated_src_caps = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_negotiated_src_caps);
  agg_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_decide_allocation);
  agg_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_propose_allocation);
  agg_class->sink_event = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_sink_event);
  agg_class->sink_query = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_sink_query);
  agg_class->src_query = GST_DEBUG_FUNCPTR(gst_cuda_tensor_batch_src_query);

  gst_type_mark_as_plugin_api(GST_TYPE_CUDA_TENSOR_BATCH_PAD, (GstPluginAPIFlags)0);
  GST_DEBUG_CATEGORY_INIT(gst_cuda_tensor_batch_debug, "cudatensorbatch", 0, "cudatensorbatch element");
}

static void gst_cuda_tensor_batch_init(GstCudaTensorBatch *self) { self->impl = new GstCudaTensorBatchImpl(); }
