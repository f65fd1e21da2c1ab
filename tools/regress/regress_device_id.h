// cudaprep-regress: running a pipeline on a given GPU (record / check --device-id N).
#pragma once

#include <gst/gst.h>

namespace regress {

// Sets `device-id` to `id` on every element of the pipeline (bins followed) that has a writable
// integer property of that name: the cudaprep elements. Returns how many were set.
int apply_device_id(GstElement* pipeline, int id);

}  // namespace regress
