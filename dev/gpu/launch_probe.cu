// launch_probe: what a kernel launch costs the host thread in a pipeline's rhythm (issue 11
// experiment, not part of the product). cudatensorize's phase log puts its launch call at about
// 9 us inside an NVDEC pipeline against 3 us in the kernel bench; this asks whether the way of
// launching or the thread's idle time between frames makes the difference.
//   contexts: a context of its own made current per frame by cuCtxPushCurrent / cuCtxPopCurrent
//             (as GstCudaContext), or the primary context pushed the same way;
//   launches: runtime <<<>>>, driver cuLaunchKernel with the CUfunction from cudaGetFuncBySymbol,
//             cudaGraphLaunch of a one-kernel graph instantiated once (pointers fixed), and the
//             same graph with its kernel's arguments set anew each frame (pointers that change);
//   rhythm:   back to back, after 2 ms asleep, after 2 ms asleep while another thread sweeps 32 MB
//             (caches cold, as when the decoder's threads ran between two frames), after 2 ms
//             spinning (time passes, the thread never sleeps).
// Each line: median / p90 of the push, the launch call (with its error check), the pop, the
// thread CPU of the three, and of a fixed arithmetic loop timed in the same frames (the host's
// speed at that moment: it does no system call and touches no memory), in us, over 400 frames;
// then the steal time the kernel counted meanwhile (/proc/stat, all CPUs, in ticks).
// Build: nvcc -O2 -arch=sm_90 -o launch_probe dev/gpu/launch_probe.cu -lcuda
#include <cuda.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "probe_util.h"

#define CKD(x)                             \
  do {                                     \
    CUresult r = (x);                      \
    if (r != CUDA_SUCCESS) {               \
      std::printf("%s: %d\n", #x, int(r)); \
      return 1;                            \
    }                                      \
  } while (0)

// About cudatensorize's argument size (KernelArgs: pixel params, pointers, planes, constants).
struct Args {
  float* dst;
  int n;
  char pad[280];
};

__global__ void small_kernel(const __grid_constant__ Args a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < a.n) a.dst[i] = float(i) + float(a.pad[i & 7]);
}

