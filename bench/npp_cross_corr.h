// NPP's nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx (TM_CCOEFF_NORMED's score map, one template
// per call, no mask), loaded at run time so that the benchmarks build without NPP: an anchor the
// template-matching benchmarks time beside the matchers.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace nppbench {

struct NppiSize {
  int width, height;
};
struct NppStreamContext {
  cudaStream_t hStream;
  int nCudaDeviceId;
  int nMultiProcessorCount;
  int nMaxThreadsPerMultiProcessor;
  int nMaxThreadsPerBlock;
  size_t nSharedMemPerBlock;
  int nCudaDevAttrComputeCapabilityMajor;
  int nCudaDevAttrComputeCapabilityMinor;
  unsigned int nStreamFlags;
  int nReserved0;
};
using CrossCorrFn = int (*)(const uint8_t*, int, NppiSize, const uint8_t*, int, NppiSize, float*, int, uint8_t*,
                            NppStreamContext);
using BufSizeFn = int (*)(NppiSize, size_t*, NppStreamContext);

struct Npp {
  CrossCorrFn cross_corr = nullptr;
  BufSizeFn buffer_size = nullptr;
  std::string from, error;
  bool load() {
    // The cross-correlation functions live in the image-statistics library (nppist).
    const char* dirs[] = {"", "/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/"};
    const char* libs[] = {"libnppist.so.13", "libnppist.so.12", "libnppist.so", "libnppif.so.13", "libnppif.so"};
    for (const char* d : dirs) {
      const std::string core = std::string(d) + "libnppc.so";
      if (!dlopen((core + ".13").c_str(), RTLD_NOW | RTLD_GLOBAL)) dlopen(core.c_str(), RTLD_NOW | RTLD_GLOBAL);
      for (const char* l : libs) {
        const std::string n = std::string(d) + l;
        void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
          const char* e = dlerror();
          error = e ? e : "?";
          continue;
        }
        cross_corr = reinterpret_cast<CrossCorrFn>(dlsym(h, "nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx"));
        buffer_size = reinterpret_cast<BufSizeFn>(dlsym(h, "nppiValidNormLevelGetBufferHostSize_8u32f_C1R_Ctx"));
        if (cross_corr) {
          from = n;
          return true;
        }
        error = n + " has no nppiCrossCorrValid_NormLevel_8u32f_C1R_Ctx";
      }
    }
    return false;
  }
};

inline NppStreamContext npp_context(cudaStream_t s) {
  NppStreamContext c{};
  int dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, dev);
  c.hStream = s;
  c.nCudaDeviceId = dev;
  c.nMultiProcessorCount = p.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = p.major;
  c.nCudaDevAttrComputeCapabilityMinor = p.minor;
  unsigned flags = 0;
  cudaStreamGetFlags(s, &flags);
  c.nStreamFlags = flags;
  return c;
}

}  // namespace nppbench
