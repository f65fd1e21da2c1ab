// model-info: the reader (what each file sets, the error of each bad file) and both tensor
// elements with it: a tensor made from a .modelinfo equals the one made with the equivalent
// properties, contradicting properties and bad files fail at start with one message, and what the
// file set is taken back when the file goes.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness_util.h"
#include "model_info.h"
#include "model_info_files.h"

using cudaprep::DType;
using cudaprep::Layout;

namespace {

test::ModelInfoDir& files() {
  static test::ModelInfoDir dir;
  return dir;
}

ModelInput read_ok(const std::string& name, const std::string& input = "") {
  ModelInput m;
  const cudaprep::Status st = gst_cuda_prep_model_info_read(files().path(name), input, Layout::NCHW, &m);
  EXPECT_TRUE(st.ok()) << st.message();
  return m;
}

std::string read_error(const std::string& path, const std::string& input = "") {
  ModelInput m;
  const cudaprep::Status st = gst_cuda_prep_model_info_read(path, input, Layout::NCHW, &m);
  EXPECT_FALSE(st.ok()) << path;
  return st.message();
}

// ---- the reader ------------------------------------------------------------------------------

TEST(ModelInfoReader, DetectorNchwFloat32) {
  const ModelInput m = read_ok("yolo.modelinfo");
  EXPECT_EQ(m.section, "images");
  EXPECT_EQ(m.id, "yolo-v8-input");
  EXPECT_EQ(m.group_id, "yolo-v8");
  EXPECT_EQ(m.batch, 1);
  EXPECT_EQ(m.channels, 3);
  EXPECT_EQ(m.height, 32);
  EXPECT_EQ(m.width, 48);
  EXPECT_EQ(m.layout, Layout::NCHW);
  EXPECT_EQ(m.dtype, DType::Float32);
  double scale, mean[3], std[3];
  ASSERT_TRUE(gst_cuda_prep_model_info_normalisation(m, &scale, mean, std));
  // ranges 0,1 are the float defaults exactly: pixel / 255.
  EXPECT_EQ(scale, 1.0 / 255.0);
  for (int c = 0; c < 3; c++) {
    EXPECT_EQ(mean[c], 0.0);
    EXPECT_FALSE(std::signbit(mean[c]));
    EXPECT_EQ(std[c], 1.0);
  }
}

TEST(ModelInfoReader, ColMajorNhwcUint8) {
  const ModelInput m = read_ok("mobilenet.modelinfo");
  EXPECT_TRUE(m.col_major);
  EXPECT_EQ(m.layout, Layout::NHWC);
  EXPECT_EQ(m.dtype, DType::UInt8);
  EXPECT_EQ(m.batch, 1);
  EXPECT_EQ(m.height, 32);
  EXPECT_EQ(m.width, 48);
  EXPECT_EQ(m.channels, 3);
  double scale, mean[3], std[3];
  ASSERT_TRUE(gst_cuda_prep_model_info_normalisation(m, &scale, mean, std));
  // 0,255: out = pixel * 1 + 0.
  for (int c = 0; c < 3; c++) {
    EXPECT_EQ(scale / std[c], 1.0);
    EXPECT_EQ(-mean[c] / std[c], 0.0);
  }
}

TEST(ModelInfoReader, RangePerChannelAndOpenBatch) {
  const ModelInput m = read_ok("signed.modelinfo");
  EXPECT_EQ(m.batch, -1);
  EXPECT_EQ(m.dtype, DType::Float16);
  double scale, mean[3], std[3];
  ASSERT_TRUE(gst_cuda_prep_model_info_normalisation(m, &scale, mean, std));
  // out = pixel * (max - min) / 255 + min for -1,1; 0,1; -2,2.
  const double lo[3] = {-1, 0, -2}, hi[3] = {1, 1, 2};
  for (int c = 0; c < 3; c++) {
    EXPECT_NEAR(scale / std[c], (hi[c] - lo[c]) / 255.0, 1e-15) << c;
    EXPECT_NEAR(-mean[c] / std[c], lo[c], 1e-15) << c;
    EXPECT_NEAR((255 * scale - mean[c]) / std[c], hi[c], 1e-12) << c;
  }
  EXPECT_EQ(mean[0], 0.5);
  EXPECT_EQ(std[0], 0.5);
}

TEST(ModelInfoReader, GrayWithoutRanges) {
  const ModelInput m = read_ok("gray.modelinfo");
  EXPECT_EQ(m.channels, 1);
  EXPECT_EQ(m.width, -1);
  EXPECT_EQ(m.height, 24);
  EXPECT_EQ(m.group_id, "");
  double scale, mean[3], std[3];
  EXPECT_FALSE(gst_cuda_prep_model_info_normalisation(m, &scale, mean, std));
}

TEST(ModelInfoReader, ModelInputPicksOneOfSeveral) {
  const std::string path = files().path("two_inputs.modelinfo");
  EXPECT_EQ(read_error(path), "model-info " + path +
                                  ": describes 2 input tensors ([image] id=img, [mask] id=msk): set model-input to "
                                  "the id of the one to make");
  EXPECT_EQ(read_ok("two_inputs.modelinfo", "msk").section, "mask");
  EXPECT_EQ(read_ok("two_inputs.modelinfo", "msk").channels, 1);
  EXPECT_EQ(read_ok("two_inputs.modelinfo", "image").id, "img");  // a section name works too
  EXPECT_EQ(read_error(path, "depth"), "model-info " + path +
                                           ": model-input=depth names no input tensor (by id or section name); its "
                                           "inputs: [image] id=img, [mask] id=msk");
}

TEST(ModelInfoReader, AmbiguousDimsFollowTheLayoutProperty) {
  const std::string path =
      files().write("cube.modelinfo", "[modelinfo]\nversion=1.0\n\n[t]\ntype=float32\ndims=1,3,3,3\ndir=input\n");
  ModelInput m;
  ASSERT_TRUE(gst_cuda_prep_model_info_read(path, "", Layout::NHWC, &m).ok());
  EXPECT_EQ(m.layout, Layout::NHWC);
  ASSERT_TRUE(gst_cuda_prep_model_info_read(path, "", Layout::NCHW, &m).ok());
  EXPECT_EQ(m.layout, Layout::NCHW);
}

TEST(ModelInfoReader, BadFilesNameFileKeyAndExpectation) {
  for (const auto& f : test::bad_model_infos()) {
    const std::string path = files().path(f.name);
    EXPECT_EQ(read_error(path), "model-info " + path + ": " + f.error) << f.name;
  }
}

TEST(ModelInfoReader, UnreadableAndNotIni) {
  const std::string missing = files().path("missing.modelinfo");
  const std::string e1 = read_error(missing);
  EXPECT_EQ(e1.rfind("model-info " + missing + ": cannot be read: ", 0), 0u) << e1;
  const std::string garbage = files().write("garbage.modelinfo", "[modelinfo]\nversion=1.0\nthis is no key\n");
  const std::string e2 = read_error(garbage);
  EXPECT_EQ(e2.rfind("model-info " + garbage + ": not an ini file: ", 0), 0u) << e2;
  EXPECT_NE(e2.find("this is no key"), std::string::npos) << e2;  // GKeyFile quotes the line
  EXPECT_NE(e2.find("(expected [section] headers and key=value lines)"), std::string::npos) << e2;
}

// ---- the elements ----------------------------------------------------------------------------

enum class Element { Tensorize, Batch };

struct Output {
  std::vector<uint8_t> tensor;
  std::string dims, types;
};

void read_caps(GstCaps* caps, Output* out) {
  if (!caps) return;
  const GstStructure* s = gst_caps_get_structure(caps, 0);
  const gchar* d = gst_structure_get_string(s, "dimensions");
  const gchar* t = gst_structure_get_string(s, "types");
  out->dims = d ? d : "";
  out->types = t ? t : "";
}

// The element (backend=cpu) with `props` (launch-line syntax) and then `set` applied to it, given
// one 64x40 RGBA frame; its first tensor and caps.
template <class Set>
Output run(Element e, const std::string& props, Set set) {
  Output out;
  GstBuffer* frame = test::make_frame(GST_VIDEO_FORMAT_RGBA, 64, 40, 7).buffer;
  GST_BUFFER_PTS(frame) = 0;
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  const std::string caps = test::video_caps("RGBA", 64, 40);
  const char* factory = e == Element::Tensorize ? "cudatensorize" : "cudatensorbatch";
  const std::string desc = "appsrc name=src format=time caps=\"" + caps + "\" ! " + factory + " name=e backend=cpu " +
                           props + " ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc;
  GstElement* el = gst_bin_get_by_name(GST_BIN(pipeline), "e");
  set(el);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE) << desc;
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  EXPECT_NE(s, nullptr) << desc;
  if (s) {
    out.tensor = test::buffer_bytes(gst_sample_get_buffer(s));
    read_caps(gst_sample_get_caps(s), &out);
    gst_sample_unref(s);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(el);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

Output run(Element e, const std::string& props) {
  return run(e, props, [](GstElement*) {});
}

std::string model(const char* name) { return "model-info=\"" + files().path(name) + "\""; }

// The properties each good file stands for: scale 1/255, mean -min / (max - min) and std
// 1 / (max - min) (0,255: the same map as scale 1, mean 0, std 1). 1/255 has no short decimal:
// set as a double.
struct Equivalent {
  const char* file;
  const char* props;
  double scale;
  const char* dims;  // of cudatensorize's caps
  const char* type;
};
const Equivalent kEquivalents[] = {
    {"yolo.modelinfo", "width=48 height=32 layout=nchw dtype=float32 channels=3 mean=\"<0.0>\" std=\"<1.0>\"",
     1.0 / 255.0, "48:32:3:1", "float32"},
    {"mobilenet.modelinfo", "width=48 height=32 layout=nhwc dtype=uint8 channels=3 mean=\"<0.0>\" std=\"<1.0>\"", 1.0,
     "3:48:32:1", "uint8"},
    {"signed.modelinfo",
     "width=40 height=40 layout=nchw dtype=float16 channels=3 mean=\"<0.5, 0.0, 0.5>\" std=\"<0.5, 1.0, 0.25>\"",
     1.0 / 255.0, "40:40:3:1", "float16"},
};

TEST(ModelInfoElements, SameTensorAsTheEquivalentProperties) {
  for (Element e : {Element::Tensorize, Element::Batch})
    for (const auto& q : kEquivalents) {
      const std::string batch = e == Element::Batch ? " batch-size=1" : "";
      const Output from_file = run(e, model(q.file));
      const Output from_props =
          run(e, std::string(q.props) + batch, [&](GstElement* el) { g_object_set(el, "scale", q.scale, NULL); });
      ASSERT_FALSE(from_file.tensor.empty()) << q.file;
      EXPECT_EQ(from_file.dims, q.dims) << q.file;
      EXPECT_EQ(from_file.types, q.type) << q.file;
      EXPECT_EQ(from_file.dims, from_props.dims) << q.file;
      EXPECT_TRUE(from_file.tensor == from_props.tensor) << q.file << " (element " << (int)e << ")";
    }
}

TEST(ModelInfoElements, GrayAndOpenWidth) {
  // width -1: the property's (or downstream's) width; no ranges: the dtype's normalisation.
  const Output from_file = run(Element::Tensorize, model("gray.modelinfo") + " width=20");
  const Output from_props = run(Element::Tensorize, "width=20 height=24 channels=1 dtype=float32");
  EXPECT_EQ(from_file.dims, "20:24:1:1");
  EXPECT_TRUE(from_file.tensor == from_props.tensor);
}

TEST(ModelInfoElements, BatchFromTheFile) {
  const std::string path =
      files().write("batch2.modelinfo", "[modelinfo]\nversion=1.0\n\n[in]\ntype=float32\ndims=2,3,16,16\ndir=input\n");
  const Output t = run(Element::Batch, "model-info=\"" + path + "\"");
  EXPECT_EQ(t.dims, "16:16:3:2");
  const Output u = run(Element::Batch, "batch-size=2 width=16 height=16");
  EXPECT_TRUE(t.tensor == u.tensor);
}

TEST(ModelInfoElements, ModelInputPicksTheTensor) {
  const Output t = run(Element::Tensorize, model("two_inputs.modelinfo") + " model-input=msk");
  EXPECT_EQ(t.dims, "16:16:1:1");
  EXPECT_EQ(t.types, "uint8");
}

// The error a start with `props` posts (exactly one).
std::string start_error(Element e, const std::string& props) {
  const test::StartResult r = test::start_with_props(
      e == Element::Tensorize ? "cudatensorize backend=cpu" : "cudatensorbatch backend=cpu", props.c_str());
  EXPECT_EQ(r.ret, GST_STATE_CHANGE_FAILURE) << props;
  EXPECT_EQ(r.errors.size(), 1u) << props;
  if (r.errors.empty()) return "";
  return r.errors[0].substr(0, r.errors[0].find(" | "));
}

TEST(ModelInfoElements, ContradictingPropertiesFailAtStart) {
  const std::string path = files().path("yolo.modelinfo");
  for (Element e : {Element::Tensorize, Element::Batch}) {
    const std::string prefix =
        std::string("Invalid ") + (e == Element::Tensorize ? "cudatensorize" : "cudatensorbatch") + " settings: ";
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " width=320"),
              prefix + "width=320 contradicts model-info " + path + ": [images] dims=1,3,32,48 (width 48)");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " height=48"),
              prefix + "height=48 contradicts model-info " + path + ": [images] dims=1,3,32,48 (height 32)");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " layout=nhwc"),
              prefix + "layout=nhwc contradicts model-info " + path + ": [images] dims=1,3,32,48 (nchw)");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " channels=1"),
              prefix + "channels=1 contradicts model-info " + path + ": [images] dims=1,3,32,48 (channels 3)");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " dtype=uint8"),
              prefix + "dtype=uint8 contradicts model-info " + path + ": [images] type=float32");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " batch-size=2"),
              prefix + "batch-size=2 contradicts model-info " + path + ": [images] dims=1,3,32,48 (batch-size 1)");
    EXPECT_EQ(start_error(e, model("yolo.modelinfo") + " mean=\"<0.5>\" std=\"<0.5>\""),
              prefix + "mean=<0.5>, std=<0.5> contradicts model-info " + path +
                  ": [images] ranges=0.0,1.0 (out = pixel * (max - min) / 255 + min)");
  }
}

