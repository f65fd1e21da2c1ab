// cudaprep-regress: what device the elements ran on.
#pragma once

#include <string>

namespace regress {

// Number of usable CUDA devices (0 without a build with CUDA, a driver or a GPU).
int cuda_device_count();
// Name, driver and runtime version of CUDA device `index`; false where unknown.
bool cuda_device_describe(int index, std::string* name, std::string* driver, std::string* runtime);
// The host: CPU model (from /proc/cpuinfo, "" if unknown) and architecture (uname -m).
std::string host_cpu_model();
std::string host_arch();

}  // namespace regress
