// wait_probe: how long a host thread takes to learn that GPU work has finished, and what the
// wait costs it in CPU, per way of waiting (issue 11 experiment, not part of the product).
// Work: a 4.9 MB device-to-host copy into pinned memory (cudatensorize's system-memory output),
// and a spin kernel of about 80 us (cudatemplatematch's match on 1080p). Ways: cudaEventSynchronize
// on a blocking-sync event, cudaStreamSynchronize (the context's default: spin or yield), and
// sleep-then-poll: nanosleep until just before the time the last waits took, then poll the event
// with short sleeps (thread timer slack lowered around the sleeps).
// Build: nvcc -O2 -arch=sm_90 -o wait_probe dev/gpu/wait_probe.cu
#include <cuda.h>

#include "probe_util.h"

__global__ void spin_kernel(long long cycles) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

struct BigArgs {
  char bytes[320];
};
__global__ void args_kernel(const __grid_constant__ BigArgs a, char* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = a.bytes[7];
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t bytes = size_t(640) * 640 * 3 * 4;
  void *dev, *host;
  CK(cudaMalloc(&dev, bytes));
  CK(cudaMallocHost(&host, bytes));
  cudaEvent_t blocking, plain;
  CK(cudaEventCreateWithFlags(&blocking, cudaEventBlockingSync | cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming));
  int rate_khz = 0;
  CK(cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0));
  const char* works[] = {"D2H 4.9 MB", "spin kernel 80 us"};
  const char* ways[] = {"event blocking-sync", "stream sync (default)", "sleep then poll", "sleep then spin"};
  for (int w = 0; w < 2; w++) {
    for (int way = 0; way < 4; way++) {
      FrameTimes times;  // its expected time: the shortest of the last waits (about the GPU's time)
      for (int i = 0; i < 200; i++) {
        sleep_us(2000);  // the streaming thread idles between frames, as in a decode-bound pipeline
        const double t0 = now_us(), c0 = thread_cpu_us();
        if (w == 0)
          CK(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s));
        else
          spin_kernel<<<1, 1, 0, s>>>((long long)rate_khz * 80 / 1000);
        if (way == 0) {
          CK(cudaEventRecord(blocking, s));
          CK(cudaEventSynchronize(blocking));
        } else if (way == 1) {
          CK(cudaStreamSynchronize(s));
        } else {
          CK(cudaEventRecord(plain, s));
          sleep_then_poll(plain, t0, times.expected, way == 3);
        }
        times.add(now_us() - t0, thread_cpu_us() - c0);
      }
      times.print(works[w], ways[way]);
    }
  }
  // The launch call of a kernel with 320 bytes of arguments: after 2 ms idle, and back to back.
  for (int idle = 1; idle >= 0; idle--) {
    std::vector<double> call;
    BigArgs a{};
    for (int i = 0; i < 300; i++) {
      if (idle) sleep_us(2000);
      a.bytes[7] = char(i);
      const double t0 = now_us();
      args_kernel<<<100, 128, 0, s>>>(a, static_cast<char*>(dev));
      call.push_back(now_us() - t0);
      if (idle) CK(cudaStreamSynchronize(s));
    }
    CK(cudaStreamSynchronize(s));
    std::sort(call.begin(), call.end());
    std::printf("launch call, %-13s median %5.1f p90 %5.1f us\n", idle ? "after idle" : "back to back",
                call[call.size() / 2], call[call.size() * 9 / 10]);
  }
  // The same through the driver's cuLaunchKernel (entry point from the runtime, no link to libcuda).
  {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &q));
    auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(entry);
    cudaFunction_t f;
    CK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(&args_kernel)));
    for (int idle = 1; idle >= 0; idle--) {
      std::vector<double> call;
      BigArgs a{};
      char* out = static_cast<char*>(dev);
      for (int i = 0; i < 300; i++) {
        if (idle) sleep_us(2000);
        a.bytes[7] = char(i);
        void* params[] = {&a, &out};
        const double t0 = now_us();
        const CUresult r = launch(reinterpret_cast<CUfunction>(f), 100, 1, 1, 128, 1, 1, 0,
                                  reinterpret_cast<CUstream>(s), params, nullptr);
        call.push_back(now_us() - t0);
        if (r != CUDA_SUCCESS) {
          std::printf("cuLaunchKernel: %d\n", int(r));
          return 1;
        }
        if (idle) CK(cudaStreamSynchronize(s));
      }
      CK(cudaStreamSynchronize(s));
      std::sort(call.begin(), call.end());
      std::printf("cuLaunchKernel,   %-13s median %5.1f p90 %5.1f us\n", idle ? "after idle" : "back to back",
                  call[call.size() / 2], call[call.size() * 9 / 10]);
    }
  }
  return 0;
}
