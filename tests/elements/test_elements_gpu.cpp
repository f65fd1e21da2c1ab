// GPU tests of the elements (suite 'gpu', exit 77 without a GPU): the CUDA path gives the same
// output as the CPU path through every memory combination (CUDA or system memory in and out,
// via cudaupload), and a real H.264 clip decoded by NVDEC (zero-copy NV12 in CUDA memory)
// gives the same tensors and matches as the CPU path on the same decoded frames.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>

#include "gstcudaprepmeta.h"
#include "harness_util.h"
#include "cuda_device.h"
#include "tensorize.h"

using test::make_frame;
using test::video_caps;

namespace {

std::vector<uint8_t> bytes_of(GstBuffer* buf) {
  GstMapInfo map;
  EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));  // CUDA memory is downloaded
  std::vector<uint8_t> v(map.data, map.data + map.size);
  gst_buffer_unmap(buf, &map);
  return v;
}

bool has_cuda_caps(GstHarness* h) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  bool cuda = caps && gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory");
  if (caps) gst_caps_unref(caps);
  return cuda;
}

void expect_floats_close(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, bool fp16,
                         const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  if (fp16) {
    EXPECT_EQ(a, b) << what << ": fp16 tensors differ";
    return;
  }
  const float* fa = reinterpret_cast<const float*>(a.data());
  const float* fb = reinterpret_cast<const float*>(b.data());
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < a.size() / 4; i++) {
    double d = std::fabs((double)fa[i] - fb[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  EXPECT_LE(worst, 1e-5) << what << ": max |gpu - cpu| at element " << at;
}

// GPU against CPU within the tolerances: fp32 1e-5, fp16 and uint8 / int8 bit for bit (the kernel
// tests hold the integer types to the CPU path's bits: the same float maths, then one rounding).
void expect_tensors_close(const std::vector<uint8_t>& gpu, const std::vector<uint8_t>& cpu, const std::string& props,
                          const std::string& what) {
  const bool is_signed = props.find("dtype=int8") != std::string::npos;
  if (!is_signed && props.find("dtype=uint8") == std::string::npos) {
    expect_floats_close(gpu, cpu, props.find("float16") != std::string::npos, what);
    return;
  }
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  size_t differing = 0, first = 0;
  for (size_t i = 0; i < gpu.size(); i++)
    if (gpu[i] != cpu[i] && differing++ == 0) first = i;
  const auto value = [&](const std::vector<uint8_t>& v) { return is_signed ? (int)(int8_t)v[first] : (int)v[first]; };
  EXPECT_EQ(differing, 0u) << what << ": first at element " << first << ", gpu " << value(gpu) << " cpu " << value(cpu);
}

struct Route {
  const char* name;
  const char* upstream;   // "" or "cudaupload ! "
  const char* sink_caps;  // caps the harness sink accepts
};

std::vector<uint8_t> run_tensorize(const std::string& desc, const std::string& src_caps, const char* sink_caps,
                                   GstBuffer* frame, bool* cuda_out) {
  GstHarness* h = gst_harness_new_parse(desc.c_str());
  gst_harness_set_src_caps_str(h, src_caps.c_str());
  if (sink_caps) gst_harness_set_sink_caps_str(h, sink_caps);
  GstBuffer* out = gst_harness_push_and_pull(h, frame);
  std::vector<uint8_t> v;
  if (out) {
    v = bytes_of(out);
    if (cuda_out) *cuda_out = has_cuda_caps(h);
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
  return v;
}

// cudaupload (1.22) takes fewer formats than we do (no GRAY8): CUDA-in routes are tested for
// the formats it can produce.
bool cudaupload_supports(const char* format) {
  GstElement* up = gst_element_factory_make("cudaupload", nullptr);
  if (!up) return false;
  GstPad* sink = gst_element_get_static_pad(up, "sink");
  GstCaps* tmpl = gst_pad_get_pad_template_caps(sink);
  GstCaps* want = gst_caps_from_string((std::string("video/x-raw,format=") + format).c_str());
  bool ok = gst_caps_can_intersect(tmpl, want);
  gst_caps_unref(want);
  gst_caps_unref(tmpl);
  gst_object_unref(sink);
  gst_object_unref(up);
  return ok;
}

}  // namespace

struct GpuFormat {
  GstVideoFormat format;
  const char* name;
};

class TensorizeGpuElement : public ::testing::TestWithParam<GpuFormat> {};

TEST_P(TensorizeGpuElement, CudaPathEqualsCpuPathThroughEveryMemoryRoute) {
  const GpuFormat& f = GetParam();
  // Odd sizes, but even ones where cudaupload mishandles odd ones (the kernel tests cover odd
  // sizes): packed 4:2:2 gets an even width (cudaupload copies width x 2 bytes a row and leaves the
  // last pixel pair's V byte behind), NV21 an even width and height (1.26's cudaupload fails on
  // plane 1 of an odd-sized NV21 frame: "Failed to copy plane 1", CUDA_ERROR_INVALID_VALUE, with
  // cudadownload alone too; 1.22's cudaupload has no NV21).
  const bool nv21 = f.format == GST_VIDEO_FORMAT_NV21;
  const bool even_width = nv21 || f.format == GST_VIDEO_FORMAT_YUY2 || f.format == GST_VIDEO_FORMAT_UYVY;
  const int w = even_width ? 318 : 317, h = nv21 ? 212 : 211;
  const char* props[] = {"width=160 height=128",
                         "width=96 height=96 resize-mode=crop interpolation=nearest layout=nhwc",
                         "width=64 height=80 resize-mode=ultralytics dtype=float16 channel-order=bgr",
                         "width=50 height=50 resize-mode=stretch roi=<10,20,200,150> mean=<0.4> std=<0.2,0.3,0.4>",
                         // the batch kernel: the first of two tensors of 3 regions each (one clipped)
                         "width=48 height=40 batch-size=3 roi-margin=0.1 "
                         "rois=<<0,0,100,80>,<150,100,160,110>,<300,200,40,40>,<5,5,30,30>>",
                         // integer types and gray (issue 12 item 5), single-frame and batch kernels
                         "width=64 height=48 dtype=uint8",
                         "width=64 height=48 dtype=int8 layout=nhwc scale=0.5 mean=<10,20,30> std=<2,1,0.5>",
                         "width=72 height=40 resize-mode=crop dtype=uint8 channels=1",
                         "width=40 height=40 channels=1 layout=nhwc interpolation=nearest",
                         "width=32 height=32 dtype=int8 channels=1 batch-size=3 "
                         "rois=<<0,0,100,80>,<150,100,160,110>>"};
  for (const char* p : props) {
    std::string caps = video_caps(f.name, w, h);
    auto cpu_frame = make_frame(f.format, w, h, 21, 3, 0);
    auto cpu = run_tensorize(std::string("cudatensorize backend=cpu ") + p, caps, nullptr, cpu_frame.buffer, nullptr);
    ASSERT_FALSE(cpu.empty()) << p;
    const Route routes[] = {
        {"system in, system out", "", "other/tensors"},
        {"system in, CUDA out", "", "other/tensors(memory:CUDAMemory)"},
        // the caps filter makes cudaupload hand over CUDA memory (it would pass system memory
        // through when downstream accepts both)
        {"CUDA in, CUDA out", "cudaupload ! video/x-raw(memory:CUDAMemory) ! ", "other/tensors(memory:CUDAMemory)"},
        {"CUDA in, system out", "cudaupload ! video/x-raw(memory:CUDAMemory) ! ", "other/tensors"},
    };
    for (const Route& r : routes) {
      if (*r.upstream && !cudaupload_supports(f.name)) continue;
      auto gpu_frame = make_frame(f.format, w, h, 21, 3, 0);
      bool cuda_out = false;
      std::string desc = std::string(r.upstream) + "cudatensorize backend=cuda " + p;
      auto gpu = run_tensorize(desc, caps, r.sink_caps, gpu_frame.buffer, &cuda_out);
      ASSERT_FALSE(gpu.empty()) << p << " / " << r.name;
      EXPECT_EQ(cuda_out, strstr(r.sink_caps, "CUDAMemory") != nullptr) << r.name;
      expect_tensors_close(gpu, cpu, p, std::string(f.name) + " " + p + " / " + r.name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, TensorizeGpuElement,
    ::testing::Values(GpuFormat{GST_VIDEO_FORMAT_NV12, "NV12"}, GpuFormat{GST_VIDEO_FORMAT_I420, "I420"},
                      GpuFormat{GST_VIDEO_FORMAT_BGR, "BGR"}, GpuFormat{GST_VIDEO_FORMAT_RGBA, "RGBA"},
                      GpuFormat{GST_VIDEO_FORMAT_BGRx, "BGRx"}, GpuFormat{GST_VIDEO_FORMAT_GRAY8, "GRAY8"},
                      GpuFormat{GST_VIDEO_FORMAT_YUY2, "YUY2"}, GpuFormat{GST_VIDEO_FORMAT_UYVY, "UYVY"},
                      GpuFormat{GST_VIDEO_FORMAT_NV21, "NV21"}, GpuFormat{GST_VIDEO_FORMAT_P010_10LE, "P010_10LE"}),
    [](const auto& i) { return std::string(i.param.name); });

// The element shares the upstream CUDA context (GstContext): its output memory belongs to the
// same GstCudaContext as the frames cudaupload gave it.
TEST(ContextGpu, SharesUpstreamCudaContext) {
  GstHarness* h = gst_harness_new_parse(
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudatensorize backend=cuda width=32 height=32");
  gst_harness_set_src_caps_str(h, video_caps("NV12", 64, 48).c_str());
  gst_harness_set_sink_caps_str(h, "other/tensors(memory:CUDAMemory)");
  GstElement* tz = test::element_of(h, "cudatensorize");
  GstPad* sink = gst_element_get_static_pad(tz, "sink");
  GstCudaContext* upstream_ctx = nullptr;
  gst_pad_add_probe(
      sink, GST_PAD_PROBE_TYPE_BUFFER,
      [](GstPad*, GstPadProbeInfo* info, gpointer data) {
        GstMemory* mem = gst_buffer_peek_memory(GST_PAD_PROBE_INFO_BUFFER(info), 0);
        if (gst_is_cuda_memory(mem)) *static_cast<GstCudaContext**>(data) = GST_CUDA_MEMORY_CAST(mem)->context;
        return GST_PAD_PROBE_OK;
      },
      &upstream_ctx, nullptr);
  auto f = make_frame(GST_VIDEO_FORMAT_NV12, 64, 48, 3);
  GstBuffer* out = gst_harness_push_and_pull(h, f.buffer);
  ASSERT_NE(out, nullptr);
  GstMemory* mem = gst_buffer_peek_memory(out, 0);
  ASSERT_TRUE(gst_is_cuda_memory(mem));
  ASSERT_NE(upstream_ctx, nullptr);
  EXPECT_EQ(GST_CUDA_MEMORY_CAST(mem)->context, upstream_ctx);
  EXPECT_EQ(gst_buffer_get_size(out), 32u * 32 * 3 * 4);
  gst_buffer_unref(out);
  gst_object_unref(sink);
  gst_harness_teardown(h);
}

// A device that does not exist is a clear error at start, not a crash.
TEST(ContextGpu, MissingDeviceIsAClearError) {
  GstElement* e = gst_element_factory_make("cudatensorize", nullptr);
  ASSERT_NE(e, nullptr);
  g_object_set(e, "backend", 1 /* cuda */, "device-id", 99, NULL);
  EXPECT_EQ(test::start_error(e), "No usable CUDA device");
  gst_object_unref(e);
}

// ---- a real clip through NVDEC ------------------------------------------------------------

namespace {

struct Outputs {
  std::vector<std::vector<uint8_t>> tensors;
  std::vector<std::string> matches;  // per frame: "x,y,score;..." from the ROI metas
  std::vector<std::vector<uint8_t>> frames;
  std::string error;
};

// The frame's planes without row padding (CUDA memory is downloaded by the plain map).
std::vector<uint8_t> compact_planes(GstSample* sample, GstBuffer* buf) {
  GstVideoInfo info;
  GstVideoFrame frame;
  std::vector<uint8_t> out;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) ||
      !gst_video_frame_map(&frame, &info, buf, GST_MAP_READ))
    return out;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame); p++) {
    const size_t row = (size_t)GST_VIDEO_FRAME_COMP_WIDTH(&frame, p) * GST_VIDEO_FRAME_COMP_PSTRIDE(&frame, p);
    for (int y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT(&frame, p); y++) {
      const uint8_t* src =
          (const uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&frame, p) + (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p);
      out.insert(out.end(), src, src + row);
    }
  }
  gst_video_frame_unmap(&frame);
  return out;
}

Outputs run_pipeline(const std::string& desc) {
  Outputs out;
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  if (!p) {
    out.error = err->message;
    g_error_free(err);
    return out;
  }
  GstElement* tsink = gst_bin_get_by_name(GST_BIN(p), "tensor");
  GstElement* msink = gst_bin_get_by_name(GST_BIN(p), "matches");
  gst_element_set_state(p, GST_STATE_PLAYING);
  auto drain = [&](GstElement* sink, bool tensors) {
    // (a timeout, not a blocking pull: after an error no EOS comes, and the bus check below reports it)
    while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_SECOND)) {
      GstBuffer* b = gst_sample_get_buffer(s);
      if (tensors) {
        out.tensors.push_back(bytes_of(b));
      } else {
        std::string m;
        gpointer state = nullptr;
        while (GstMeta* meta =
                   gst_buffer_iterate_meta_filtered(b, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
          auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
          GstStructure* s2 = gst_video_region_of_interest_meta_get_param(roi, "template-match");
          double score = -2;  // shows up in the comparison if the param structure went missing
          if (s2) gst_structure_get_double(s2, "score", &score);
          char line[128];
          snprintf(line, sizeof line, "%u,%u,%u,%u,%.6f;", roi->x, roi->y, roi->w, roi->h, score);
          m += line;
        }
        out.matches.push_back(m);
        out.frames.push_back(compact_planes(s, b));
      }
      gst_sample_unref(s);
    }
  };
  // the two branches run in parallel (queues); each sink holds a few samples at most
  if (tsink) g_object_set(tsink, "max-buffers", 0u, NULL);
  if (msink) g_object_set(msink, "max-buffers", 0u, NULL);
  if (tsink) drain(tsink, true);
  if (msink) drain(msink, false);
  GstMessage* msg = gst_bus_timed_pop_filtered(GST_ELEMENT_BUS(p), 0, GST_MESSAGE_ERROR);
  if (msg) {
    GError* e = nullptr;
    gst_message_parse_error(msg, &e, nullptr);
    out.error = e->message;
    g_error_free(e);
    gst_message_unref(msg);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  if (tsink) gst_object_unref(tsink);
  if (msink) gst_object_unref(msink);
  gst_object_unref(p);
  return out;
}

const char* cpu_h264_decoder() {
  static const char* names[] = {"avdec_h264", "openh264dec"};
  for (const char* n : names) {
    GstElementFactory* f = gst_element_factory_find(n);
    if (f) {
      gst_object_unref(f);
      return n;
    }
  }
  return nullptr;
}

std::string clip_branches(const char* decoder, const char* backend) {
  // Both paths see NV12 (libav/openh264 give I420: converted losslessly before the tee) with the
  // same chroma siting (the decoders' caps may disagree on it), and
  // the matches are read right after cudatemplatematch: cudadownload and videoconvert (1.22)
  // drop or rebuild ROI metas without their parameters.
  std::string clip = std::string(TEST_SOURCE_DIR) + "/data/vtest-h264.mp4";
  std::string to_nv12 = strcmp(decoder, "nvh264dec") == 0 ? "" : " ! videoconvert ! video/x-raw,format=NV12";
  return "filesrc location=" + clip + " ! qtdemux ! h264parse ! " + decoder + to_nv12 + " ! tee name=t " +
         "t. ! queue ! cudatensorize chroma-site=mpeg2 backend=" + backend + " ! appsink name=tensor sync=false " +
         "t. ! queue ! cudatemplatematch backend=" + backend +
         " template-rect=<380,200,48,64> max-matches=3 threshold=0.6 ! appsink name=matches sync=false";
}

}  // namespace

TEST(ClipGpu, NvdecIntoElementsMatchesCpuPathOnDecodedFrames) {
  GstElementFactory* nvdec = gst_element_factory_find("nvh264dec");
  if (!nvdec) GTEST_SKIP() << "nvh264dec not available (no NVDEC)";
  gst_object_unref(nvdec);
  const char* cpudec = cpu_h264_decoder();
  if (!cpudec) GTEST_SKIP() << "no CPU H.264 decoder";

  Outputs gpu = run_pipeline(clip_branches("nvh264dec", "cuda"));
  Outputs cpu = run_pipeline(clip_branches(cpudec, "cpu"));
  ASSERT_TRUE(gpu.error.empty()) << gpu.error;
  ASSERT_TRUE(cpu.error.empty()) << cpu.error;
  ASSERT_EQ(gpu.tensors.size(), 31u);
  ASSERT_EQ(cpu.tensors.size(), gpu.tensors.size());
  for (size_t i = 0; i < gpu.tensors.size(); i++)
    expect_floats_close(gpu.tensors[i], cpu.tensors[i], false, "frame " + std::to_string(i));
  ASSERT_EQ(gpu.matches.size(), cpu.matches.size());
  for (size_t i = 0; i < gpu.matches.size(); i++) EXPECT_EQ(gpu.matches[i], cpu.matches[i]) << "frame " << i;
  for (size_t i = 0; i < 3 && i < gpu.matches.size(); i++)
    std::printf("frame %zu: gpu %s | cpu %s\n", i, gpu.matches[i].c_str(), cpu.matches[i].c_str());
  // the template is found in the first frame (where it was cut) with score 1, and drawn
  EXPECT_EQ(gpu.matches[0].rfind("380,200,48,64,1.000000;", 0), 0u) << gpu.matches[0];
  // drawn boxes are identical in both paths
  ASSERT_FALSE(gpu.frames[0].empty());
  EXPECT_EQ(gpu.frames[0], cpu.frames[0]);
}

namespace {

// What the element pushed, read by a pad probe at the moment of the push: a tensor that is not
// yet complete then would be caught (a later read could find the GPU done by chance).
struct PushedTensors {
  std::vector<std::vector<uint8_t>> host;     // system-memory tensors, mapped at push time
  std::vector<std::vector<uint8_t>> ordered;  // CUDA tensors read on the memory's own stream
  int need_sync = 0, without_stream = 0;
};

// A CUDA consumer that orders on the tensor's stream instead of the host: it enqueues its read
// (a copy to pinned memory) on the stream the memory carries and waits for that read only.
std::vector<uint8_t> read_on_memory_stream(GstMemory* mem, PushedTensors* seen) {
  std::vector<uint8_t> out;
#if GST_CHECK_VERSION(1, 24, 0)
  GstCudaMemory* cmem = GST_CUDA_MEMORY_CAST(mem);
  GstCudaStream* stream = gst_cuda_memory_get_stream(cmem);
  if (!stream) {
    seen->without_stream++;
    return out;
  }
  if (GST_MEMORY_FLAG_IS_SET(mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC)) seen->need_sync++;
  GstMapInfo map;
  if (!gst_memory_map(mem, &map, (GstMapFlags)(GST_MAP_READ | GST_MAP_CUDA))) return out;  // no host sync
  EXPECT_TRUE(gst_cuda_context_push(cmem->context));
  cudaprep::cuda::PinnedBuffer pinned;
  cudaprep::cuda::Event read;
  void* handle = (void*)gst_cuda_stream_get_handle(stream);
  EXPECT_TRUE(pinned.allocate(map.size).ok());
  EXPECT_TRUE(read.create(true).ok());
  EXPECT_TRUE(cudaprep::cuda::copy_2d_async(pinned.data(), map.size, map.data, map.size, map.size, 1,
                                            cudaprep::cuda::CopyKind::DeviceToHost, handle)
                  .ok());
  EXPECT_TRUE(read.record(handle).ok());
  EXPECT_TRUE(read.synchronize().ok());
  out.assign(pinned.data(), pinned.data() + map.size);
  gst_cuda_context_pop(nullptr);
  gst_memory_unmap(mem, &map);
#else
  (void)mem;
  seen->without_stream++;
#endif
  return out;
}

GstPadProbeReturn read_when_pushed(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* seen = static_cast<PushedTensors*>(data);
  GstBuffer* buf = GST_PAD_PROBE_INFO_BUFFER(info);
  GstMemory* mem = gst_buffer_peek_memory(buf, 0);
  if (gst_is_cuda_memory(mem)) {
    seen->ordered.push_back(read_on_memory_stream(mem, seen));
  } else {
    GstMapInfo map;
    EXPECT_TRUE(gst_buffer_map(buf, &map, GST_MAP_READ));
    seen->host.emplace_back(map.data, map.data + map.size);
    gst_buffer_unmap(buf, &map);
  }
  return GST_PAD_PROBE_OK;
}

// Pushes `frames` different frames through `desc` (outputs are collected by a probe when pushed,
// none pulled in between), and the CPU path's tensors of the same frames.
void push_distinct_frames(const std::string& desc, const std::string& caps, const char* sink_caps, int frames,
                          PushedTensors* seen, std::vector<std::vector<uint8_t>>* cpu) {
  GstHarness* h = gst_harness_new_parse(desc.c_str());
  gst_harness_set_src_caps_str(h, caps.c_str());
  gst_harness_set_sink_caps_str(h, sink_caps);
  GstPad* src = gst_element_get_static_pad(test::element_of(h, "cudatensorize"), "src");
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, read_when_pushed, seen, nullptr);
  gst_object_unref(src);
  for (int i = 0; i < frames; i++) {
    auto frame = make_frame(GST_VIDEO_FORMAT_BGR, 1280, 720, 100 + i, 0, 0);
    auto cpu_frame = make_frame(GST_VIDEO_FORMAT_BGR, 1280, 720, 100 + i, 0, 0);
    ASSERT_EQ(gst_harness_push(h, frame.buffer), GST_FLOW_OK) << i;
    cpu->push_back(
        run_tensorize("cudatensorize backend=cpu width=640 height=640", caps, nullptr, cpu_frame.buffer, nullptr));
  }
  gst_harness_teardown(h);
}

}  // namespace

// System-memory tensors are complete when pushed, whichever way gpu-wait waits for the download;
// system-memory frames go through the ring of upload slots (more frames than slots, each
// different) without one overwriting another.
TEST(HandoffGpu, SystemMemoryTensorIsCompleteWhenPushed) {
  for (const char* wait : {"poll", "blocking", "spin", "stream-sync"}) {
    SCOPED_TRACE(wait);
    PushedTensors seen;
    std::vector<std::vector<uint8_t>> cpu;
    push_distinct_frames(std::string("cudatensorize backend=cuda width=640 height=640 gpu-wait=") + wait,
                         video_caps("BGR", 1280, 720), "other/tensors", 7, &seen, &cpu);
    ASSERT_EQ(seen.host.size(), 7u);
    for (size_t i = 0; i < seen.host.size(); i++)
      expect_floats_close(seen.host[i], cpu[i], false, "frame " + std::to_string(i));
  }
}

// A system-memory tensor's padding rows cross the bus once per pool buffer: a later tensor in
// the same buffer leaves them as they are, until something maps the buffer for writing. Seen
// from outside: bytes changed behind the element's back (through a read map, which no
// element may do) survive the next tensor in that buffer, while a write map, or a new pad-value
// while playing, makes the element write every row again. Every tensor is compared with the
// CPU path's. 1280x720 -> 640x640 letterbox: rows [0, 140) and [500, 640) are padding.
TEST(HandoffGpu, PaddingRowsOfPinnedBuffersAreSentOnceUntilWrittenElsewhere) {
  GstHarness* h = gst_harness_new_parse("cudatensorize backend=cuda width=640 height=640");
  const std::string caps = video_caps("BGR", 1280, 720);
  gst_harness_set_src_caps_str(h, caps.c_str());
  gst_harness_set_sink_caps_str(h, "other/tensors");
  constexpr uint8_t kScribble = 0x5A;
  constexpr size_t kRowBytes = 640 * 4;  // row 0 of the first plane: padding
  enum class Done { Nothing, ReadMapScribble, WriteMapScribble };
  std::map<const void*, Done> last_done;  // per pool buffer (its memory's address)
  int kept_seen = 0, rewritten_after_write_map = 0;
  for (int i = 0; i < 16; i++) {
    SCOPED_TRACE("frame " + std::to_string(i));
    const char* pad = i < 12 ? "114" : "0";
    if (i == 12) test::set_arg(h, "cudatensorize", "pad-value", pad);
    auto frame = make_frame(GST_VIDEO_FORMAT_BGR, 1280, 720, 300 + i, 0, 0);
    auto cpu_frame = make_frame(GST_VIDEO_FORMAT_BGR, 1280, 720, 300 + i, 0, 0);
    std::vector<uint8_t> cpu =
        run_tensorize(std::string("cudatensorize backend=cpu width=640 height=640 pad-value=") + pad, caps, nullptr,
                      cpu_frame.buffer, nullptr);
    GstBuffer* out = gst_harness_push_and_pull(h, frame.buffer);
    ASSERT_TRUE(out);
    GstMapInfo map;
    ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    ASSERT_EQ(map.size, cpu.size());
    const Done before = last_done.count(map.data) ? last_done[map.data] : Done::Nothing;
    std::vector<uint8_t> got(map.data, map.data + map.size);
    if (before == Done::ReadMapScribble) {
      EXPECT_EQ(size_t(std::count(got.begin(), got.begin() + kRowBytes, kScribble)), kRowBytes)
          << "a padding row was sent again although nothing mapped the buffer for writing";
      kept_seen += got[0] == kScribble;
      std::copy(cpu.begin(), cpu.begin() + kRowBytes, got.begin());  // the rest must be the tensor
    }
    if (before == Done::WriteMapScribble) rewritten_after_write_map += got[0] != kScribble;
    expect_floats_close(got, cpu, false, "tensor");
    gst_buffer_unmap(out, &map);
    // What a downstream element does with this buffer before it goes back to the pool.
    Done now = Done::Nothing;
    if (i % 4 == 1) {  // bytes changed behind the element's back, and the next tensor is kept
      ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
      std::memset(map.data, kScribble, kRowBytes);
      gst_buffer_unmap(out, &map);
      now = Done::ReadMapScribble;
    } else if (i % 4 == 3 && i < 12) {  // an in-place writer: the next tensor is whole again
      ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_WRITE));
      std::memset(map.data, kScribble, kRowBytes);
      gst_buffer_unmap(out, &map);
      now = Done::WriteMapScribble;
    }
    ASSERT_TRUE(gst_buffer_map(out, &map, GST_MAP_READ));
    last_done[map.data] = now;
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
    if (i == 11)  // the new pad-value is a new plan: its first tensors are not kept
      for (auto& b : last_done) b.second = Done::Nothing;
  }
  gst_harness_teardown(h);
  EXPECT_GE(kept_seen, 2) << "no tensor left its padding rows: the pool's buffers were not reused?";
  EXPECT_GE(rewritten_after_write_map, 2);
}

