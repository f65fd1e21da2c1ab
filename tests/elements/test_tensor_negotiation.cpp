// cudatensorize takes the tensor's shape from downstream's caps where the user set no property
// (issue 12 item 4), on the CPU path. A capsfilter stands in for a model element whose sink caps
// fix the tensor; conflicts with properties the user did set fail negotiation naming both.
#include <cstring>
#include <string>
#include <vector>

#include "gstcudaprepmeta.h"
#include "harness_util.h"

using test::BusWatch;
using test::make_frame;
using test::video_caps;

namespace {

const char* kModelCaps = "other/tensors,format=static,num_tensors=1,framerate=(fraction)[0/1,MAX]";

// cudatensorize with `props` followed by a capsfilter holding `downstream` (the "model").
GstHarness* tensorize_into(const std::string& props, const std::string& downstream) {
  std::string desc = "cudatensorize backend=cpu " + props;
  if (!downstream.empty()) desc += " ! capsfilter caps=\"" + std::string(kModelCaps) + "," + downstream + "\"";
  GstHarness* h = gst_harness_new_parse(desc.c_str());
  gst_harness_set_src_caps_str(h, video_caps("BGR", 64, 48).c_str());
  return h;
}

std::string negotiated(GstHarness* h, const char* field) {
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  if (!caps) return "(no caps)";
  const gchar* v = gst_structure_get_string(gst_caps_get_structure(caps, 0), field);
  std::string out = v ? v : "(none)";
  gst_caps_unref(caps);
  return out;
}

// The tensor cudatensorize makes from frame `seed` with `props` and no downstream constraint.
std::vector<uint8_t> tensor_with(const std::string& props, uint32_t seed) {
  GstHarness* h = tensorize_into(props, "");
  GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, seed).buffer);
  EXPECT_NE(out, nullptr);
  std::vector<uint8_t> bytes = out ? test::buffer_bytes(out) : std::vector<uint8_t>();
  if (out) gst_buffer_unref(out);
  gst_harness_teardown(h);
  return bytes;
}

// Pushes one frame where negotiation must fail; returns the error posted.
std::string refused(const std::string& props, const std::string& downstream) {
  GstHarness* h = tensorize_into(props, downstream);
  BusWatch bus(h);
  EXPECT_EQ(gst_harness_push(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 5).buffer), GST_FLOW_NOT_NEGOTIATED);
  std::string err = bus.first_error();
  gst_harness_teardown(h);
  return err;
}

}  // namespace

// One frame (seed) through cudatensorize `props` ! capsfilter `downstream`: checks that the caps
// say `dims` and that the tensor is the one cudatensorize makes with `same_as` set.
static void expect_tensor(const std::string& props, const std::string& downstream, const char* dims,
                          const std::string& same_as, uint32_t seed) {
  GstHarness* h = tensorize_into(props, downstream);
  GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, seed).buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(negotiated(h, "dimensions"), dims);
  EXPECT_EQ(test::buffer_bytes(out), tensor_with(same_as, seed));
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// A model taking 3:W:H:1 float16 after a default cudatensorize failed to link; now the element
// makes exactly the tensor it would make with those properties set.
TEST(TensorNegotiation, UnsetPropertiesComeFromDownstream) {
  expect_tensor("", "dimensions=(string)3:96:64:1,types=float16", "3:96:64:1",
                "width=96 height=64 layout=nhwc dtype=float16", 1);
}

// Properties that agree with downstream are fine; the open ones are still filled in (NCHW here).
TEST(TensorNegotiation, AgreeingPropertiesAndNchwDimensions) {
  expect_tensor("width=48 dtype=float32", "dimensions=(string)48:32:3:1,types=float32", "48:32:3:1",
                "width=48 height=32", 2);
}

// The transform meta describes the negotiated tensor.
TEST(TensorNegotiation, TransformMetaHasTheNegotiatedSize) {
  GstHarness* h = tensorize_into("", "dimensions=(string)3:96:64:1,types=float16");
  GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 1).buffer);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(negotiated(h, "types"), "float16");
  GstCudaPrepTransform t;
  ASSERT_TRUE(gst_cuda_prep_buffer_get_transform(out, &t));
  EXPECT_EQ(t.tensor_width, 96);
  EXPECT_EQ(t.tensor_height, 64);
  gst_buffer_unref(out);
  gst_harness_teardown(h);
}

// What one frame through cudatensorize `props` ! capsfilter `downstream` negotiated, and the
// size of the tensor it made.
struct Negotiated {
  std::string dimensions, types;
  gsize bytes = 0;
};
static Negotiated negotiate(const std::string& props, const std::string& downstream) {
  GstHarness* h = tensorize_into(props, downstream);
  GstBuffer* out = gst_harness_push_and_pull(h, make_frame(GST_VIDEO_FORMAT_BGR, 64, 48, 3).buffer);
  EXPECT_NE(out, nullptr);
  Negotiated n{negotiated(h, "dimensions"), negotiated(h, "types")};
  if (out) n.bytes = gst_buffer_get_size(out);
  if (out) gst_buffer_unref(out);
  gst_harness_teardown(h);
  return n;
}

// Downstream that leaves the shape open gets the properties' values (defaults included); of a
// list of types, the property's wins over the list's order.
TEST(TensorNegotiation, OpenDownstreamTakesThePropertiesValues) {
  Negotiated n = negotiate("height=32", "types={float16,float32}");
  EXPECT_EQ(n.dimensions, "640:32:3:1");
  EXPECT_EQ(n.types, "float32");
  // a list of dimensions: the first entry agreeing with the properties set
  EXPECT_EQ(negotiate("layout=nhwc", "dimensions=(string){64:64:3:1,3:64:64:1}").dimensions, "3:64:64:1");
}

