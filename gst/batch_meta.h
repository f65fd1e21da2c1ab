/* The per-slot part of a cudatensorbatch tensor's transform meta: for each slot, the sink pad
 * it came from, the source buffer's PTS, whether it is empty, and the transform from the slot
 * back to its frame. */
#pragma once

#include <gst/gst.h>

#include "tensorize.h"

struct BatchSlotMeta
{
  const gchar *pad_name = NULL; /* NULL: no pad had this slot */
  GstClockTime pts = GST_CLOCK_TIME_NONE;
  gboolean empty = TRUE;
  cudaprep::TensorTransform transform {};
  cudaprep::Rect roi {};        /* the frame region used (the pad's roi, clipped) */
};

/* Attaches the meta for @n slots to @buffer. */
void gst_cuda_prep_buffer_add_batch_meta (GstBuffer * buffer, const BatchSlotMeta * slots, int n);