// A CUDA consumer that orders its reads on the stream the tensor's memory carries (GStreamer
// 1.24+), with no host sync, sees complete tensors, from CUDA and from system-memory frames.
TEST(HandoffGpu, CudaConsumerOrderingOnTheStreamSeesCompleteTensors) {
#if !GST_CHECK_VERSION(1, 24, 0)
  GTEST_SKIP() << "GStreamer " << GST_VERSION_MAJOR << "." << GST_VERSION_MINOR
               << " < 1.24: CUDA memory carries no stream; the element syncs before pushing";
#endif
  for (const char* upstream : {"", "cudaupload ! video/x-raw(memory:CUDAMemory) ! "}) {
    SCOPED_TRACE(*upstream ? "CUDA frames" : "system-memory frames");
    PushedTensors seen;
    std::vector<std::vector<uint8_t>> cpu;
    push_distinct_frames(std::string(upstream) + "cudatensorize backend=cuda width=640 height=640",
                         video_caps("BGR", 1280, 720), "other/tensors(memory:CUDAMemory)", 7, &seen, &cpu);
    EXPECT_EQ(seen.without_stream, 0) << "the tensor's memory carries no stream";
    EXPECT_EQ(seen.need_sync, 7) << "the tensor's memory is not marked as needing a sync";
    ASSERT_EQ(seen.ordered.size(), 7u);
    for (size_t i = 0; i < seen.ordered.size(); i++)
      expect_floats_close(seen.ordered[i], cpu[i], false, "frame " + std::to_string(i));
  }
}

