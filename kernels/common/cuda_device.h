// Thin, GStreamer-free wrappers over the CUDA runtime for the parts of the project that must
// build without CUDA headers. Streams are passed around as void* (a cudaStream_t).
// When the project is built without CUDA every call reports "built without CUDA".
#pragma once
#include <cstddef>
#include <cstdint>

#include "status.h"

namespace cudaprep {
namespace cuda {

bool built_with_cuda();

// Number of usable CUDA devices; 0 when there is no driver, no GPU or no CUDA build.
int device_count();

Status stream_create(void** stream);  // non-blocking stream in the current context
void stream_destroy(void* stream);
Status stream_sync(void* stream);
// Whether everything enqueued on `stream` has completed, without waiting (not ready is no error).
Status stream_query(void* stream, bool* done);

enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };
Status copy_2d_async(void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width_bytes, size_t height,
                     CopyKind kind, void* stream);

// Owns one device allocation; created per caps, never per frame.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;

  Status allocate(size_t bytes);
  // Pitched 2D allocation; the pitch suits texture objects.
  Status allocate_pitched(size_t width_bytes, size_t height);
  void reset();
  uint8_t* data() const { return static_cast<uint8_t*>(ptr_); }
  size_t pitch() const { return pitch_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t pitch_ = 0, bytes_ = 0;
};

// Page-locked host memory for fast, truly asynchronous copies.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  Status allocate(size_t bytes);
  void reset();
  uint8_t* data() const { return static_cast<uint8_t*>(ptr_); }
  // The address kernels of the allocating context write it at (mapped memory: the writes cross
  // the bus, with no copy after).
  uint8_t* device_data() const { return static_cast<uint8_t*>(device_ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  void* device_ptr_ = nullptr;
  size_t bytes_ = 0;
};

// One CUDA event, created per caps, never per frame. `blocking`: a host thread waiting on it
// sleeps until the driver wakes it (cudaEventBlockingSync) instead of spinning on a core.
class Event {
 public:
  Event() = default;
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Status create(bool blocking);
  void reset();
  bool valid() const { return event_ != nullptr; }
  Status record(void* stream);
  Status synchronize();
  // Whether the work recorded before it has completed, without waiting.
  Status query(bool* done);
  // Makes later work on `stream` wait for this event (no host wait).
  Status make_stream_wait(void* stream);

 private:
  void* event_ = nullptr;  // cudaEvent_t
};

}  // namespace cuda
}  // namespace cudaprep
