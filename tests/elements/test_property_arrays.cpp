// The array properties (roi, rois, mean, std, search-region, template-rect, the batch pads' roi)
// from text: valid values parse to the right numbers, and one array level too many
// ("<<1, 2, 3, 4>>" for a rectangle) is refused by the parser with an error naming the property,
// not a crash. Each bad value is parsed in a child process (this executable run with --parse
// LINE or --pad-roi VALUE), so that a crash fails the test instead of ending it.
#include <gst/gst.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <string>
#include <vector>

namespace {

struct ChildResult {
  bool exited = false;  // ended by exit(), not by a signal
  int exit_code = -1;
  int signal = 0;
  std::string out, err;
};

// Runs this executable with `mode` (--parse, --pad-roi) and `text`: it prints "error: MESSAGE"
// or "parsed".
ChildResult parse_in_child(const std::string& text, const char* mode = "--parse") {
  ChildResult r;
  gchar* self = g_file_read_link("/proc/self/exe", nullptr);
  const gchar* argv[] = {self, mode, text.c_str(), nullptr};
  gchar *out = nullptr, *err = nullptr;
  gint status = 0;
  GError* error = nullptr;
  const gboolean ok =
      g_spawn_sync(nullptr, (gchar**)argv, nullptr, G_SPAWN_DEFAULT, nullptr, nullptr, &out, &err, &status, &error);
  g_free(self);
  EXPECT_TRUE(ok) << (error ? error->message : "");
  g_clear_error(&error);
  r.out = out ? out : "";
  r.err = err ? err : "";
  g_free(out);
  g_free(err);
  r.exited = WIFEXITED(status);
  r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return r;
}

int child_parse(const char* line) {
  gst_init(nullptr, nullptr);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(line, &error);
  if (error)
    g_print("error: %s\n", error->message);
  else
    g_print("parsed\n");
  g_clear_error(&error);
  if (pipeline) gst_object_unref(pipeline);
  return 0;
}

// A cudatensorbatch sink pad's roi from `value`, as gst_util_set_object_arg and the launch-line
// parser read it (gst_value_deserialize_with_pspec with the property's spec).
int child_pad_roi(const char* value) {
  gst_init(nullptr, nullptr);
  GstElement* batch = gst_element_factory_make("cudatensorbatch", nullptr);
  GstPad* pad = batch ? gst_element_request_pad_simple(batch, "sink_%u") : nullptr;
  if (!pad) {
    g_print("no cudatensorbatch sink pad\n");
    return 1;
  }
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(pad), "roi");
  GValue v = G_VALUE_INIT;
  g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(spec));
  if (gst_value_deserialize_with_pspec(&v, value, spec))
    g_print("parsed\n");
  else
    g_print("error: could not set property \"roi\" of %s to \"%s\"\n", GST_PAD_NAME(pad), value);
  g_value_unset(&v);
  gst_element_release_request_pad(batch, pad);
  gst_object_unref(pad);
  gst_object_unref(batch);
  return 0;
}

struct BadLine {
  const char* line;
  const char* property;
};

// The lines of issue 24 (each crashed GStreamer 1.22's parser), and deeper or mixed nestings.
const BadLine kBadLines[] = {
    {"videotestsrc num-buffers=1 ! cudatensorize rois=\"<<<1,2,3,4>>>\" ! fakesink", "rois"},
    {"videotestsrc num-buffers=1 ! cudatensorize roi=\"<<1,2,3,4>>\" ! fakesink", "roi"},
    {"videotestsrc num-buffers=1 ! cudatensorize mean=\"<<1,2,3>>\" ! fakesink", "mean"},
    {"videotestsrc num-buffers=1 ! cudatemplatematch search-region=\"<<1,2,3,4>>\" ! fakesink", "search-region"},
    {"videotestsrc num-buffers=1 ! cudatensorize std=\"<<1,2,3>>\" ! fakesink", "std"},
    {"videotestsrc num-buffers=1 ! cudatemplatematch template-rect=\"<<1,2,3,4>>\" ! fakesink", "template-rect"},
    {"videotestsrc num-buffers=1 ! cudatensorize roi=\"<<<<1,2,3,4>>>>\" ! fakesink", "roi"},
    {"videotestsrc num-buffers=1 ! cudatensorize roi=\"<{1,2},3,4,5>\" ! fakesink", "roi"},
    {"videotestsrc num-buffers=1 ! cudatensorize rois=\"<<0,0,8,8>,<<1,2,3,4>>>\" ! fakesink", "rois"},
};

