#include "regress_device.h"

#include <glib.h>
#include <sys/utsname.h>

#include <fstream>

#include "config.h"

#if CUDAPREP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace regress {

int cuda_device_count() {
#if CUDAPREP_HAVE_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
#else
  return 0;
#endif
}

#if CUDAPREP_HAVE_CUDA
static std::string cuda_version_text(int v) {
  // 13000 -> "13.0", 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
#endif

bool cuda_device_describe(int index, std::string* name, std::string* driver, std::string* runtime) {
#if CUDAPREP_HAVE_CUDA
  cudaDeviceProp prop;
  if (index < 0) index = 0;
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  *name = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  int v = 0;
  *driver = cudaDriverGetVersion(&v) == cudaSuccess ? "CUDA " + cuda_version_text(v) : "";
  *runtime = cudaRuntimeGetVersion(&v) == cudaSuccess ? "CUDA " + cuda_version_text(v) : "";
  // the kernel driver's own version, where the proc file is there (not on Jetson)
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(in, line)) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul ..."
    gchar** parts = g_strsplit_set(line.c_str(), " \t", -1);
    for (gchar** p = parts; *p; p++) {
      if (g_regex_match_simple("^[0-9]+\\.[0-9]+(\\.[0-9]+)?$", *p, (GRegexCompileFlags)0, (GRegexMatchFlags)0)) {
        *driver = std::string("NVIDIA ") + *p + (driver->empty() ? "" : ", " + *driver);
        break;
      }
    }
    g_strfreev(parts);
  }
  return true;
#else
  (void)index;
  (void)name;
  (void)driver;
  (void)runtime;
  return false;
#endif
}

std::string host_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        gchar* v = g_strstrip(g_strdup(line.c_str() + colon + 1));
        std::string out = v;
        g_free(v);
        if (!out.empty()) return out;
      }
    }
  }
  return "";
}

std::string host_arch() {
  struct utsname u;
  if (uname(&u) != 0) return "";
  return u.machine;
}

}  // namespace regress
