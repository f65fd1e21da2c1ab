/* regressdetect: a test element standing for a detector that is not the project's own. On each
 * buffer it adds three detections at deterministic boxes (moving with the frame number) as
 * GstVideoRegionOfInterestMetas (roi-type the class, a "detection" parameter structure with the
 * confidence) and, where GStreamer's analytics library is there (1.24+), as GstAnalyticsODMtds,
 * each with a related GstAnalyticsClsMtd, plus a ClsMtd of the whole buffer. Knobs perturb one of
 * the detections (target) from a frame on: shift it, drop it, change its class, its confidence
 * or the confidence of its first class. With tensor=true (GStreamer 1.26) the confidences also go
 * out as a GstTensorMeta: a 1x3 float32 tensor "scores".
 *
 *   0: person [100 + 4f, 200, 60, 120] confidence 0.9, classes adult 0.7, child 0.3
 *   1: person [400, 150 + 2f, 50, 100] confidence 0.8, classes adult 0.6, child 0.4
 *   2: car    [500, 350, 160, 80]      confidence 0.75, classes sedan 0.6, van 0.4
 *   the buffer: outdoor 0.95, indoor 0.05
 */
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "config.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif
#if CUDAPREP_HAVE_TENSOR_META
#include <gst/analytics/gsttensormeta.h>
#endif

typedef struct {
  GstBaseTransform parent;
  gint target, shift, from_frame;
  gboolean drop, roi, analytics, tensor;
  gchar *relabel;
  gdouble confidence, cls_delta;
  guint64 frame;
} RegressDetect;

typedef struct {
  GstBaseTransformClass parent_class;
} RegressDetectClass;

enum {
  PROP_0,
  PROP_TARGET,
  PROP_SHIFT,
  PROP_DROP,
  PROP_RELABEL,
  PROP_CONFIDENCE,
  PROP_CLS_DELTA,
  PROP_FROM_FRAME,
  PROP_ROI,
  PROP_ANALYTICS,
  PROP_TENSOR
};