#if GST_CHECK_VERSION(1, 24, 0)
namespace {

// A producer of CUDA frames on a stream of its own, as NVDEC decoders are (1.24+): each frame's
// upload is enqueued on that stream and the memory is marked as needing a sync. A slow frame's
// upload waits behind a host function that sleeps, so that work reading it cannot be done early.
struct StreamProducer {
  GstCudaContext* context = gst_cuda_load_library() ? gst_cuda_context_new(0) : nullptr;
  GstCudaStream* stream = context ? gst_cuda_stream_new(context) : nullptr;
  std::atomic<bool> sleep_done{false};
  std::vector<std::unique_ptr<cudaprep::cuda::PinnedBuffer>> staging;  // a frame's upload source
  // The frames' memory outlives their buffers, as a decoder's pool keeps it: freeing device memory
  // would wait for the whole device, the producer's sleep included.
  std::vector<GstMemory*> memories;
  ~StreamProducer() {
    if (context && gst_cuda_context_push(context)) {
      if (stream) cudaStreamSynchronize((cudaStream_t)gst_cuda_stream_get_handle(stream));
      staging.clear();
      gst_cuda_context_pop(nullptr);
    }
    for (GstMemory* m : memories) gst_memory_unref(m);
    if (stream) gst_cuda_stream_unref(stream);
    if (context) gst_object_unref(context);
  }

