// download_probe: two ways to get a 4.9 MB tensor (640x640x3 float) into pinned host memory, as
// cudatensorize's system-memory output needs (issue 11 experiment, not part of the product):
//   staged:    a kernel writes device scratch, then cudaMemcpyAsync device-to-host (today's path);
//   zero-copy: the kernel stores straight into the pinned buffer through its device pointer.
// Each is timed on the GPU back to back (events), and after 2 ms idle from the host with a
// blocking-sync event wait and with sleep-then-poll (the wait_probe's way), latency and CPU.
// Build: nvcc -O2 -arch=sm_90 -o download_probe dev/gpu/download_probe.cu
#include "probe_util.h"

// Each thread writes @per_thread float2 values, a warp's stores contiguous (as the fused kernel's
// two pixels a lane): value from the index so the compiler cannot drop the stores.
__global__ void write_kernel(float2* out, size_t n2) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n2) out[i] = make_float2(float(i & 255) * (1.f / 255), float((i >> 8) & 255));
}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t bytes = size_t(640) * 640 * 3 * 4, n2 = bytes / 8;
  void *dev, *host;
  CK(cudaMalloc(&dev, bytes));
  CK(cudaMallocHost(&host, bytes));
  void* host_dev = nullptr;
  CK(cudaHostGetDevicePointer(&host_dev, host, 0));
  std::printf("pinned host %p, its device pointer %p\n", host, host_dev);
  const unsigned block = 128, grid = unsigned((n2 + block - 1) / block);
  auto enqueue = [&](int way) -> cudaError_t {
    if (way == 0) {
      write_kernel<<<grid, block, 0, s>>>(static_cast<float2*>(dev), n2);
      return cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, s);
    }
    write_kernel<<<grid, block, 0, s>>>(static_cast<float2*>(host_dev), n2);
    return cudaGetLastError();
  };
  const char* names[] = {"staged (kernel + D2H)", "zero-copy kernel"};
  cudaEvent_t a, b, blocking, plain;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventCreateWithFlags(&blocking, cudaEventBlockingSync | cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&plain, cudaEventDisableTiming));
  for (int way = 0; way < 2; way++) {
    for (int i = 0; i < 20; i++) CK(enqueue(way));
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < 100; i++) CK(enqueue(way));
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    std::printf("%-22s GPU back to back %6.1f us\n", names[way], ms * 10);
    // Check the zero-copy result arrived.
    CK(cudaStreamSynchronize(s));
    const float2* h = static_cast<const float2*>(host);
    if (h[n2 - 1].y != float(((n2 - 1) >> 8) & 255)) std::printf("  WRONG last value\n");
  }
  for (int way = 0; way < 2; way++) {
    for (int wait = 0; wait < 2; wait++) {
      FrameTimes times;
      for (int i = 0; i < 200; i++) {
        sleep_us(2000);
        const double t0 = now_us(), c0 = thread_cpu_us();
        CK(enqueue(way));
        if (wait == 0) {
          CK(cudaEventRecord(blocking, s));
          CK(cudaEventSynchronize(blocking));
        } else {
          CK(cudaEventRecord(plain, s));
          sleep_then_poll(plain, t0, times.expected, false);
        }
        times.add(now_us() - t0, thread_cpu_us() - c0);
      }
      times.print(names[way], wait ? "sleep then poll" : "blocking event");
    }
  }
  return 0;
}
