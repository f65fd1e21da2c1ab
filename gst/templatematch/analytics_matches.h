/* Template matches as upstream analytics metadata (GStreamer >= 1.24): one GstAnalyticsODMtd
 * per match, of its template's label as type, confidence = score, in the buffer's
 * GstAnalyticsRelationMeta, for objectdetectionoverlay and other analytics consumers. */
#pragma once

#include <gst/gst.h>

#include <string>
#include <vector>

#include "template_bank.h"
#include "templatematch.h"

/* Adds @matches to @buffer's relation meta (made if absent). Without the analytics library
 * (GStreamer < 1.24 builds) it does nothing. FALSE, with @error set, when the meta refused one. */
gboolean gst_cuda_prep_add_analytics_matches(GstBuffer* buffer, const std::vector<cudaprep::Match>& matches,
                                             const cudaprep::TemplateBank& bank, std::string* error);
