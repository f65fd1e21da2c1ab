// GStreamer >= 1.28: with output=video-meta, cudatensorize's src caps describe the tensor on the
// frame in their "tensors" field, so that a downstream element that requires that field (here a
// capsfilter standing in for a 1.28 tensor consumer) negotiates with it: tensorgroups, one group
// (the model-info's group-id, else the tensor id) holding one tensor/strided with the GstTensor's
// id, row-major dims, dims order and type. A downstream that requires another tensor refuses.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <string>
#include <vector>

#include "harness_util.h"
#include "model_info_files.h"

namespace {

// The field as a 1.28 consumer writes what it takes: built here from the parts, not by the
// element's code.
GstStructure* tensors_field(const char* group, const std::vector<int>& dims, const char* type) {
  GValue d = G_VALUE_INIT, v = G_VALUE_INIT;
  gst_value_array_init(&d, (guint)dims.size());
  g_value_init(&v, G_TYPE_INT);
  for (int x : dims) {
    g_value_set_int(&v, x);
    gst_value_array_append_value(&d, &v);
  }
  g_value_unset(&v);
  GstStructure* t = gst_structure_new("tensor/strided", "tensor-id", G_TYPE_STRING, "cudaprep-tensorize", "dims-order",
                                      G_TYPE_STRING, "row-major", "type", G_TYPE_STRING, type, NULL);
  gst_structure_take_value(t, "dims", &d);
  GstCaps* c = gst_caps_new_full(t, NULL);
  GValue list = G_VALUE_INIT, item = G_VALUE_INIT;
  g_value_init(&list, GST_TYPE_UNIQUE_LIST);
  g_value_init(&item, GST_TYPE_CAPS);
  gst_value_set_caps(&item, c);
  gst_caps_unref(c);
  gst_value_unique_list_append_and_take_value(&list, &item);
  GstStructure* groups = gst_structure_new_empty("tensorgroups");
  gst_structure_take_value(groups, group, &list);
  return groups;
}

struct Result {
  bool got_frame = false;
  GstCaps* caps = nullptr;  // the negotiated caps at the sink
  std::vector<std::string> errors;
};

// appsrc (a 64x40 RGBA frame) ! cudatensorize backend=cpu output=video-meta PROPS ! capsfilter
// (video/x-raw with `required` as its tensors field, or plain video/x-raw) ! appsink.
Result run(const std::string& props, GstStructure* required) {
  Result r;
  const std::string desc = "appsrc name=src format=time caps=\"" + test::video_caps("RGBA", 64, 40) +
                           "\" ! cudatensorize backend=cpu output=video-meta " + props +
                           " ! capsfilter name=cf ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc;
  GstElement* cf = gst_bin_get_by_name(GST_BIN(pipeline), "cf");
  GstCaps* filter = gst_caps_new_empty_simple("video/x-raw");
  if (required) {
    gst_caps_set_simple(filter, "tensors", GST_TYPE_STRUCTURE, required, NULL);
    gst_structure_free(required);
  }
  g_object_set(cf, "caps", filter, NULL);
  gst_caps_unref(filter);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBuffer* frame = test::make_frame(GST_VIDEO_FORMAT_RGBA, 64, 40, 3).buffer;
  GST_BUFFER_PTS(frame) = 0;
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 3 * GST_SECOND);
  if (s) {
    r.got_frame = true;
    r.caps = gst_caps_ref(gst_sample_get_caps(s));
    gst_sample_unref(s);
  }
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    GError* e = nullptr;
    gst_message_parse_error(m, &e, nullptr);
    r.errors.push_back(e->message);
    g_error_free(e);
    gst_message_unref(m);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(cf);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return r;
}

// The tensors field of negotiated caps, equal to `want` (freed).
void expect_field(GstCaps* caps, GstStructure* want) {
  ASSERT_NE(caps, nullptr);
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const GValue* v = gst_structure_get_value(s, "tensors");
  ASSERT_NE(v, nullptr) << "no tensors field in " << gst_caps_to_string(caps);
  GValue w = G_VALUE_INIT;
  g_value_init(&w, GST_TYPE_STRUCTURE);
  gst_value_set_structure(&w, want);
  EXPECT_EQ(gst_value_compare(v, &w), GST_VALUE_EQUAL)
      << gst_value_serialize(v) << "\nwanted " << gst_value_serialize(&w);
  g_value_unset(&w);
  gst_structure_free(want);
}

TEST(TensorsCaps, DownstreamRequiringTheFieldNegotiates) {
  Result r = run("width=32 height=16 dtype=float16", tensors_field("cudaprep-tensorize", {1, 3, 16, 32}, "float16"));
  EXPECT_TRUE(r.got_frame);
  EXPECT_TRUE(r.errors.empty()) << r.errors[0];
  expect_field(r.caps, tensors_field("cudaprep-tensorize", {1, 3, 16, 32}, "float16"));
  if (r.caps) gst_caps_unref(r.caps);
}

TEST(TensorsCaps, NhwcGrayDims) {
  Result r = run("width=32 height=16 layout=nhwc channels=1 dtype=uint8", nullptr);
  EXPECT_TRUE(r.got_frame);
  expect_field(r.caps, tensors_field("cudaprep-tensorize", {1, 16, 32, 1}, "uint8"));
  if (r.caps) gst_caps_unref(r.caps);
}

TEST(TensorsCaps, GroupFromTheModelInfo) {
  test::ModelInfoDir dir;
  Result r =
      run("model-info=\"" + dir.path("yolo.modelinfo") + "\"", tensors_field("yolo-v8", {1, 3, 32, 48}, "float32"));
  EXPECT_TRUE(r.got_frame);
  EXPECT_TRUE(r.errors.empty()) << r.errors[0];
  expect_field(r.caps, tensors_field("yolo-v8", {1, 3, 32, 48}, "float32"));
  if (r.caps) gst_caps_unref(r.caps);
}

TEST(TensorsCaps, DownstreamRequiringAnotherTensorRefuses) {
  Result r = run("width=32 height=16", tensors_field("cudaprep-tensorize", {1, 3, 640, 640}, "float32"));
  EXPECT_FALSE(r.got_frame);
  EXPECT_FALSE(r.errors.empty());
  if (r.caps) gst_caps_unref(r.caps);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