namespace {

// A fixed amount of arithmetic, about 2 us on a 3 GHz core: no memory, no system call.
__attribute__((noinline)) unsigned calibration_loop(unsigned x) {
  for (int i = 0; i < 4000; i++) x = x * 1664525u + 1013904223u;
  return x;
}

long steal_ticks() {
  FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return -1;
  char cpu[16];
  long v[8] = {};
  const int n = std::fscanf(f, "%15s %ld %ld %ld %ld %ld %ld %ld %ld", cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                            &v[6], &v[7]);
  std::fclose(f);
  return n == 9 ? v[7] : -1;
}

std::atomic<bool> sweeping{false}, quit{false};

// The other thread: sweeps 32 MB while asked to, evicting what the timed thread had cached.
void sweeper() {
  std::vector<char> big(32 << 20, 1);
  volatile long sink = 0;
  while (!quit.load()) {
    if (!sweeping.load()) {
      sleep_us(50);
      continue;
    }
    long s = 0;
    for (size_t i = 0; i < big.size(); i += 64) s += big[i]++;
    sink = sink + s;
  }
}

double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[size_t(q * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  CKD(cuInit(0));
  CUdevice dev;
  CKD(cuDeviceGet(&dev, 0));
  CUcontext own, primary;
  CKD(cuCtxCreate(&own, nullptr, 0, dev));
  CKD(cuCtxPopCurrent(nullptr));
  CKD(cuDevicePrimaryCtxRetain(&primary, dev));
  std::thread other(sweeper);

  const char* ctx_names[] = {"own context", "primary context"};
  const char* launch_names[] = {"runtime <<<>>>", "cuLaunchKernel", "graph launch", "graph set+launch"};
  const char* rhythm_names[] = {"back to back", "after 2 ms asleep", "after 2 ms of a sweep", "after 2 ms spinning"};
  // Contexts to probe: argv[1] = 1 for the own context alone (as GstCudaContext).
  const int n_contexts = argc > 1 ? std::atoi(argv[1]) : 2;
  for (int c = 0; c < n_contexts; c++) {
    CUcontext ctx = c == 0 ? own : primary;
    CKD(cuCtxPushCurrent(ctx));
    CUstream stream;
    CKD(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    float* dst = nullptr;
    CK(cudaMalloc(&dst, 4096 * sizeof(float)));
    cudaFunction_t rt_fn;
    CK(cudaGetFuncBySymbol(&rt_fn, reinterpret_cast<const void*>(&small_kernel)));
    CUfunction fn = reinterpret_cast<CUfunction>(rt_fn);
    Args a{};
    a.dst = dst;
    a.n = 4096;
    // The one-kernel graph: captured from the same launch, instantiated once.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStream_t rt_stream = reinterpret_cast<cudaStream_t>(stream);
    CK(cudaStreamBeginCapture(rt_stream, cudaStreamCaptureModeThreadLocal));
    small_kernel<<<16, 256, 0, rt_stream>>>(a);
    CK(cudaStreamEndCapture(rt_stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    size_t n_nodes = 1;
    cudaGraphNode_t node;
    CK(cudaGraphGetNodes(graph, &node, &n_nodes));
    cudaKernelNodeParams node_params{};
    CK(cudaGraphKernelNodeGetParams(node, &node_params));
    CKD(cuCtxPopCurrent(nullptr));
    for (int l = 0; l < 4; l++) {
      for (int r = 0; r < 4; r++) {
        std::vector<double> push, launch, pop, cpu, calib;
        unsigned seed = 1;
        const long steal0 = steal_ticks();
        for (int f = -20; f < 400; f++) {
          if (r == 1) sleep_us(2000);
          if (r == 2) {
            sweeping = true;
            sleep_us(2000);
            sweeping = false;
          }
          if (r == 3)
            for (const double end = now_us() + 2000; now_us() < end;) {
            }
          const double c0 = thread_cpu_us(), t0 = now_us();
          cuCtxPushCurrent(ctx);
          const double t1 = now_us();
          bool ok;
          if (l == 0) {
            small_kernel<<<16, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(a);
            ok = cudaGetLastError() == cudaSuccess;
          } else if (l == 1) {
            void* params[] = {&a};
            ok = cuLaunchKernel(fn, 16, 1, 1, 256, 1, 1, 0, stream, params, nullptr) == CUDA_SUCCESS;
          } else {
            ok = true;
            if (l == 3) {
              a.n = 4096 - (f & 1);  // (an argument that changes, as a frame's pointers do)
              void* params[] = {&a};
              node_params.kernelParams = params;
              ok = cudaGraphExecKernelNodeSetParams(exec, node, &node_params) == cudaSuccess;
            }
            ok = ok && cudaGraphLaunch(exec, rt_stream) == cudaSuccess;
          }
          const double t2 = now_us();
          cuCtxPopCurrent(nullptr);
          const double t3 = now_us(), c1 = thread_cpu_us();
          if (!ok) {
            std::printf("launch failed\n");
            return 1;
          }
          const double t4 = now_us();
          seed = calibration_loop(seed);
          const double t5 = now_us();
          cuStreamSynchronize(stream);
          if (f < 0) continue;
          calib.push_back(t5 - t4);
          push.push_back(t1 - t0);
          launch.push_back(t2 - t1);
          pop.push_back(t3 - t2);
          cpu.push_back(c1 - c0);
        }
        std::printf(
            "%-16s %-15s %-22s push %4.1f/%4.1f  launch %5.1f/%5.1f  pop %4.1f/%4.1f  cpu %5.1f/%5.1f"
            "  loop %4.1f/%4.1f  steal %ld (%u)\n",
            ctx_names[c], launch_names[l], rhythm_names[r], pct(push, .5), pct(push, .9), pct(launch, .5),
            pct(launch, .9), pct(pop, .5), pct(pop, .9), pct(cpu, .5), pct(cpu, .9), pct(calib, .5), pct(calib, .9),
            steal_ticks() - steal0, seed & 1);
      }
    }
  }
  quit = true;
  other.join();
  return 0;
}
