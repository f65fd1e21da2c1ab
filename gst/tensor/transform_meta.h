/* The "GstCudaPrepTransformMeta" custom meta (format in gstcudaprepmeta.h): registration, with
 * the transform that keeps it true through scalers, and attaching it to a tensor. */
#pragma once

#include <gst/gst.h>

#include <vector>

#include "gstcudaprepmeta.h"
#include "tensorize.h"

/* Registers the meta once per process (tags "video" and "size"). */
void gst_cuda_prep_transform_meta_register(void);

/* What the meta says about one slot of a batch (gstcudaprepmeta.h, "cudaprep/slot"). */
struct CudaPrepSlotMeta {
  cudaprep::TensorTransform transform;
  cudaprep::Rect source_rect; /* the frame region the slot was made from */
  bool empty = false;         /* no source: the slot holds the pad value */
  int region_index = -1;      /* which region of the frame, -1: not a region */
  int region_id = -1;         /* upstream GstVideoRegionOfInterestMeta id, -1: none */
  GstClockTime source_pts = GST_CLOCK_TIME_NONE;
  const char *source_pad = nullptr; /* aggregator pad name, or none */
};

/* Attaches the meta of a batch of @n slots to @buffer (top-level fields: slot 0). */
void gst_cuda_prep_buffer_add_batch_transform_meta(GstBuffer *buffer, const CudaPrepSlotMeta *slots, int n);

/* Attaches @t, made from the @roi of the frame, to @buffer: a batch of one. */
void gst_cuda_prep_buffer_add_transform_meta(GstBuffer *buffer, const cudaprep::TensorTransform &t,
                                             const cudaprep::Rect &roi);

/* Attaches a stream's transform metas at almost no cost per frame. The meta is flagged POOLED,
 * so it stays on a pool buffer when the buffer comes back, with a stamp in the buffer's qdata
 * saying which slots it was written for. A frame whose slots (source PTS aside) equal the last
 * frame's then only rewrites each slot's source-pts; anything else (new slots, a buffer not seen
 * before, a meta that downstream removed) writes the whole meta again. One per element, used
 * from its streaming thread only. */
class CudaPrepTransformMetaWriter {
 public:
  /* @tensor_index of @tensors: where one frame (cudatensorize) or batch window
   * (cudatensorbatch) gives several tensors, which of them this is ("tensor-index", "tensors"). */
  void attach(GstBuffer *buffer, const CudaPrepSlotMeta *slots, int n, int tensor_index = 0, int tensors = 1);

 private:
  std::vector<CudaPrepSlotMeta> written_; /* the slots stamp_ stands for */
  gpointer stamp_ = nullptr;              /* unique in the process; NULL: none yet */
};