TEST(ModelInfoElements, AgreeingPropertiesAreFine) {
  // The same values, the normalisation written another way (scale 1/255 to 6 digits).
  const Output t = run(Element::Tensorize, model("yolo.modelinfo") +
                                               " width=48 height=32 layout=nchw dtype=float32 channels=3 "
                                               "batch-size=1 scale=0.00392157 mean=\"<0.0>\"");
  EXPECT_EQ(t.dims, "48:32:3:1");
}

TEST(ModelInfoElements, BadFilesFailAtStart) {
  for (Element e : {Element::Tensorize, Element::Batch})
    for (const auto& f : test::bad_model_infos()) {
      const std::string path = files().path(f.name);
      EXPECT_EQ(start_error(e, "model-info=\"" + path + "\""),
                std::string("Invalid ") + (e == Element::Tensorize ? "cudatensorize" : "cudatensorbatch") +
                    " settings: model-info " + path + ": " + f.error);
    }
}

TEST(ModelInfoElements, ValuesReadBackAndGoWithTheFile) {
  GstElement* e = gst_element_factory_make("cudatensorize", nullptr);
  ASSERT_NE(e, nullptr);
  gst_util_set_object_arg(G_OBJECT(e), "backend", "cpu");
  g_object_set(e, "model-info", files().path("signed.modelinfo").c_str(), NULL);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_READY), GST_STATE_CHANGE_FAILURE);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  guint width = 0;
  gdouble scale = 0;
  g_object_get(e, "width", &width, "scale", &scale, NULL);
  EXPECT_EQ(width, 40u);
  EXPECT_EQ(scale, 1.0 / 255.0);
  gst_element_set_state(e, GST_STATE_NULL);
  // Without the file, the next start has the defaults again (640, the float32 pixel / 255).
  g_object_set(e, "model-info", NULL, NULL);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  gint dtype = -1;
  g_object_get(e, "width", &width, "dtype", &dtype, NULL);
  EXPECT_EQ(width, 640u);
  EXPECT_EQ(dtype, (gint)DType::Float32);
  gst_element_set_state(e, GST_STATE_NULL);
  // A property the user sets after a start is the user's: the file must then agree with it.
  g_object_set(e, "model-info", files().path("signed.modelinfo").c_str(), NULL);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  gst_element_set_state(e, GST_STATE_NULL);
  g_object_set(e, "model-info", files().path("yolo.modelinfo").c_str(), NULL);
  ASSERT_NE(gst_element_set_state(e, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);  // 40 was the file's
  g_object_get(e, "width", &width, NULL);
  EXPECT_EQ(width, 48u);
  gst_element_set_state(e, GST_STATE_NULL);
  g_object_set(e, "width", 48u, NULL);
  g_object_set(e, "model-info", files().path("signed.modelinfo").c_str(), NULL);
  EXPECT_EQ(test::start_error(e), "Invalid cudatensorize settings: width=48 contradicts model-info " +
                                      files().path("signed.modelinfo") + ": [pixel_values] dims=-1,3,40,40 (width 40)");
  gst_object_unref(e);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
