/* cudatensorize roi-meta: a frame's regions from upstream metas, GstVideoRegionOfInterestMeta
 * and, in builds with GStreamer's analytics library (>= 1.24), the GstAnalyticsODMtd entries of
 * the frame's GstAnalyticsRelationMeta; filtered by class and size. */
#pragma once

#include <gst/gst.h>

#include <string>
#include <vector>

#include "image.h"
#include "status.h"

/* The roi-source property: which metas roi-meta reads. */
typedef enum {
  GST_CUDA_PREP_ROI_SOURCE_AUTO,      /* the frame's ODMtds if it has any, else its ROI metas */
  GST_CUDA_PREP_ROI_SOURCE_ROI_META,  /* GstVideoRegionOfInterestMeta only */
  GST_CUDA_PREP_ROI_SOURCE_ANALYTICS, /* GstAnalyticsODMtd only */
} GstCudaPrepRoiSource;

GType gst_cuda_prep_roi_source_get_type(void);

/* Whether this build reads GstAnalyticsODMtd (built against gstreamer-analytics-1.0 >= 1.24). */
gboolean gst_cuda_prep_have_analytics_od(void);

/* roi-type, roi-min-size, roi-max-size. */
struct MetaRegionFilter {
  std::vector<GQuark> classes;    /* empty: any class */
  int min_size = 0, max_size = 0; /* max 0: no limit */
};

/* roi-type as a class list: names separated by commas, spaces around each name ignored ("car,
 * truck"); "" is any class. An empty name ("car,,bus") is an error naming it. */
cudaprep::Status gst_cuda_prep_parse_region_classes(const std::string &text, std::vector<GQuark> *classes);

/* A region as its meta gives it (coordinates clamped to +-kMaxSourceSide), before the margin. */
struct MetaRegion {
  cudaprep::Rect box;
  int index;        /* among the frame's metas of its kind, filtered out or not */
  int id;           /* the ROI meta's id, or the ODMtd's id in the relation meta */
  const char *kind; /* names the meta in warnings: "region meta" or "object detection" */
};

/* The regions of @buffer that pass @filter, in the metas' order, from the metas @source picks.
 * @out is cleared first and keeps its capacity, so a reused vector allocates no more once it
 * has grown to the largest frame's count. */
void gst_cuda_prep_collect_meta_regions(GstBuffer *buffer, GstCudaPrepRoiSource source, const MetaRegionFilter &filter,
                                        std::vector<MetaRegion> *out);