  static void CUDART_CB sleep_then_mark(void* data) {
    g_usleep(500 * 1000);
    static_cast<StreamProducer*>(data)->sleep_done = true;
  }

  GstBuffer* frame(const test::TestFrame& f, int width, int height, bool slow) {
    GstVideoInfo info;
    gst_video_info_set_format(&info, GST_VIDEO_FORMAT_NV12, width, height);
    GstMemory* mem = gst_cuda_allocator_alloc(nullptr, context, stream, &info);
    if (!mem) return nullptr;
    GstCudaMemory* cmem = GST_CUDA_MEMORY_CAST(mem);
    GstBuffer* buf = gst_buffer_new();
    gst_buffer_append_memory(buf, mem);
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_FORMAT_NV12, width, height, 2,
                                   cmem->info.offset, cmem->info.stride);
    GstMapInfo map;
    EXPECT_TRUE(gst_memory_map(mem, &map, (GstMapFlags)(GST_MAP_WRITE | GST_MAP_CUDA)));
    EXPECT_TRUE(gst_cuda_context_push(context));
    void* handle = (void*)gst_cuda_stream_get_handle(stream);
    if (slow) {
      EXPECT_EQ(cudaLaunchHostFunc((cudaStream_t)handle, sleep_then_mark, this), cudaSuccess);
    }
    // From pinned memory: a copy from pageable memory would wait on the host for the sleep.
    staging.push_back(std::make_unique<cudaprep::cuda::PinnedBuffer>());
    EXPECT_TRUE(staging.back()->allocate(f.planes[0].size() + f.planes[1].size()).ok());
    uint8_t* host = staging.back()->data();
    for (guint p = 0; p < 2; p++) {
      memcpy(host, f.planes[p].data(), f.planes[p].size());
      EXPECT_TRUE(cudaprep::cuda::copy_2d_async(map.data + cmem->info.offset[p], cmem->info.stride[p], host,
                                                f.strides[p], f.strides[p], GST_VIDEO_INFO_COMP_HEIGHT(&info, p),
                                                cudaprep::cuda::CopyKind::HostToDevice, handle)
                      .ok());
      host += f.planes[p].size();
    }
    gst_cuda_context_pop(nullptr);
    gst_memory_unmap(mem, &map);
    GST_MINI_OBJECT_FLAG_SET(mem, GST_CUDA_MEMORY_TRANSFER_NEED_SYNC);  // as a decoder leaves it
    memories.push_back(gst_memory_ref(mem));
    return buf;
  }
};

