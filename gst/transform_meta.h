/* The "GstCudaPrepTransformMeta" custom meta (format in gstcudaprepmeta.h): registration, with
 * the transform that keeps it true through scalers, and attaching it to a tensor. */
#pragma once

#include <gst/gst.h>

#include "gstcudaprepmeta.h"
#include "tensorize.h"

/* Registers the meta once per process (tags "video" and "size"). */
void gst_cuda_prep_transform_meta_register (void);

/* Attaches @t, made from the @roi of the frame, to @buffer. */
void gst_cuda_prep_buffer_add_transform_meta (GstBuffer * buffer,
    const cudaprep::TensorTransform & t, const cudaprep::Rect & roi);
