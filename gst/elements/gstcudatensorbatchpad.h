/* The sink pads of cudatensorbatch: one video stream each, with its own caps (size, format),
 * its own input mapping and GPU staging, and its own "roi", "rois", "roi-meta" and filter
 * properties (region_settings.h). */
#pragma once

#include <gst/base/gstaggregator.h>
#include <gst/gst.h>

#include <vector>

#include "meta_regions.h"
#include "region_settings.h"
#include "tensorize_batch.h"
#include "video_input.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_TENSOR_BATCH_PAD (gst_cuda_tensor_batch_pad_get_type())
G_DECLARE_FINAL_TYPE(GstCudaTensorBatchPad, gst_cuda_tensor_batch_pad, GST, CUDA_TENSOR_BATCH_PAD, GstAggregatorPad)

G_END_DECLS

/* A pad's properties. */
struct CudaTensorBatchPadSettings {
  std::vector<int> roi;   /* empty: whole frame */
  RegionSettings regions; /* its own; the element's apply where it set none (RegionSettings::over) */
};

/* Streaming state of one pad, touched only from the aggregator's streaming thread (caps
 * events, aggregate) and in stop. */
struct CudaTensorBatchPadState {
  CudaPrepVideoInput input;
  gboolean have_caps = FALSE;
  /* The slot plans of this pad's frames (its regions, or its one roi / whole frame), valid
   * while built_generation equals the element's output generation and built_version the pad's
   * settings version. With roi-meta the regions are each frame's. */
  RegionPlans plans;
  RegionSettings regions; /* the settings in use: the pad's over the element's */
  gboolean have_plan = FALSE;
  guint64 built_generation = 0;
  guint built_version = 0;
  std::vector<MetaRegion> meta_regions; /* roi-meta: the frame's, reused frame to frame */
  gboolean warned_meta_skip = FALSE;    /* roi-meta: regions skipped are warned about once */
  /* The frame taken for the batch being made. */
  GstVideoFrame frame{};
  cudaprep::ImageView view{};
  gboolean mapped = FALSE;
  GstBuffer *buffer = NULL; /* popped for the batch being made */
};

CudaTensorBatchPadState &gst_cuda_tensor_batch_pad_state(GstCudaTensorBatchPad *pad);
/* The pad's properties now (copied under its object lock) and their version. */
CudaTensorBatchPadSettings gst_cuda_tensor_batch_pad_settings(GstCudaTensorBatchPad *pad, guint *version);
/* The version of the pad's properties: bumped by every property set. */
guint gst_cuda_tensor_batch_pad_settings_version(GstCudaTensorBatchPad *pad);