struct Release {
  bool released = false, producer_done_then = false;
  StreamProducer* producer = nullptr;
};

void on_frame_released(gpointer data, GstMiniObject*) {
  auto* r = static_cast<Release*>(data);
  r->released = true;
  r->producer_done_then = r->producer->sleep_done;
}

}  // namespace
#endif

// Frames of a producer that runs on its own stream (nvh264dec's, 1.24+): the element orders its
// kernel after the producer's work on the GPU (no host wait, the push returns while the producer
// still sleeps) and gives each frame back only once the GPU has read it (a decoder writes the
// next picture into a frame as soon as it is back); at EOS every frame is back. The tensors
// equal the CPU path's.
TEST(HandoffGpu, FramesOfAnotherStreamGoBackOnlyOnceRead) {
#if !GST_CHECK_VERSION(1, 24, 0)
  GTEST_SKIP() << "GStreamer " << GST_VERSION_MAJOR << "." << GST_VERSION_MINOR
               << " < 1.24: CUDA memory carries no stream; the element syncs every frame";
#else
  // Frame 0 starts the element (allocations, first launches); frame 1 is the slow one.
  constexpr int kFrames = 6, kSlow = 1, kWidth = 1920, kHeight = 1080;
  StreamProducer producer;
  ASSERT_NE(producer.stream, nullptr);
  GstElement* tz = gst_element_factory_make("cudatensorize", nullptr);
  ASSERT_NE(tz, nullptr);
  g_object_set(tz, "width", 640, "height", 640, nullptr);
  gst_util_set_object_arg(G_OBJECT(tz), "backend", "cuda");
  GstContext* shared = gst_context_new_cuda_context(producer.context);
  gst_element_set_context(tz, shared);  // before start: the element takes the producer's context
  gst_context_unref(shared);
  GstHarness* h = gst_harness_new_with_element(tz, "sink", "src");
  gst_object_unref(tz);
  gst_harness_set_src_caps_str(h, ("video/x-raw(memory:CUDAMemory),format=NV12,width=" + std::to_string(kWidth) +
                                   ",height=" + std::to_string(kHeight) + ",framerate=30/1")
                                      .c_str());
  gst_harness_set_sink_caps_str(h, "other/tensors(memory:CUDAMemory)");

  Release released[kFrames];
  std::vector<std::vector<uint8_t>> cpu;
  for (int i = 0; i < kFrames; i++) {
    auto f = make_frame(GST_VIDEO_FORMAT_NV12, kWidth, kHeight, 300 + i, 0, 0);
    GstBuffer* buf = producer.frame(f, kWidth, kHeight, i == kSlow);
    ASSERT_NE(buf, nullptr);
    released[i].producer = &producer;
    gst_mini_object_weak_ref(GST_MINI_OBJECT(buf), on_frame_released, &released[i]);
    ASSERT_EQ(gst_harness_push(h, buf), GST_FLOW_OK) << i;
    if (i == kSlow) {
      EXPECT_FALSE(producer.sleep_done) << "the element waited on the host for the producer's stream";
    }
    cpu.push_back(run_tensorize("cudatensorize backend=cpu width=640 height=640", video_caps("NV12", kWidth, kHeight),
                                nullptr, f.buffer, nullptr));
  }
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  for (int i = 0; i < kFrames; i++) {
    EXPECT_TRUE(released[i].released) << "frame " << i << " still held after EOS";
    if (i >= kSlow) {
      EXPECT_TRUE(released[i].producer_done_then) << "frame " << i << " given back before the GPU read it";
    }
  }
  ASSERT_EQ(gst_harness_buffers_in_queue(h), (guint)kFrames);
  for (int i = 0; i < kFrames; i++) {
    GstBuffer* out = gst_harness_pull(h);
    expect_floats_close(bytes_of(out), cpu[i], false, "frame " + std::to_string(i));
    gst_buffer_unref(out);
  }
  gst_harness_teardown(h);
#endif
}

