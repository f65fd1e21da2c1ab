#include "analytics_matches.h"

#include <string>

#include "config.h"
#if CUDAPREP_HAVE_ANALYTICS_OD
#include <gst/analytics/analytics.h>
#endif

gboolean gst_cuda_prep_add_analytics_matches(GstBuffer *buffer, const std::vector<cudaprep::Match> &matches,
                                             const cudaprep::TemplateBank &bank, std::string *error) {
#if CUDAPREP_HAVE_ANALYTICS_OD
  if (matches.empty()) return TRUE;
  GstAnalyticsRelationMeta *rmeta = gst_buffer_get_analytics_relation_meta(buffer);
  if (!rmeta) rmeta = gst_buffer_add_analytics_relation_meta(buffer);
  if (!rmeta) {
    *error = "could not add a GstAnalyticsRelationMeta to the buffer";
    return FALSE;
  }
  for (const cudaprep::Match &m : matches) {
    const GQuark type = g_quark_from_string(bank.templates[bank.members[m.member].template_index].label.c_str());
    GstAnalyticsODMtd od;
    if (!gst_analytics_relation_meta_add_od_mtd(rmeta, type, m.x, m.y, m.width, m.height, (gfloat)m.score, &od)) {
      *error = "the GstAnalyticsRelationMeta refused an object-detection entry";
      return FALSE;
    }
  }
#endif
  return TRUE;
}
