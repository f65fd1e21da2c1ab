/* cudatensorize roi-meta: a frame's regions from GstVideoRegionOfInterestMeta and GstAnalyticsODMtd. */
#include "enum_types.h"
#include "meta_regions.h"

#include <gst/video/video.h>

#include <algorithm>

#include "config.h"
#include "tensorize.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif

using namespace cudaprep;

GType gst_cuda_prep_roi_source_get_type(void) {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_PREP_ROI_SOURCE_AUTO,
       "The frame's GstAnalyticsODMtds if it has any, else its GstVideoRegionOfInterestMetas", "auto"},
      {GST_CUDA_PREP_ROI_SOURCE_ROI_META, "GstVideoRegionOfInterestMeta only", "roi-meta"},
      {GST_CUDA_PREP_ROI_SOURCE_ANALYTICS, "GstAnalyticsODMtd only (GStreamer 1.24+)", "analytics"},
      {0, NULL, NULL}};
  return gst_cuda_prep_register_enum(&type, "GstCudaTensorizeRoiSource", values);
}

gboolean gst_cuda_prep_have_analytics_od(void) { return CUDAPREP_HAVE_ANALYTICS_OD ? TRUE : FALSE; }

Status gst_cuda_prep_parse_region_classes(const std::string &text, std::vector<GQuark> *classes) {
  classes->clear();
  if (text.empty()) return Status();
  gchar **names = g_strsplit(text.c_str(), ",", -1);
  Status st;
  for (guint i = 0; names[i]; i++) {
    const gchar *name = g_strstrip(names[i]);
    if (!*name) {
      st = Status::error("roi-type \"" + text + "\": class " + std::to_string(i + 1) +
                         " is empty (a comma-separated list of class names, e.g. \"car,truck\")");
      break;
    }
    classes->push_back(g_quark_from_string(name));
  }
  g_strfreev(names);
  return st;
}

static bool passes(const MetaRegionFilter &f, GQuark type, int w, int h) {
  if (!f.classes.empty() && std::find(f.classes.begin(), f.classes.end(), type) == f.classes.end()) return false;
  w = MAX(w, 0); /* a detector's negative size is an empty box */
  h = MAX(h, 0);
  return w >= f.min_size && h >= f.min_size && (f.max_size <= 0 || (w <= f.max_size && h <= f.max_size));
}

static void collect_roi_metas(GstBuffer *buffer, const MetaRegionFilter &filter, std::vector<MetaRegion> *out) {
  gpointer iter = NULL;
  int index = 0;
  while (GstMeta *m = gst_buffer_iterate_meta_filtered(buffer, &iter, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const GstVideoRegionOfInterestMeta *roi = (const GstVideoRegionOfInterestMeta *)m;
    const int i = index++;
    const Rect r{(int)MIN(roi->x, (guint)kMaxSourceSide), (int)MIN(roi->y, (guint)kMaxSourceSide),
                 (int)MIN(roi->w, (guint)kMaxSourceSide), (int)MIN(roi->h, (guint)kMaxSourceSide)};
    if (passes(filter, roi->roi_type, r.w, r.h)) out->push_back(MetaRegion{r, i, roi->id, "region meta"});
  }
}

#if CUDAPREP_HAVE_ANALYTICS_OD
/* Rotated boxes (GStreamer 1.26) come as the upright box around them: that is what
 * gst_analytics_od_mtd_get_location reports, and the crop then holds the whole object. */
static void collect_od_mtds(GstAnalyticsRelationMeta *rmeta, const MetaRegionFilter &filter,
                            std::vector<MetaRegion> *out) {
  gpointer state = NULL;
  GstAnalyticsODMtd od;
  int index = 0;
  while (gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_od_mtd_get_mtd_type(), &od)) {
    const int i = index++;
    gint x, y, w, h;
    gfloat confidence; /* not used; 1.24 does not document it as optional */
    if (!gst_analytics_od_mtd_get_location(&od, &x, &y, &w, &h, &confidence)) continue;
    const Rect r{CLAMP(x, -kMaxSourceSide, kMaxSourceSide), CLAMP(y, -kMaxSourceSide, kMaxSourceSide),
                 CLAMP(w, -kMaxSourceSide, kMaxSourceSide), CLAMP(h, -kMaxSourceSide, kMaxSourceSide)};
    if (passes(filter, gst_analytics_od_mtd_get_obj_type(&od), r.w, r.h))
      out->push_back(MetaRegion{r, i, (int)od.id, "object detection"});
  }
}

static gboolean has_od_mtd(GstAnalyticsRelationMeta *rmeta) {
  gpointer state = NULL;
  GstAnalyticsODMtd od;
  return rmeta && gst_analytics_relation_meta_iterate(rmeta, &state, gst_analytics_od_mtd_get_mtd_type(), &od);
}
#endif

void gst_cuda_prep_collect_meta_regions(GstBuffer *buffer, GstCudaPrepRoiSource source, const MetaRegionFilter &filter,
                                        std::vector<MetaRegion> *out) {
  out->clear();
#if CUDAPREP_HAVE_ANALYTICS_OD
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta(buffer);
  /* auto: a detector that writes both kinds describes the same objects twice; one kind is read */
  if (source == GST_CUDA_PREP_ROI_SOURCE_ANALYTICS || (source == GST_CUDA_PREP_ROI_SOURCE_AUTO && has_od_mtd(rmeta))) {
    if (rmeta) collect_od_mtds(rmeta, filter, out);
    return;
  }
#endif
  if (source != GST_CUDA_PREP_ROI_SOURCE_ANALYTICS) /* without the library: refused at start */
    collect_roi_metas(buffer, filter, out);
}