GType regress_detect_get_type(void);
G_DEFINE_TYPE(RegressDetect, regress_detect, GST_TYPE_BASE_TRANSFORM)

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
  RegressDetect *self = (RegressDetect *)object;
  switch (id) {
    case PROP_TARGET: self->target = g_value_get_int(value); break;
    case PROP_SHIFT: self->shift = g_value_get_int(value); break;
    case PROP_DROP: self->drop = g_value_get_boolean(value); break;
    case PROP_RELABEL:
      g_free(self->relabel);
      self->relabel = g_value_dup_string(value);
      break;
    case PROP_CONFIDENCE: self->confidence = g_value_get_double(value); break;
    case PROP_CLS_DELTA: self->cls_delta = g_value_get_double(value); break;
    case PROP_FROM_FRAME: self->from_frame = g_value_get_int(value); break;
    case PROP_ROI: self->roi = g_value_get_boolean(value); break;
    case PROP_ANALYTICS: self->analytics = g_value_get_boolean(value); break;
    case PROP_TENSOR: self->tensor = g_value_get_boolean(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
  RegressDetect *self = (RegressDetect *)object;
  switch (id) {
    case PROP_TARGET: g_value_set_int(value, self->target); break;
    case PROP_SHIFT: g_value_set_int(value, self->shift); break;
    case PROP_DROP: g_value_set_boolean(value, self->drop); break;
    case PROP_RELABEL: g_value_set_string(value, self->relabel); break;
    case PROP_CONFIDENCE: g_value_set_double(value, self->confidence); break;
    case PROP_CLS_DELTA: g_value_set_double(value, self->cls_delta); break;
    case PROP_FROM_FRAME: g_value_set_int(value, self->from_frame); break;
    case PROP_ROI: g_value_set_boolean(value, self->roi); break;
    case PROP_ANALYTICS: g_value_set_boolean(value, self->analytics); break;
    case PROP_TENSOR: g_value_set_boolean(value, self->tensor); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static gboolean start(GstBaseTransform *trans) {
  ((RegressDetect *)trans)->frame = 0;
  return TRUE;
}

static GstFlowReturn transform_ip(GstBaseTransform *trans, GstBuffer *buf) {
  RegressDetect *self = (RegressDetect *)trans;
  const gint f = (gint)self->frame++;
  const gboolean on = f >= self->from_frame;
  struct {
    const gchar *label;
    gint x, y, w, h;
    gdouble conf;
    const gchar *cls[2];
    gdouble cls_conf[2];
  } dets[3] = {
      {"person", 100 + 4 * f, 200, 60, 120, 0.9, {"adult", "child"}, {0.7, 0.3}},
      {"person", 400, 150 + 2 * f, 50, 100, 0.8, {"adult", "child"}, {0.6, 0.4}},
      {"car", 500, 350, 160, 80, 0.75, {"sedan", "van"}, {0.6, 0.4}},
  };
  for (gint i = 0; i < 3; i++) {
    if (!on || i != self->target) continue;
    dets[i].x += self->shift;
    if (self->relabel && *self->relabel) dets[i].label = self->relabel;
    if (self->confidence >= 0) dets[i].conf = self->confidence;
    dets[i].cls_conf[0] += self->cls_delta;
  }
  for (gint i = 0; i < 3; i++) {
    if (on && self->drop && i == self->target) continue;
    if (self->roi) {
      GstVideoRegionOfInterestMeta *roi =
          gst_buffer_add_video_region_of_interest_meta(buf, dets[i].label, dets[i].x, dets[i].y, dets[i].w, dets[i].h);
      gst_video_region_of_interest_meta_add_param(
          roi, gst_structure_new("detection", "confidence", G_TYPE_DOUBLE, dets[i].conf, NULL));
    }
#if CUDAPREP_HAVE_ANALYTICS_OD
    if (self->analytics) {
      GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta(buf);
      if (!rmeta) rmeta = gst_buffer_add_analytics_relation_meta(buf);
      GstAnalyticsODMtd od;
      GstAnalyticsClsMtd cls;
      gfloat levels[2] = {(gfloat)dets[i].cls_conf[0], (gfloat)dets[i].cls_conf[1]};
      GQuark quarks[2] = {g_quark_from_string(dets[i].cls[0]), g_quark_from_string(dets[i].cls[1])};
      gst_analytics_relation_meta_add_od_mtd(rmeta, g_quark_from_string(dets[i].label), dets[i].x, dets[i].y, dets[i].w,
                                             dets[i].h, (gfloat)dets[i].conf, &od);
      gst_analytics_relation_meta_add_cls_mtd(rmeta, 2, levels, quarks, &cls);
      gst_analytics_relation_meta_set_relation(rmeta, GST_ANALYTICS_REL_TYPE_RELATE_TO, od.id, cls.id);
    }
#endif
  }
#if CUDAPREP_HAVE_ANALYTICS_OD
  if (self->analytics) {
    GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta(buf);
    if (!rmeta) rmeta = gst_buffer_add_analytics_relation_meta(buf);
    gfloat levels[2] = {0.95f, 0.05f};
    GQuark quarks[2] = {g_quark_from_string("outdoor"), g_quark_from_string("indoor")};
    GstAnalyticsClsMtd scene;
    gst_analytics_relation_meta_add_cls_mtd(rmeta, 2, levels, quarks, &scene);
  }
#endif
#if CUDAPREP_HAVE_TENSOR_META
  if (self->tensor) {
    /* the detections' confidences as a 1x3 float32 tensor "scores" (a dropped one scores 0) */
    gfloat scores[3];
    for (gint i = 0; i < 3; i++) scores[i] = (on && self->drop && i == self->target) ? 0.0f : (gfloat)dets[i].conf;
    gsize dims[2] = {1, 3};
    GstTensor **tensors = g_new0(GstTensor *, 1);
    tensors[0] =
        gst_tensor_new_simple(g_quark_from_string("scores"), GST_TENSOR_DATA_TYPE_FLOAT32,
                              gst_buffer_new_memdup(scores, sizeof scores), GST_TENSOR_DIM_ORDER_ROW_MAJOR, 2, dims);
    gst_tensor_meta_set(gst_buffer_add_tensor_meta(buf), 1, tensors);
  }
#endif
  return GST_FLOW_OK;
}

static void finalize(GObject *object) {
  g_free(((RegressDetect *)object)->relabel);
  G_OBJECT_CLASS(regress_detect_parent_class)->finalize(object);
}

static void regress_detect_class_init(RegressDetectClass *klass) {
  GObjectClass *oc = G_OBJECT_CLASS(klass);
  GstElementClass *ec = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *tc = GST_BASE_TRANSFORM_CLASS(klass);
  oc->set_property = set_property;
  oc->get_property = get_property;
  oc->finalize = finalize;
  const GParamFlags rw = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_property(oc, PROP_TARGET,
                                  g_param_spec_int("target", "Target", "Detection the knobs change", 0, 2, 0, rw));
  g_object_class_install_property(oc, PROP_SHIFT,
                                  g_param_spec_int("shift", "Shift", "Pixels added to x", -1000, 1000, 0, rw));
  g_object_class_install_property(oc, PROP_DROP, g_param_spec_boolean("drop", "Drop", "Leave it out", FALSE, rw));
  g_object_class_install_property(oc, PROP_RELABEL,
                                  g_param_spec_string("relabel", "Relabel", "Another class", NULL, rw));
  g_object_class_install_property(
      oc, PROP_CONFIDENCE,
      g_param_spec_double("confidence", "Confidence", "Its confidence (-1: as is)", -1, 1, -1, rw));
  g_object_class_install_property(
      oc, PROP_CLS_DELTA,
      g_param_spec_double("cls-delta", "Class delta", "Added to the confidence of its first class", -1, 1, 0, rw));
  g_object_class_install_property(
      oc, PROP_FROM_FRAME, g_param_spec_int("from-frame", "From frame", "First frame perturbed", 0, G_MAXINT, 0, rw));
  g_object_class_install_property(oc, PROP_ROI, g_param_spec_boolean("roi", "ROI metas", "Add ROI metas", TRUE, rw));
  g_object_class_install_property(oc, PROP_ANALYTICS,
                                  g_param_spec_boolean("analytics", "Analytics", "Add ODMtds and ClsMtds", TRUE, rw));
  g_object_class_install_property(
      oc, PROP_TENSOR,
      g_param_spec_boolean("tensor", "Tensor", "Add a GstTensorMeta of the confidences (GStreamer 1.26)", FALSE, rw));
  gst_element_class_add_static_pad_template(ec, &sink_template);
  gst_element_class_add_static_pad_template(ec, &src_template);
  gst_element_class_set_static_metadata(ec, "Regress detections", "Filter/Analyzer/Video",
                                        "Adds deterministic detections (a test producer)", "cudaprep tests");
  tc->transform_ip = transform_ip;
  tc->start = start;
}

static void regress_detect_init(RegressDetect *self) {
  self->confidence = -1;
  self->roi = TRUE;
  self->analytics = TRUE;
}

static gboolean plugin_init(GstPlugin *plugin) {
  return gst_element_register(plugin, "regressdetect", GST_RANK_NONE, regress_detect_get_type());
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, regressdetect, "Test producer of detections", plugin_init,
                  VERSION, "LGPL", "regressdetect", "https://example.invalid")
