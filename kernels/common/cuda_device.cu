#include <cuda_runtime.h>

#include "cuda_device.h"
#include "cuda_status.h"

namespace cudaprep {
namespace cuda {
namespace {

cudaMemcpyKind to_kind(CopyKind k) {
  switch (k) {
    case CopyKind::HostToDevice: return cudaMemcpyHostToDevice;
    case CopyKind::DeviceToHost: return cudaMemcpyDeviceToHost;
    case CopyKind::DeviceToDevice: return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

}  // namespace

bool built_with_cuda() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

Status stream_create(void** stream) {
  cudaStream_t s = nullptr;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"));
  *stream = s;
  return Status();
}

void stream_destroy(void* stream) {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Status stream_sync(void* stream) {
  return cuda_status(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

Status copy_2d_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width_bytes, size_t height,
                     CopyKind kind, void* stream) {
  return cuda_status(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width_bytes, height, to_kind(kind),
                                       static_cast<cudaStream_t>(stream)),
                     "cudaMemcpy2DAsync");
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), pitch_(o.pitch_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.pitch_ = o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = o.ptr_;
    pitch_ = o.pitch_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.pitch_ = o.bytes_ = 0;
  }
  return *this;
}

Status DeviceBuffer::allocate(size_t bytes) {
  reset();
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMalloc(&ptr_, bytes), "cudaMalloc"));
  bytes_ = bytes;
  pitch_ = bytes;
  return Status();
}

Status DeviceBuffer::allocate_pitched(size_t width_bytes, size_t height) {
  reset();
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMallocPitch(&ptr_, &pitch_, width_bytes, height), "cudaMallocPitch"));
  bytes_ = pitch_ * height;
  return Status();
}

void DeviceBuffer::reset() {
  if (ptr_) cudaFree(ptr_);
  ptr_ = nullptr;
  pitch_ = bytes_ = 0;
}

PinnedBuffer::~PinnedBuffer() { reset(); }

PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(o.ptr_), device_ptr_(o.device_ptr_), bytes_(o.bytes_) {
  o.ptr_ = o.device_ptr_ = nullptr;
  o.bytes_ = 0;
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    ptr_ = o.ptr_;
    device_ptr_ = o.device_ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = o.device_ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

Status PinnedBuffer::allocate(size_t bytes) {
  reset();
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMallocHost(&ptr_, bytes), "cudaMallocHost"));
  bytes_ = bytes;
  // Page-locked memory is mapped into the device's address space (unified addressing).
  const Status st = cuda_status(cudaHostGetDevicePointer(&device_ptr_, ptr_, 0), "cudaHostGetDevicePointer");
  if (!st.ok()) reset();
  return st;
}

void PinnedBuffer::reset() {
  if (ptr_) cudaFreeHost(ptr_);
  ptr_ = nullptr;
  device_ptr_ = nullptr;
  bytes_ = 0;
}

Event::~Event() { reset(); }

Status Event::create(bool blocking) {
  reset();
  const unsigned flags = cudaEventDisableTiming | (blocking ? cudaEventBlockingSync : 0u);
  cudaEvent_t e = nullptr;
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaEventCreateWithFlags(&e, flags), "cudaEventCreate"));
  event_ = e;
  return Status();
}

void Event::reset() {
  if (event_) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
  event_ = nullptr;
}

Status Event::record(void* stream) {
  return cuda_status(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)),
                     "cudaEventRecord");
}

Status Event::synchronize() {
  return cuda_status(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)), "cudaEventSynchronize");
}

namespace {
// A query's answer: cudaErrorNotReady is "not done", not an error, and is kept from later checks.
Status query_status(cudaError_t e, bool* done, const char* what) {
  *done = e == cudaSuccess;
  if (e == cudaErrorNotReady) {
    if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError();
    return Status();
  }
  return cuda_status(e, what);
}
}  // namespace

Status Event::query(bool* done) {
  return query_status(cudaEventQuery(static_cast<cudaEvent_t>(event_)), done, "cudaEventQuery");
}

Status stream_query(void* stream, bool* done) {
  return query_status(cudaStreamQuery(static_cast<cudaStream_t>(stream)), done, "cudaStreamQuery");
}

Status Event::make_stream_wait(void* stream) {
  return cuda_status(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event_), 0),
                     "cudaStreamWaitEvent");
}

}  // namespace cuda
}  // namespace cudaprep
