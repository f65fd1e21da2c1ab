// cudaprep-regress: running a pipeline on a given GPU (record / check --device-id N).
#pragma once

#include <gst/gst.h>

#include <string>

namespace regress {

// The description with every NVDEC decoder of the default GPU (`nvh264dec`, `nvh265dec`,
// `nvjpegdec`, ...) replaced by its element for GPU `id` (`nvh264device1dec`): GStreamer's
// nvcodec registers one decoder element per GPU, and the decoder's GPU cannot be set otherwise.
// False, with `error` naming the decoder, when GPU `id` has no such element. GPU 0, and
// decoders already named for a GPU, stay as written.
bool decoders_for_device(const std::string& description, int id, std::string* out, std::string* error);

// Sets `device-id` (the cudaprep elements) and `cuda-device-id` (GStreamer's CUDA elements:
// cudaupload, cudaconvert, ...) to `id` on every element of the pipeline (bins followed) that
// has a writable integer property of that name. Returns how many were set.
int apply_device_id(GstElement* pipeline, int id);

}  // namespace regress