// With batch-size > 1 the batch dimension follows it, and the rest of the shape still comes from
// downstream (or the properties where downstream leaves it open).
TEST(TensorNegotiation, BatchDimensionIsBatchSize) {
  Negotiated n = negotiate("batch-size=3", "dimensions=(string)3:96:64:3,types=float16");
  EXPECT_EQ(n.dimensions, "3:96:64:3");
  EXPECT_EQ(n.bytes, 3u * 96 * 64 * 3 * 2);
  EXPECT_EQ(negotiate("batch-size=2 width=32 height=16", "types=float32").dimensions, "32:16:3:2");
}

// A model taking gray uint8 (NNStreamer's 1:W:H:1) after a default cudatensorize gets the resized
// gray pixels: the tensor cudatensorize makes with channels=1 dtype=uint8 set (and uint8's
// normalisation, the pixels themselves); W:H:1:1 reads the same.
TEST(TensorNegotiation, GrayUint8FromDownstream) {
  expect_tensor("", "types=uint8,dimensions=(string)1:96:64:1", "1:96:64:1",
                "width=96 height=64 channels=1 dtype=uint8", 4);
  expect_tensor("", "types=uint8,dimensions=(string)96:64:1:1", "96:64:1:1",
                "width=96 height=64 channels=1 dtype=uint8", 4);
  // gray nchw and nhwc are the same bytes: layout=nchw set does not contradict 1:W:H:1
  expect_tensor("layout=nchw", "types=uint8,dimensions=(string)1:96:64:1", "1:96:64:1",
                "width=96 height=64 channels=1 dtype=uint8", 4);
  Negotiated n = negotiate("", "types=uint8,dimensions=(string)1:96:64:1");
  EXPECT_EQ(n.types, "uint8");
  EXPECT_EQ(n.bytes, 96u * 64);
}

// int8 from downstream takes int8's normalisation (pixel - 128) unless scale / mean / std are set.
TEST(TensorNegotiation, IntegerTypeFromDownstreamTakesItsNormalisation) {
  expect_tensor("", "types=int8,dimensions=(string)3:32:32:1", "3:32:32:1", "width=32 height=32 layout=nhwc dtype=int8",
                5);
  expect_tensor("mean=<0.5>", "types=int8,dimensions=(string)32:32:3:1", "32:32:3:1",
                "width=32 height=32 dtype=int8 mean=<0.5>", 5);
  // of a list of types, the property's (set or default) where listed, else the first
  EXPECT_EQ(negotiate("dtype=int8", "types={uint8,int8}").types, "int8");
  EXPECT_EQ(negotiate("", "types={uint8,int8}").types, "uint8");
}

struct Conflict {
  const char* props;
  const char* downstream;
  std::vector<const char*> named;  // each must appear in the error
};

class TensorNegotiationConflicts : public ::testing::TestWithParam<Conflict> {};

// A property the user set that downstream contradicts: one error naming the property and what
// downstream takes.
TEST_P(TensorNegotiationConflicts, FailNamingBoth) {
  std::string err = refused(GetParam().props, GetParam().downstream);
  EXPECT_NE(err.find("Downstream does not accept"), std::string::npos) << err;
  for (const char* n : GetParam().named) EXPECT_NE(err.find(n), std::string::npos) << n << " not in: " << err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TensorNegotiationConflicts,
    ::testing::Values(
        Conflict{"width=320",
                 "dimensions=(string)3:640:640:1",
                 {"width=320 (set on cudatensorize)", "width 640", "3:640:640:1"}},
        Conflict{"height=100 width=640 layout=nhwc", "dimensions=(string)3:640:640:1", {"height=100", "height 640"}},
        Conflict{"layout=nchw", "dimensions=(string)3:64:64:1", {"layout=nchw", "layout nhwc"}},
        Conflict{"dtype=float32", "types=float16", {"dtype=float32", "types=float16"}},
        Conflict{"width=10 dtype=float16",
                 "dimensions=(string)3:640:640:1,types=float32",
                 {"width=10", "dtype=float16", "types=float32"}},
        Conflict{"",
                 "dimensions=(string)4:64:64:1",
                 {"dimensions=4:64:64:1", "not an image tensor", "C = 3 (colour) or 1 (gray)"}},
        // channels and the integer types (issue 12 item 5)
        Conflict{"", "dimensions=(string)2:64:64:1", {"dimensions=2:64:64:1", "C = 3 (colour) or 1 (gray)"}},
        Conflict{"channels=3",
                 "dimensions=(string)1:64:64:1",
                 {"channels=3 (set on cudatensorize)", "channels 1 in dimensions=1:64:64:1"}},
        Conflict{"channels=1", "dimensions=(string)64:64:3:1", {"channels=1", "channels 3 in dimensions=64:64:3:1"}},
        Conflict{"dtype=uint8", "types=float32", {"dtype=uint8 (set on cudatensorize)", "types=float32"}},
        Conflict{"dtype=float32", "types=int8", {"dtype=float32", "types=int8"}},
        // the batch dimension must equal batch-size (default 1), in either direction
        Conflict{"batch-size=2", "dimensions=(string)3:64:64:1", {"batch-size=2", "batch 1 in dimensions=3:64:64:1"}},
        Conflict{"", "dimensions=(string)64:64:3:4", {"batch-size=1", "batch 4 in dimensions=64:64:3:4"}}));

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
