/* model-info: the input tensor of a model as its .modelinfo file describes it, and what that sets
 * of the tensor elements' settings.
 *
 * A .modelinfo file (GStreamer 1.28's format, read by onnxinference and the other inference
 * elements) is an ini file next to the model: a [modelinfo] section with version (1.x) and
 * group-id, and one section per tensor of the model (its name) with id, dir (input / output),
 * type, dims (outermost first for dims-order=row-major, the default; innermost first for
 * col-major; -1: any), and for inputs ranges, the min,max the model expects of each channel
 * ("0,1" or "0,1;-1,1;0,255"). Inference elements map a pixel p of 0..255 to
 *   out = p * (max - min) / 255 + min
 * per channel; the tensor elements compute out = (p * scale - mean) / std, so ranges set
 *   scale = 1 / 255, mean = -min / (max - min), std = 1 / (max - min)
 * (ranges 0,1 are then the float defaults exactly; -1,1 mean 0.5, std 0.5).
 *
 * The file is read with GLib's GKeyFile on every GStreamer version (the same parser
 * gst_analytics_modelinfo_load uses on 1.28). */
#pragma once

#include <string>
#include <vector>

#include "status.h"
#include "tensorize.h"

/* The input tensor of a .modelinfo file, and where each value came from (for messages). */
struct ModelInput {
  std::string file;    /* as the property gave it */
  std::string section; /* the tensor's section name (its name in the model) */
  std::string id;      /* its id key; "" if none */
  std::string group_id;
  std::string dims_text; /* the dims key as written, and its order */
  bool col_major = false;
  /* From dims: -1 where the file leaves it open (-1) or has no such dimension (batch of 3 dims). */
  int batch = -1, width = -1, height = -1;
  int channels = 3;
  cudaprep::Layout layout = cudaprep::Layout::NCHW;
  cudaprep::DType dtype = cudaprep::DType::Float32;
  /* ranges: 1 pair (every channel) or one per channel; empty when the file has none. */
  std::string ranges_text;
  std::vector<double> range_min, range_max;
};

/* Reads @path and picks its input tensor: the section with dir=input, or, where there are
 * several, the one whose id (or section name) is @input_name. @layout_hint breaks the tie of dims
 * whose first and last dimension after the batch could both be the channels (1,3,3,3).
 * Errors name the file, the section and key (or the line, for a file that is no ini file) and
 * what was expected. */
cudaprep::Status gst_cuda_prep_model_info_read(const std::string &path, const std::string &input_name,
                                               cudaprep::Layout layout_hint, ModelInput *out);

/* ranges as the tensor elements' normalisation (formula above); FALSE without ranges. */
bool gst_cuda_prep_model_info_normalisation(const ModelInput &m, double *scale, double mean[3], double std[3]);