// cudatensorbatch on the GPU: one batch of NV12 (through cudaupload: CUDA memory read in place),
// BGR, I420, YUY2 (MPEG-2 chroma siting) and P010 (system memory, staged per pad), odd sizes,
// equals the CPU path's batch, in CUDA and in system memory out.
constexpr int kBatchPads = 5;
static std::vector<uint8_t> run_batch(const char* backend, bool cuda_in, const char* out_caps,
                                      const std::string& props = "mean=<0.4> std=<0.2,0.3,0.4>") {
  const char* formats[kBatchPads] = {"NV12", "BGR", "I420", "YUY2", "P010_10LE"};
  const char* caps_extra[kBatchPads] = {"", "", "", ",chroma-site=mpeg2", ""};
  const GstVideoFormat gst_formats[kBatchPads] = {GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_I420,
                                                  GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_P010_10LE};
  const int sizes[kBatchPads][2] = {{1921, 1081}, {641, 359}, {320, 241}, {1279, 721}, {641, 361}};
  std::string desc = "cudatensorbatch name=b width=160 height=128 " + props + " backend=" + backend + " ! " + out_caps +
                     " ! appsink name=out sync=false";
  for (int i = 0; i < kBatchPads; i++) {
    desc += " appsrc name=s" + std::to_string(i) + " format=time caps=\"" +
            video_caps(formats[i], sizes[i][0], sizes[i][1], caps_extra[i]) + "\" ! ";
    if (cuda_in && i == 0) desc += "cudaupload ! video/x-raw(memory:CUDAMemory) ! ";
    desc += "b.sink_" + std::to_string(i);
  }
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc;
  if (!p) return {};
  gst_element_set_state(p, GST_STATE_PLAYING);
  for (int i = 0; i < kBatchPads; i++) {
    GstElement* src = gst_bin_get_by_name(GST_BIN(p), ("s" + std::to_string(i)).c_str());
    GstBuffer* buf = make_frame(gst_formats[i], sizes[i][0], sizes[i][1], 40 + i, 5, 0).buffer;
    GST_BUFFER_PTS(buf) = 0;
    GST_BUFFER_DURATION(buf) = GST_SECOND / 30;
    gst_app_src_push_buffer(GST_APP_SRC(src), buf);
    gst_object_unref(src);
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "out");
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND);
  std::vector<uint8_t> v;
  if (s) {
    EXPECT_EQ(gst_caps_features_contains(gst_caps_get_features(gst_sample_get_caps(s), 0), "memory:CUDAMemory"),
              strstr(out_caps, "CUDAMemory") != nullptr);
    v = bytes_of(gst_sample_get_buffer(s));
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(p);
  return v;
}

