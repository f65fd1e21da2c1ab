// cudaprep-regress --device-id / suite --gpus: the decoder named for the clip's GPU and the CUDA
// elements' device properties, on stand-in elements registered under nvcodec's names (no GPU
// needed).
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>

#include "regress_compare.h"
#include "regress_device_id.h"
#include "regress_store.h"

namespace {

// A stand-in element with a writable `cuda-device-id` (cudaupload's) or a read-only one (an
// NVDEC decoder's).
struct FakeCuda {
  GstElement parent;
  gint device;
};
struct FakeCudaClass {
  GstElementClass parent_class;
};

void fake_get(GObject* o, guint, GValue* v, GParamSpec*) { g_value_set_int(v, ((FakeCuda*)o)->device); }
void fake_set(GObject* o, guint, const GValue* v, GParamSpec*) { ((FakeCuda*)o)->device = g_value_get_int(v); }

void fake_class_init(gpointer klass, gpointer writable) {
  GObjectClass* oc = G_OBJECT_CLASS(klass);
  oc->get_property = fake_get;
  oc->set_property = fake_set;
  const GParamFlags flags = GPOINTER_TO_INT(writable) ? G_PARAM_READWRITE : G_PARAM_READABLE;
  g_object_class_install_property(oc, 1, g_param_spec_int("cuda-device-id", "d", "d", -1, 64, 0, flags));
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), "fake", "Filter", "fake", "test");
}

GType fake_type(const char* name, bool writable) {
  GTypeInfo info = {};
  info.class_size = sizeof(FakeCudaClass);
  info.class_init = fake_class_init;
  info.class_data = GINT_TO_POINTER(writable ? 1 : 0);
  info.instance_size = sizeof(FakeCuda);
  return g_type_register_static(GST_TYPE_ELEMENT, name, &info, (GTypeFlags)0);
}

void register_fakes() {
  static bool done = false;
  if (done) return;
  done = true;
  const GType decoder = fake_type("FakeNvDec", false);
  for (const char* name : {"nvh264dec", "nvh264device1dec", "nvh265dec"})
    ASSERT_TRUE(gst_element_register(nullptr, name, GST_RANK_NONE, decoder));
  ASSERT_TRUE(gst_element_register(nullptr, "fakecudaupload", GST_RANK_NONE, fake_type("FakeCudaUpload", true)));
}

std::string for_device(const std::string& desc, int id, std::string* error = nullptr) {
  std::string out, why;
  const bool ok = regress::decoders_for_device(desc, id, &out, &why);
  if (error) *error = why;
  return ok ? out : "(error)";
}

}  // namespace

TEST(RegressDevice, DecoderNamedForTheClipsGpu) {
  register_fakes();
  const std::string desc = "filesrc location={clip} ! qtdemux ! h264parse ! nvh264dec ! cudatensorize ! appsink";
  EXPECT_EQ(for_device(desc, -1), desc);
  EXPECT_EQ(for_device(desc, 0), desc);
  EXPECT_EQ(for_device(desc, 1),
            "filesrc location={clip} ! qtdemux ! h264parse ! nvh264device1dec ! cudatensorize ! appsink");
  // At the start, before a property, twice; a name= value, an element already named for a GPU
  // and a word that is no element stay as written.
  EXPECT_EQ(for_device("nvh264dec name=nvh264dec ! fakesink filesrc ! nvh264dec", 1),
            "nvh264device1dec name=nvh264dec ! fakesink filesrc ! nvh264device1dec");
  EXPECT_EQ(for_device("x ! nvh264device1dec ! nvnothingdec ! y", 1), "x ! nvh264device1dec ! nvnothingdec ! y");
}

TEST(RegressDevice, GpuWithoutTheDecoderIsOneError) {
  register_fakes();
  std::string error;
  EXPECT_EQ(for_device("filesrc ! h265parse ! nvh265dec ! fakesink", 1, &error), "(error)");
  EXPECT_EQ(error,
            "--device-id 1: nvh265dec has no element for GPU 1 (nvh265device1dec): GStreamer's nvcodec registers one "
            "decoder per GPU that has the codec");
  EXPECT_EQ(for_device("filesrc ! h264parse ! nvh264dec ! fakesink", 2, &error), "(error)");
  EXPECT_NE(error.find("nvh264device2dec"), std::string::npos) << error;
}

TEST(RegressDevice, CudaElementsGetTheGpuDecodersKeepTheirs) {
  register_fakes();
  GstElement* p = gst_pipeline_new(nullptr);
  GstElement* up = gst_element_factory_make("fakecudaupload", nullptr);
  GstElement* dec = gst_element_factory_make("nvh264dec", nullptr);
  ASSERT_TRUE(up && dec);
  gst_bin_add_many(GST_BIN(p), GST_ELEMENT(gst_object_ref(up)), GST_ELEMENT(gst_object_ref(dec)), nullptr);
  EXPECT_EQ(regress::apply_device_id(p, 3), 1);  // the read-only property of the decoder is left
  gint d = -5;
  g_object_get(up, "cuda-device-id", &d, nullptr);
  EXPECT_EQ(d, 3);
  g_object_get(dec, "cuda-device-id", &d, nullptr);
  EXPECT_EQ(d, 0);
  gst_object_unref(up);
  gst_object_unref(dec);
  gst_object_unref(p);
}

// A golden made on GPU 0 checks a run on GPU 1: the CUDA elements' cuda-device-id is where the
// pipeline ran, not a setting that changed; another property of theirs still is.
TEST(RegressDevice, CudaDeviceIdIsNoSettingChange) {
  auto manifest = [](const char* device, const char* other) {
    regress::Manifest m;
    regress::ElementInfo e;
    e.name = "cudaupload0";
    e.factory = "cudaupload";
    e.plugin = "nvcodec";
    e.properties = {{"cuda-device-id", device}, {"qos", other}};
    m.elements.push_back(e);
    m.pipeline = "p";
    return m;
  };
  regress::Comparison same("check", "golden", "this run", regress::CompareOptions());
  same.compare_manifests(manifest("0", "true"), manifest("1", "true"));
  EXPECT_FALSE(same.has_errors()) << same.errors()[0];
  regress::Comparison changed("check", "golden", "this run", regress::CompareOptions());
  changed.compare_manifests(manifest("0", "true"), manifest("1", "false"));
  ASSERT_TRUE(changed.has_errors());
  EXPECT_NE(changed.errors()[0].find("property 'qos'"), std::string::npos) << changed.errors()[0];
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