TEST(PropertyArrays, OneLevelTooManyIsRefusedNamingTheProperty) {
  for (const BadLine& bad : kBadLines) {
    SCOPED_TRACE(bad.line);
    const ChildResult r = parse_in_child(bad.line);
    EXPECT_TRUE(r.exited) << "the parser crashed (signal " << r.signal << ")\nstderr: " << r.err;
    if (!r.exited) continue;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string expected = std::string("error: could not set property \"") + bad.property + "\"";
    EXPECT_EQ(r.out.rfind(expected, 0), 0u) << "stdout: " << r.out << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("CRITICAL"), std::string::npos) << r.err;
  }
}

TEST(PropertyArrays, BatchPadRoiOneLevelTooManyIsRefused) {
  for (const char* value : {"<<1,2,3,4>>", "<<<1,2,3,4>>>"}) {
    SCOPED_TRACE(value);
    const ChildResult r = parse_in_child(value, "--pad-roi");
    EXPECT_TRUE(r.exited) << "the parser crashed (signal " << r.signal << ")\nstderr: " << r.err;
    if (!r.exited) continue;
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("error: could not set property \"roi\"", 0), 0u)
        << "stdout: " << r.out << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("CRITICAL"), std::string::npos) << r.err;
  }
  const ChildResult ok = parse_in_child("<10,20,300,200>", "--pad-roi");
  ASSERT_TRUE(ok.exited);
  EXPECT_EQ(ok.out, "parsed\n") << ok.err;
}

// The child mode itself: a valid line reports "parsed", so the check above can tell the two.
TEST(PropertyArrays, ChildReportsAValidLineAsParsed) {
  const ChildResult r = parse_in_child("videotestsrc ! cudatensorize roi=\"<10,20,300,200>\" ! fakesink");
  ASSERT_TRUE(r.exited);
  EXPECT_EQ(r.out, "parsed\n") << r.err;
}

GstElement* element_from(const std::string& description) {
  GError* error = nullptr;
  GstElement* e = gst_parse_launch(description.c_str(), &error);
  EXPECT_EQ(error, nullptr) << description << ": " << (error ? error->message : "");
  g_clear_error(&error);
  return e;
}

// The property as numbers, with the GType of every item (and of the items of nested arrays).
void read_array(const GValue* array, std::vector<double>* values, std::vector<GType>* types) {
  for (guint i = 0; i < gst_value_array_get_size(array); i++) {
    const GValue* item = gst_value_array_get_value(array, i);
    if (GST_VALUE_HOLDS_ARRAY(item)) {
      read_array(item, values, types);
      continue;
    }
    types->push_back(G_VALUE_TYPE(item));
    values->push_back(G_VALUE_HOLDS_INT(item)      ? g_value_get_int(item)
                      : G_VALUE_HOLDS_DOUBLE(item) ? g_value_get_double(item)
                                                   : -1e300);
  }
}

struct ValidValue {
  const char* description;  // the element, with the property set
  const char* property;
  std::vector<double> values;
  GType type;  // of every number
};