TEST(TensorBatchGpu, MixedBatchEqualsCpuPath) {
  auto cpu = run_batch("cpu", false, "other/tensors");
  ASSERT_EQ(cpu.size(), 160u * 128 * 3 * 4 * kBatchPads);
  expect_floats_close(run_batch("cuda", true, "other/tensors(memory:CUDAMemory)"), cpu, false, "CUDA in, CUDA out");
  expect_floats_close(run_batch("cuda", false, "other/tensors"), cpu, false, "system in, system out");
  for (const char* wait : {"gpu-wait=blocking", "gpu-wait=spin"})
    expect_floats_close(run_batch("cuda", false, "other/tensors", std::string("mean=<0.4> std=<0.2,0.3,0.4> ") + wait),
                        cpu, false, std::string("system in, system out, ") + wait);
}

// The same batch as uint8 gray and int8 NHWC colour (issue 12 item 5).
TEST(TensorBatchGpu, IntegerAndGrayBatchesEqualCpuPath) {
  for (const char* props : {"dtype=uint8 channels=1", "dtype=int8 layout=nhwc"}) {
    const size_t channels = strstr(props, "channels=1") ? 1 : 3;
    auto cpu = run_batch("cpu", false, "other/tensors", props);
    ASSERT_EQ(cpu.size(), 160u * 128 * channels * kBatchPads) << props;
    expect_tensors_close(run_batch("cuda", true, "other/tensors(memory:CUDAMemory)", props), cpu, props,
                         std::string(props) + ": CUDA in, CUDA out");
    expect_tensors_close(run_batch("cuda", false, "other/tensors", props), cpu, props,
                         std::string(props) + ": system in, system out");
  }
}

// Per-camera regions through the GPU path: rois on one pad, ROI metas (one partly outside its
// frame: clipped) on another, a pad without regions (its whole frame), and more regions than
// batch-size (several tensors for one window). Every tensor and every slot's meta equal the CPU
// path's.
struct RegionBatchOutput {
  std::vector<std::vector<uint8_t>> tensors;
  std::vector<std::string> slots;  // per slot of every tensor: pad, region index and id, source rect
};

