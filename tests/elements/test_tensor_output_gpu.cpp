// GPU tests (suite 'gpu', exit 77 without a GPU) of issue 12 items 2 and 4 on the CUDA path:
// the tensor shape taken from downstream's caps, and (GStreamer >= 1.26 builds) output=video-meta
// with the tensor in CUDA memory. Both equal the CPU path; fp16 throughout, where the two paths
// agree bit for bit.
#include <cstdio>
#include <string>
#include <vector>

#include <gst/cuda/gstcudamemory.h>

#include "config.h"
#include "cuda_device.h"
#include "harness_util.h"
#if CUDAPREP_HAVE_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

using test::make_frame;
using test::video_caps;

namespace {

const int W = 317, H = 211;
const char* kTensorShape = "width=96 height=64 layout=nhwc dtype=float16";

// One NV12 frame through `desc`; the output buffer (the caller unrefs it), and whether the
// negotiated output caps are in CUDA memory.
GstBuffer* push_one(const std::string& desc, const char* sink_caps, bool* cuda_caps) {
  GstHarness* h = gst_harness_new_parse(desc.c_str());
  gst_harness_set_src_caps_str(h, video_caps("NV12", W, H).c_str());
  if (sink_caps) gst_harness_set_sink_caps_str(h, sink_caps);
  GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_NV12, W, H, 31, 3, 0).buffer);
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  *cuda_caps = caps && gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory");
  if (caps) gst_caps_unref(caps);
  gst_harness_teardown(h);
  return out;
}

std::vector<uint8_t> cpu_tensor(const char* shape = kTensorShape) {
  bool cuda = false;
  GstBuffer* out = push_one(std::string("cudatensorize backend=cpu ") + shape, nullptr, &cuda);
  EXPECT_NE(out, nullptr);
  std::vector<uint8_t> v = out ? test::buffer_bytes(out) : std::vector<uint8_t>();
  if (out) gst_buffer_unref(out);
  return v;
}

const char* kUpload = "cudaupload ! video/x-raw(memory:CUDAMemory) ! ";

}  // namespace

// A plain cudatensorize on the GPU before a model element whose caps (here the harness sink's,
// `shape` in CUDA memory) fix the tensor: in CUDA memory, from system or CUDA memory frames, equal
// to `cpu` bit for bit.
static void expect_shape_from_downstream(const std::string& shape, const std::vector<uint8_t>& cpu) {
  for (const char* upstream : {"", kUpload}) {
    bool cuda = false;
    GstBuffer* out = push_one(std::string(upstream) + "cudatensorize backend=cuda",
                              ("other/tensors(memory:CUDAMemory),format=static,num_tensors=1," + shape).c_str(), &cuda);
    ASSERT_NE(out, nullptr) << upstream;
    EXPECT_TRUE(cuda) << upstream;
    EXPECT_TRUE(gst_is_cuda_memory(gst_buffer_peek_memory(out, 0))) << upstream;
    EXPECT_EQ(test::buffer_bytes(out), cpu) << shape << " " << upstream;
    gst_buffer_unref(out);
  }
}

TEST(TensorOutputGpu, ShapeFromDownstreamEqualsCpuPath) {
  expect_shape_from_downstream("dimensions=(string)3:96:64:1,types=float16", cpu_tensor());
}

// A quantised gray model's caps (1:W:H:1 uint8): the resized gray pixels (issue 12 item 5).
TEST(TensorOutputGpu, GrayUint8FromDownstreamEqualsCpuPath) {
  const std::vector<uint8_t> cpu = cpu_tensor("width=96 height=64 layout=nhwc dtype=uint8 channels=1");
  ASSERT_EQ(cpu.size(), 96u * 64);
  expect_shape_from_downstream("dimensions=(string)1:96:64:1,types=uint8", cpu);
}

// output=video-meta on the GPU: the frame passes (in the memory it came in), the tensor on it is
// in CUDA memory and equals the CPU path's.
TEST(TensorOutputGpu, VideoMetaTensorIsInCudaMemory) {
#if CUDAPREP_HAVE_TENSOR_META
  const std::vector<uint8_t> cpu = cpu_tensor();
  for (const char* upstream : {"", kUpload}) {
    bool cuda = false;
    GstBuffer* out = push_one(std::string(upstream) + "cudatensorize backend=cuda output=video-meta " + kTensorShape,
                              nullptr, &cuda);
    ASSERT_NE(out, nullptr) << upstream;
    EXPECT_EQ(cuda, *upstream != '\0') << "the frame keeps its memory: " << upstream;
    GstTensorMeta* meta = gst_buffer_get_tensor_meta(out);
    ASSERT_NE(meta, nullptr) << upstream;
    ASSERT_EQ(meta->num_tensors, 1u);
    const GstTensor* t = gst_tensor_meta_get(meta, 0);
    EXPECT_TRUE(gst_is_cuda_memory(gst_buffer_peek_memory(t->data, 0))) << upstream;
    EXPECT_EQ(test::buffer_bytes(t->data), cpu) << upstream;
    gst_buffer_unref(out);
  }
#else
  GTEST_SKIP() << "built against GStreamer < 1.26: output=video-meta is refused (CPU test analytics_meta)";
#endif
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (cudaprep::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipping GPU tensor output tests\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
