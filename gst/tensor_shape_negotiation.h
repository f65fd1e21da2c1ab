/* The tensor's shape (width, height, layout, dtype, channels) between cudatensorize's properties and
 * downstream's caps: what the user set wins; what the user left unset is taken from downstream
 * (a model element whose sink caps say dimensions=3:640:640:1,types=float16), and from the
 * properties' defaults where downstream leaves it open too. */
#pragma once

#include <gst/gst.h>

#include "status.h"
#include "tensorize.h"

struct TensorShape
{
  int width = 640, height = 640;
  cudaprep::Layout layout = cudaprep::Layout::NCHW;
  cudaprep::DType dtype = cudaprep::DType::Float32;
  int channels = 3;             /* 3 (colour) or 1 (gray) */
  int batch = 1;                /* batch-size: never open, downstream must agree with it */
};

/* The properties' values, and which of them the user set (a property never set is open). */
struct TensorShapeSettings
{
  TensorShape value;
  bool width_set = false, height_set = false, layout_set = false, dtype_set = false;
  bool channels_set = false;
};

/* Parses NNStreamer dimensions of a batch of image tensors of C = 3 or 1 (gray) channels:
 * "W:H:C[:B]" (nchw) or "C:W:H[:B]" (nhwc), B 1 when left out. Where several readings fit
 * ("3:64:3", "1:64:3"), the one with @preferred's channels and layout wins, then the one with its
 * channels, then its layout. */
gboolean gst_cuda_prep_tensor_parse_dimensions (const gchar * dims, const TensorShape & preferred,
    TensorShape * shape);

/* Fixates "dimensions" and "types" of @s (other/tensors, after intersecting with downstream):
 * a field downstream left open takes the settings' value; of a list, the first entry that agrees
 * with what the user set is taken. */
void gst_cuda_prep_tensor_fixate_shape (GstStructure * s, const TensorShapeSettings & settings);

/* The shape in negotiated tensor caps. An error names both sides when a property the user set
 * differs from what downstream takes, or says why the caps are no tensor the element makes. */
cudaprep::Status gst_cuda_prep_tensor_shape_from_caps (GstCaps * caps,
    const TensorShapeSettings & settings, TensorShape * shape);