TEST(PropertyArrays, ValidValuesParseToTheirNumbers) {
  const ValidValue cases[] = {
      {"cudatensorize roi=\"<10,20,300,200>\"", "roi", {10, 20, 300, 200}, G_TYPE_INT},
      {"cudatensorize rois=\"<<0,0,100,100>,<50,50,80,80>>\"", "rois", {0, 0, 100, 100, 50, 50, 80, 80}, G_TYPE_INT},
      {"cudatensorize mean=\"<0.485,0.456,0.406>\"", "mean", {0.485, 0.456, 0.406}, G_TYPE_DOUBLE},
      {"cudatensorize mean=\"<1,2,3>\"", "mean", {1, 2, 3}, G_TYPE_DOUBLE},
      {"cudatensorize std=\"<0.229, 0.224, 0.225>\"", "std", {0.229, 0.224, 0.225}, G_TYPE_DOUBLE},
      {"cudatemplatematch search-region=\"<1,2,30,40>\"", "search-region", {1, 2, 30, 40}, G_TYPE_INT},
      {"cudatemplatematch template-rect=\"<5,6,7,8>\"", "template-rect", {5, 6, 7, 8}, G_TYPE_INT},
  };
  for (const ValidValue& c : cases) {
    SCOPED_TRACE(c.description);
    GstElement* e = element_from(c.description);
    ASSERT_NE(e, nullptr);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, GST_TYPE_ARRAY);
    g_object_get_property(G_OBJECT(e), c.property, &v);
    std::vector<double> values;
    std::vector<GType> types;
    read_array(&v, &values, &types);
    ASSERT_EQ(values.size(), c.values.size());
    for (size_t i = 0; i < values.size(); i++) {
      EXPECT_DOUBLE_EQ(values[i], c.values[i]) << "item " << i;
      EXPECT_EQ(types[i], c.type) << "item " << i << " is a " << g_type_name(types[i]);
    }
    g_value_unset(&v);
    gst_object_unref(e);
  }
}

// What gst-inspect-1.0 prints for an array property: the value type of its element spec.
std::string inspect_type(GstElement* e, const char* property) {
  GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(e), property);
  if (!p || G_PARAM_SPEC_VALUE_TYPE(p) != GST_TYPE_ARRAY) return "not an array";
  GParamSpec* element = GST_PARAM_SPEC_ARRAY_LIST(p)->element_spec;
  if (!element) return "any";
  std::string out = g_type_name(G_PARAM_SPEC_VALUE_TYPE(element));
  if (G_PARAM_SPEC_VALUE_TYPE(element) == GST_TYPE_ARRAY && GST_PARAM_SPEC_ARRAY_LIST(element)->element_spec)
    out += std::string(" of ") + g_type_name(G_PARAM_SPEC_VALUE_TYPE(GST_PARAM_SPEC_ARRAY_LIST(element)->element_spec));
  return out;
}

TEST(PropertyArrays, InspectShowsTheItemType) {
  GstElement* t = gst_element_factory_make("cudatensorize", nullptr);
  GstElement* m = gst_element_factory_make("cudatemplatematch", nullptr);
  ASSERT_NE(t, nullptr);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(inspect_type(t, "roi"), "gint");
  EXPECT_EQ(inspect_type(t, "rois"), "GstValueArray of gint");
  EXPECT_EQ(inspect_type(t, "mean"), "gdouble");
  EXPECT_EQ(inspect_type(t, "std"), "gdouble");
  EXPECT_EQ(inspect_type(m, "search-region"), "gint");
  EXPECT_EQ(inspect_type(m, "template-rect"), "gint");
  gst_object_unref(t);
  gst_object_unref(m);
}

// The defaults read back as equal to themselves (gst-inspect and the regress manifest compare
// a property's value with its default through the element spec).
TEST(PropertyArrays, ValuesCompareThroughTheElementSpec) {
  GstElement* t = element_from("cudatensorize roi=\"<1,2,3,4>\" mean=\"<0.5,0.5,0.5>\"");
  ASSERT_NE(t, nullptr);
  for (const char* name : {"roi", "mean", "rois"}) {
    SCOPED_TRACE(name);
    GParamSpec* p = g_object_class_find_property(G_OBJECT_GET_CLASS(t), name);
    GValue a = G_VALUE_INIT, b = G_VALUE_INIT;
    g_value_init(&a, GST_TYPE_ARRAY);
    g_value_init(&b, GST_TYPE_ARRAY);
    g_object_get_property(G_OBJECT(t), name, &a);
    g_object_get_property(G_OBJECT(t), name, &b);
    EXPECT_EQ(g_param_values_cmp(p, &a, &b), 0);
    EXPECT_EQ(g_param_value_defaults(p, &a), std::string(name) == "rois");
    g_value_unset(&a);
    g_value_unset(&b);
  }
  gst_object_unref(t);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && g_str_equal(argv[1], "--parse")) return child_parse(argv[2]);
  if (argc == 3 && g_str_equal(argv[1], "--pad-roi")) return child_pad_roi(argv[2]);
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
