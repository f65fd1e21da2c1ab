/* The region properties of cudatensorize and of cudatensorbatch's pads: rois, roi-meta and its
 * filters (roi-source, roi-type, roi-min-size, roi-max-size, roi-margin). One declaration of
 * their param specs, their checks and the slot plans of a frame's regions, so that a region
 * makes the same slot in either element.
 *
 * An element (or pad) keeps a RegionSettings behind its object lock, installs the properties
 * with gst_cuda_prep_region_properties_install() at ids first_id + RegionProperty, forwards its
 * set/get_property to the functions below and builds a frame's slot plans with RegionPlans. */
#pragma once

#include <gst/gst.h>

#include <string>
#include <vector>

#include "meta_regions.h"
#include "status.h"
#include "tensorize.h"
#include "tensorize_batch.h"

/* Property ids relative to the first_id an element installs them at. */
enum RegionProperty {
  REGION_PROP_ROIS,
  REGION_PROP_ROI_META,
  REGION_PROP_ROI_SOURCE,
  REGION_PROP_ROI_TYPE,
  REGION_PROP_ROI_MIN_SIZE,
  REGION_PROP_ROI_MAX_SIZE,
  REGION_PROP_ROI_MARGIN,
  REGION_PROP_COUNT,
};

/* Whose properties they are: the blurbs say so. */
enum RegionScope {
  REGION_SCOPE_TENSORIZE, /* cudatensorize: the regions of each frame */
  REGION_SCOPE_BATCH_PAD, /* a cudatensorbatch sink pad: the regions of that pad's frames */
  REGION_SCOPE_BATCH,     /* cudatensorbatch: the defaults of pads that set none of their own */
};

struct RegionSettings {
  std::vector<std::vector<int>> rois; /* empty: no rois */
  bool roi_meta = false;              /* regions from upstream metas (roi_source says which) */
  GstCudaPrepRoiSource roi_source = GST_CUDA_PREP_ROI_SOURCE_AUTO;
  std::string roi_type;                   /* class names, comma-separated; empty: any */
  int roi_min_size = 0, roi_max_size = 0; /* region width and height bounds; max 0: none */
  double roi_margin = 0.0;                /* fraction of a region's size added on each side */
  unsigned set = 0;                       /* (1 << RegionProperty) of the properties set */

  /* Whether the slots come from regions (rois or roi-meta) rather than one roi / whole frame. */
  bool regions() const { return roi_meta || !rois.empty(); }
  /* A pad's settings @this over the element-wide @defaults: every property the pad did not set
   * is the element's. roi-meta is the element's only for a pad that set none of roi-meta, rois
   * and (@pad_roi) roi: a pad given rectangles of its own keeps them. */
  RegionSettings over(const RegionSettings &defaults, bool pad_roi) const;
  bool operator==(const RegionSettings &o) const {
    return rois == o.rois && roi_meta == o.roi_meta && roi_source == o.roi_source && roi_type == o.roi_type &&
           roi_min_size == o.roi_min_size && roi_max_size == o.roi_max_size && roi_margin == o.roi_margin &&
           set == o.set;
  }
  bool operator!=(const RegionSettings &o) const { return !(*this == o); }
};

/* Installs the properties of @mask ((1 << RegionProperty) bits) at ids first_id + RegionProperty,
 * with the blurbs of @scope, GST_PARAM_MUTABLE_PLAYING. */
void gst_cuda_prep_region_properties_install(GObjectClass *klass, guint first_id, unsigned mask, RegionScope scope);
/* Call with the object lock held. @prop is relative to first_id; FALSE when it is not one of
 * these properties. */
gboolean gst_cuda_prep_region_property_set(RegionSettings &s, guint prop, const GValue *value);
gboolean gst_cuda_prep_region_property_get(const RegionSettings &s, guint prop, GValue *value);

/* Settings that are wrong whatever the frame is (roi-margin range, roi-max-size below
 * roi-min-size, roi-type's class list, roi-source=analytics without the library, a rois item
 * without 4 values), each one error naming the property; @filter (may be NULL) gets roi-type,
 * roi-min-size and roi-max-size. */
cudaprep::Status gst_cuda_prep_region_settings_check(const RegionSettings &s, MetaRegionFilter *filter);

/* The slot plans of one frame's regions. Regions partly outside the frame are clipped to it,
 * as roi is; regions entirely outside or empty are skipped and listed in `skipped`. The vectors
 * keep their capacity from frame to frame. */
struct RegionPlans {
  cudaprep::TensorizeConfig cfg; /* the output spec and the frame (its roi aside) */
  std::string frame_desc;        /* " (WxH)" for messages */
  MetaRegionFilter filter;       /* roi-meta: roi-type, roi-min-size, roi-max-size */
  std::vector<cudaprep::SlotPlan> regions;
  std::vector<int> region_index; /* each one's index in rois or among the frame's metas of its
                                  * kind; -1 for the roi / whole frame */
  std::vector<int> region_id;    /* the ROI meta's or ODMtd's id; -1 if none */
  std::string skipped;           /* the regions skipped (outside the frame or empty) */

  void clear_regions() {
    regions.clear();
    region_index.clear();
    region_id.clear();
    skipped.clear();
  }
  size_t size() const { return regions.size(); }
};

/* Starts @p for a frame: the output spec @spec, the frame @source (its roi, when set, is the one
 * slot without regions), checks @s and fills p->filter. */
cudaprep::Status gst_cuda_prep_region_plans_init(RegionPlans *p, const cudaprep::TensorOutputSpec &spec,
                                                 const cudaprep::SlotSourceSpec &source, const std::string &frame_desc,
                                                 const RegionSettings &s);
/* The regions that need no frame's metas: without rois and roi-meta, one slot (the roi, or the
 * whole frame); with rois, one per rois item kept; with roi-meta, none yet. */
cudaprep::Status gst_cuda_prep_region_plans_static(RegionPlans *p, const RegionSettings &s);
/* roi-meta: the regions of @buffer's metas (meta_regions.h) in place of the last frame's;
 * @scratch keeps its capacity from frame to frame. */
cudaprep::Status gst_cuda_prep_region_plans_from_metas(RegionPlans *p, const RegionSettings &s, GstBuffer *buffer,
                                                       std::vector<MetaRegion> *scratch);