static RegionBatchOutput run_region_batch(const char* backend, bool cuda_in, const char* out_caps,
                                          const std::string& extra = "") {
  const char* formats[3] = {"NV12", "BGR", "I420"};
  const GstVideoFormat gst_formats[3] = {GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_I420};
  const int sizes[3][2] = {{1921, 1081}, {641, 359}, {320, 241}};
  std::string desc = std::string("cudatensorbatch name=b width=96 height=64 batch-size=4 ") + extra +
                     " backend=" + backend +
                     " sink_0::rois=\"<<10,20,301,199>,<1500,900,400,170>,<0,0,64,33>>\" sink_1::roi-meta=true ! " +
                     out_caps + " ! appsink name=out sync=false";
  for (int i = 0; i < 3; i++) {
    desc += " appsrc name=s" + std::to_string(i) + " format=time caps=\"" +
            video_caps(formats[i], sizes[i][0], sizes[i][1], "") + "\" ! ";
    if (cuda_in && i != 1) desc += "cudaupload ! video/x-raw(memory:CUDAMemory) ! ";
    desc += "b.sink_" + std::to_string(i);
  }
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc;
  RegionBatchOutput out;
  if (!p) return out;
  gst_element_set_state(p, GST_STATE_PLAYING);
  for (int i = 0; i < 3; i++) {
    GstElement* src = gst_bin_get_by_name(GST_BIN(p), ("s" + std::to_string(i)).c_str());
    GstBuffer* buf = make_frame(gst_formats[i], sizes[i][0], sizes[i][1], 70 + i, 3, 0).buffer;
    GST_BUFFER_PTS(buf) = 0;
    GST_BUFFER_DURATION(buf) = GST_SECOND / 30;
    if (i == 1) {
      gst_buffer_add_video_region_of_interest_meta(buf, "car", 100, 50, 200, 120)->id = 11;
      gst_buffer_add_video_region_of_interest_meta(buf, "car", 560, 300, 150, 100)->id = 12;  // clipped to 81x59
    }
    gst_app_src_push_buffer(GST_APP_SRC(src), buf);
    gst_app_src_end_of_stream(GST_APP_SRC(src));
    gst_object_unref(src);
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "out");
  while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)) {
    GstBuffer* b = gst_sample_get_buffer(s);
    out.tensors.push_back(bytes_of(b));
    for (guint k = 0; k < gst_cuda_prep_buffer_get_slot_count(b); k++) {
      GstCudaPrepSlotInfo info;
      GstCudaPrepTransform t;
      EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_info(b, k, &info));
      EXPECT_TRUE(gst_cuda_prep_buffer_get_slot_transform(b, k, &t));
      char text[256];
      std::snprintf(text, sizeof(text), "%s empty=%d region=%d id=%d rect=%g,%g,%g,%g",
                    info.source_pad ? info.source_pad : "-", info.empty, info.region_index, info.region_id,
                    t.source_rect[0], t.source_rect[1], t.source_rect[2], t.source_rect[3]);
      out.slots.push_back(text);
    }
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(p);
  return out;
}

TEST(TensorBatchGpu, RegionsOfEveryCameraEqualCpuPath) {
  const RegionBatchOutput cpu = run_region_batch("cpu", false, "other/tensors");
  // 3 rois + 2 metas + 1 whole frame = 6 slots: two tensors of 4, the last with 2 empty slots.
  ASSERT_EQ(cpu.tensors.size(), 2u);
  ASSERT_EQ(cpu.slots.size(), 8u);
  EXPECT_EQ(cpu.slots[3], "sink_1 empty=0 region=0 id=11 rect=100,50,200,120");
  EXPECT_EQ(cpu.slots[4], "sink_1 empty=0 region=1 id=12 rect=560,300,81,59");
  for (bool cuda_in : {true, false}) {
    for (const char* caps : {"other/tensors(memory:CUDAMemory)", "other/tensors"}) {
      const RegionBatchOutput gpu = run_region_batch("cuda", cuda_in, caps);
      const std::string what = std::string(cuda_in ? "CUDA in, " : "system in, ") + caps;
      ASSERT_EQ(gpu.tensors.size(), cpu.tensors.size()) << what;
      EXPECT_EQ(gpu.slots, cpu.slots) << what;
      for (size_t k = 0; k < cpu.tensors.size(); k++)
        expect_floats_close(gpu.tensors[k], cpu.tensors[k], false, what + ", tensor " + std::to_string(k));
    }
  }
}

// batch-mode=dynamic: NNStreamer's flexible tensors of exactly the window's slots (4, then 2),
// each a 128-byte header the element writes before the slots; equal to the CPU path's. They are
// in (pinned) system memory: a downstream asking for CUDA memory gets none.
TEST(TensorBatchGpu, DynamicRegionBatchEqualsCpuPath) {
  constexpr size_t kHeader = 128, kSlot = 96u * 64 * 3 * 4;
  const RegionBatchOutput cpu = run_region_batch("cpu", false, "other/tensors", "batch-mode=dynamic");
  ASSERT_EQ(cpu.tensors.size(), 2u);
  ASSERT_EQ(cpu.tensors[0].size(), kHeader + 4 * kSlot);
  ASSERT_EQ(cpu.tensors[1].size(), kHeader + 2 * kSlot);
  ASSERT_EQ(cpu.slots.size(), 6u);
  EXPECT_TRUE(run_region_batch("cuda", true, "other/tensors(memory:CUDAMemory)", "batch-mode=dynamic").tensors.empty());
  for (bool cuda_in : {true, false}) {
    for (const char* caps : {"other/tensors"}) {
      const RegionBatchOutput gpu = run_region_batch("cuda", cuda_in, caps, "batch-mode=dynamic");
      const std::string what = std::string(cuda_in ? "CUDA in, " : "system in, ") + caps;
      ASSERT_EQ(gpu.tensors.size(), cpu.tensors.size()) << what;
      EXPECT_EQ(gpu.slots, cpu.slots) << what;
      for (size_t k = 0; k < cpu.tensors.size(); k++) {
        ASSERT_EQ(gpu.tensors[k].size(), cpu.tensors[k].size()) << what << ", tensor " << k;
        EXPECT_TRUE(std::equal(cpu.tensors[k].begin(), cpu.tensors[k].begin() + kHeader, gpu.tensors[k].begin()))
            << what << ": the header of tensor " << k;
        expect_floats_close(std::vector<uint8_t>(gpu.tensors[k].begin() + kHeader, gpu.tensors[k].end()),
                            std::vector<uint8_t>(cpu.tensors[k].begin() + kHeader, cpu.tensors[k].end()), false,
                            what + ", tensor " + std::to_string(k));
      }
    }
  }
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (cudaprep::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipping GPU element tests\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
