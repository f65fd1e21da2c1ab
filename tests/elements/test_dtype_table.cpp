// Every row of the dtype table (kernels/common/dtypes.h, cudaprep::kDTypes) through both tensor elements
// on the CPU path (issue 24): a dtype is one table row plus its store functions, and this test
// walks the table, so a new row is tested without a line added here except its reference
// converter below (a row without one fails the test, naming the row).
//
// For each row, set by its name through gst_util_set_object_arg (the GEnum built from the table):
// - cudatensorize on a photograph and on random frames of odd sizes: the caps' "types" is the
//   row's name, the buffer W*H*C*bytes, and every element is the float32 tensor of the same frame
//   and normalisation (the row's default, and explicit scale / mean / std) converted by this
//   test's own reference, in double precision (float16: a bit-level round to nearest even, itself
//   checked against OpenCV's CV_16F conversion; integers: saturate, round half to even);
// - cudatensorbatch with one pad makes the same bytes;
// - a downstream capsfilter "types=<name>" with no dtype set makes the element produce the row;
// - GstTensorMeta (output=video-meta, GStreamer >= 1.26): the tensor's GstTensorDataType;
// - the "dtype" enum of both elements has one value per row, its nick the row's name.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "config.h"
#include "dtypes.h"
#include "harness_util.h"
#include "../tensorize/test_photos.h"
#if CUDAPREP_HAVE_TENSOR_META
#include <gst/analytics/analytics.h>
#endif

using cudaprep::DTypeInfo;
using cudaprep::kDTypeCount;
using cudaprep::kDTypes;
using test::video_caps;

namespace {

using Bytes = std::vector<uint8_t>;

// ---- the test's own reference converters -------------------------------------------------

// Nearest integer, halves to the even one (exact for |x| < 2^52).
double round_half_even(double x) {
  const double f = std::floor(x), d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

// IEEE binary16 bits of v, rounded to nearest even, by arithmetic on doubles (all exact): the
// value is rounded to a multiple of the half's quantum at its binade (2^-24 below 2^-14), then
// the exponent and the 10 mantissa bits are read off the rounded value.
uint16_t half_bits(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  int e;
  std::frexp(a, &e);                        // a = m * 2^e, m in [0.5, 1): leading bit 2^(e-1)
  const int binade = std::max(e - 1, -14);  // subnormals share the quantum of 2^-14
  const double quantum = std::ldexp(1.0, binade - 10);
  const double r = round_half_even(a / quantum) * quantum;
  if (r > 65504.0) return sign | 0x7c00;                                           // past the largest half: infinity
  if (r < std::ldexp(1.0, -14)) return sign | uint16_t(r / std::ldexp(1.0, -24));  // subnormal, zero
  int re;
  std::frexp(r, &re);  // rounding may have carried into the next binade
  const double mant = (r / std::ldexp(1.0, re - 1) - 1.0) * 1024.0;
  return sign | uint16_t((re - 1 + 15) << 10) | uint16_t(mant);
}

double half_value(uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const double s = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return s * std::ldexp(mant, -24);
  if (exp == 31) return mant ? NAN : s * INFINITY;
  return s * std::ldexp(1024 + mant, exp - 25);
}

double saturate(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

// A row's element as the test expects it: `encode` writes the element of the normalised value v
// (the float32 tensor's value) in the byte order of this host; `decode` reads one back, for
// messages and for counting the values the conversion had to round.
struct Reference {
  const char* name;  // a row of kDTypes
  int bytes;
  void (*encode)(double v, uint8_t* out);
  double (*decode)(const uint8_t* in);
};

const Reference kReferences[] = {
    {"float32", 4,
     [](double v, uint8_t* out) {
       const float f = float(v);  // v is a float32 value: exact
       std::memcpy(out, &f, 4);
     },
     [](const uint8_t* in) {
       float f;
       std::memcpy(&f, in, 4);
       return double(f);
     }},
    {"float16", 2,
     [](double v, uint8_t* out) {
       const uint16_t h = half_bits(v);
       std::memcpy(out, &h, 2);
     },
     [](const uint8_t* in) {
       uint16_t h;
       std::memcpy(&h, in, 2);
       return half_value(h);
     }},
    {"uint8", 1, [](double v, uint8_t* out) { out[0] = uint8_t(round_half_even(saturate(v, 0, 255))); },
     [](const uint8_t* in) { return double(in[0]); }},
    {"int8", 1, [](double v, uint8_t* out) { out[0] = uint8_t(int8_t(round_half_even(saturate(v, -128, 127)))); },
     [](const uint8_t* in) { return double(int8_t(in[0])); }},
};

const Reference* reference_for(const char* name) {
  for (const Reference& r : kReferences)
    if (std::strcmp(r.name, name) == 0) return &r;
  return nullptr;
}

std::string no_reference(const DTypeInfo& row) {
  return std::string("kDTypes row \"") + row.name + "\" has no reference converter: add one to kReferences in " +
         __FILE__ + " (the element of a normalised double value, computed independently of kernels/)";
}

// ---- running the elements ----------------------------------------------------------------

enum class Element { Tensorize, Batch };
const char* factory(Element e) { return e == Element::Tensorize ? "cudatensorize" : "cudatensorbatch"; }

const char* kModelCaps = "other/tensors,format=static,num_tensors=1,framerate=(fraction)[0/1,MAX]";

struct Output {
  Bytes tensor;
  std::string types;
  GstBuffer* buffer = nullptr;  // the output buffer, kept only when asked (transfer full)
};

std::string caps_types(GstCaps* caps) {
  if (!caps) return "(no caps)";
  const gchar* t = gst_structure_get_string(gst_caps_get_structure(caps, 0), "types");
  return t ? t : "(none)";
}

// One frame (transfer full, with `caps`) through `factory` backend=cpu `props`, its "dtype" set
// by name through gst_util_set_object_arg when `dtype` is given, followed by a capsfilter of
// `downstream` (a model's tensor caps fields) when not empty. cudatensorize runs in a harness;
// cudatensorbatch, an aggregator that needs its request pad, in appsrc ! ... ! appsink.
Output run(Element e, const std::string& props, const char* dtype, const std::string& caps, GstBuffer* frame,
           const std::string& downstream = "", bool keep_buffer = false) {
  Output out;
  GST_BUFFER_PTS(frame) = 0;
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  const std::string filter =
      downstream.empty() ? "" : " ! capsfilter caps=\"" + std::string(kModelCaps) + "," + downstream + "\"";
  const std::string desc = std::string(factory(e)) + " name=el backend=cpu " + props + filter;
  if (e == Element::Tensorize) {
    GstHarness* h = gst_harness_new_parse(desc.c_str());
    if (dtype) test::set_arg(h, "cudatensorize", "dtype", dtype);
    gst_harness_set_src_caps_str(h, caps.c_str());
    GstBuffer* b = gst_harness_push_and_pull(h, frame);
    EXPECT_NE(b, nullptr) << desc;
    if (b) out.tensor = test::buffer_bytes(b);
    GstCaps* c = gst_pad_get_current_caps(h->sinkpad);
    out.types = caps_types(c);
    if (c) gst_caps_unref(c);
    if (b && keep_buffer)
      out.buffer = b;
    else if (b)
      gst_buffer_unref(b);
    gst_harness_teardown(h);
    return out;
  }
  const std::string line =
      "appsrc name=src format=time caps=\"" + caps + "\" ! " + desc + " ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(line.c_str(), &err);
  EXPECT_EQ(err, nullptr) << line;
  if (err) {
    g_error_free(err);
    gst_buffer_unref(frame);
    return out;
  }
  GstElement* el = gst_bin_get_by_name(GST_BIN(pipeline), "el");
  if (dtype) gst_util_set_object_arg(G_OBJECT(el), "dtype", dtype);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  EXPECT_NE(s, nullptr) << line;
  if (s) {
    out.tensor = test::buffer_bytes(gst_sample_get_buffer(s));
    out.types = caps_types(gst_sample_get_caps(s));
    gst_sample_unref(s);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(el);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

// A BGR GstBuffer of an 8-bit 3-channel image (rows at GStreamer's default stride).
GstBuffer* bgr_buffer(const cv::Mat& bgr) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_BGR, bgr.cols, bgr.rows);
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&info), nullptr);
  GstVideoFrame f;
  EXPECT_TRUE(gst_video_frame_map(&f, &info, buf, GST_MAP_WRITE));
  for (int y = 0; y < bgr.rows; y++)
    std::memcpy((uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&f, 0) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0), bgr.ptr(y),
                size_t(bgr.cols) * 3);
  gst_video_frame_unmap(&f);
  return buf;
}

// The photograph at an odd size (161x97), read once.
const cv::Mat& photo() {
  static const cv::Mat m = [] {
    cv::Mat out;
    cv::resize(tztest::load_photo("fruits.jpg"), out, cv::Size(161, 97), 0, 0, cv::INTER_AREA);
    return out;
  }();
  return m;
}

// scale / mean / std as properties: the row's default, or the cases' explicit values (which make
// halves for the integer types: pixel * 0.5, pixel / 4, and values past both ends of int8/uint8).
std::string normalisation_props(const DTypeInfo& row, bool explicit_norm) {
  char buf[200];
  if (explicit_norm) return "scale=0.5 mean=<10,20,30> std=<2,1,0.5>";
  std::snprintf(buf, sizeof buf, "scale=%.17g mean=<%.17g,%.17g,%.17g> std=<1,1,1>", row.default_scale,
                row.default_mean, row.default_mean, row.default_mean);
  return buf;
}

// A frame of the cases: the photograph, or random bytes in a padded, offset buffer.
struct Case {
  const char* what;
  GstVideoFormat format;  // GST_VIDEO_FORMAT_UNKNOWN: the photograph (BGR)
  int w, h;               // the frame's (random frames)
  const char* props;      // the tensor's shape and geometry
  int tw, th, channels;
  bool explicit_norm;
};

const Case kCases[] = {
    {"photo letterboxed", GST_VIDEO_FORMAT_UNKNOWN, 161, 97, "width=64 height=48", 64, 48, 3, false},
    {"photo at its own size", GST_VIDEO_FORMAT_UNKNOWN, 161, 97, "width=161 height=97 resize-mode=stretch", 161, 97, 3,
     true},
    {"photo gray nhwc", GST_VIDEO_FORMAT_UNKNOWN, 161, 97, "width=45 height=33 channels=1 layout=nhwc", 45, 33, 1,
     false},
    {"random NV12", GST_VIDEO_FORMAT_NV12, 37, 23, "width=29 height=31 layout=nhwc", 29, 31, 3, false},
    {"random I420 gray", GST_VIDEO_FORMAT_I420, 53, 41, "width=40 height=24 channels=1", 40, 24, 1, true},
    {"random RGBA cropped", GST_VIDEO_FORMAT_RGBA, 7, 5, "width=3 height=9 resize-mode=crop interpolation=nearest", 3,
     9, 3, true},
    {"random YUY2 bgr", GST_VIDEO_FORMAT_YUY2, 33, 17, "width=17 height=13 channel-order=bgr", 17, 13, 3, false},
};

// The case's frame (the same bytes on every call: transfer full) and its caps.
GstBuffer* frame_of(const Case& c) {
  if (c.format == GST_VIDEO_FORMAT_UNKNOWN) return bgr_buffer(photo());
  return test::make_frame(c.format, c.w, c.h, /*seed=*/uint32_t(c.w * 131 + c.h), /*extra_stride=*/5, /*offset=*/3)
      .buffer;
}
std::string caps_of(const Case& c) {
  if (c.format == GST_VIDEO_FORMAT_UNKNOWN) return video_caps("BGR", c.w, c.h);
  return video_caps(gst_video_format_to_string(c.format), c.w, c.h, ",colorimetry=bt601");
}

std::vector<float> as_floats(const Bytes& b) {
  std::vector<float> f(b.size() / 4);
  std::memcpy(f.data(), b.data(), f.size() * 4);
  return f;
}

}  // namespace

// ---- the references themselves ---------------------------------------------------------------

// The float16 reference agrees with OpenCV's CV_16F conversion on every finite half, the
// midpoints between neighbours (the ties), and the floats just either side of them.
TEST(DTypeReference, Float16IsOpenCvsConversion) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x7bff; ++h) {  // up to the largest finite half, 0x7bff
    const double v = half_value(uint16_t(h)), next = half_value(uint16_t(h + 1));
    const float mid = float((v + next) / 2);  // 12 significant bits: exact
    for (float f : {float(v), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      values.push_back(f);
      values.push_back(-f);
    }
  }
  cv::Mat src(1, int(values.size()), CV_32F, values.data()), dst;
  src.convertTo(dst, CV_16F);
  int differ = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t cv_bits;
    std::memcpy(&cv_bits, dst.ptr<uint8_t>(0) + 2 * i, 2);
    if (cv_bits != half_bits(values[i]) && differ++ < 10)
      ADD_FAILURE() << values[i] << ": OpenCV 0x" << std::hex << cv_bits << ", reference 0x" << half_bits(values[i]);
  }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(half_bits(65519.99), 0x7bffu);  // below the midpoint to infinity
  EXPECT_EQ(half_bits(65520.0), 0x7c00u);   // the midpoint: to even, infinity
}

// The integer references: halves go to the even neighbour, values past the ends saturate.
TEST(DTypeReference, IntegersRoundHalfToEvenAndSaturate) {
  const Reference* u8 = reference_for("uint8");
  const Reference* i8 = reference_for("int8");
  ASSERT_TRUE(u8 && i8);
  auto enc = [](const Reference* r, double v) {
    uint8_t b = 0;
    r->encode(v, &b);
    return r->decode(&b);
  };
  const double u8_cases[][2] = {{0.5, 0},     {1.5, 2},   {2.5, 2},  {2.5000001, 3}, {254.5, 254},
                                {255.5, 255}, {300, 255}, {-0.5, 0}, {-7, 0}};
  for (const auto& c : u8_cases) EXPECT_EQ(enc(u8, c[0]), c[1]) << "uint8 of " << c[0];
  const double i8_cases[][2] = {{0.5, 0},     {-0.5, 0},  {-1.5, -2},     {-2.5, -2},   {126.5, 126},
                                {127.5, 127}, {200, 127}, {-128.5, -128}, {-1000, -128}};
  for (const auto& c : i8_cases) EXPECT_EQ(enc(i8, c[0]), c[1]) << "int8 of " << c[0];
}

// Every row has a reference and every reference a row (a stale one would test nothing).
TEST(DTypeTable, EveryRowHasAReference) {
  for (const DTypeInfo& row : kDTypes) {
    const Reference* ref = reference_for(row.name);
    if (!ref) {
      ADD_FAILURE() << no_reference(row);
      continue;
    }
    EXPECT_EQ(ref->bytes, row.bytes) << row.name << ": the table's element size differs from the test's";
  }
  for (const Reference& r : kReferences) {
    bool found = false;
    for (const DTypeInfo& row : kDTypes) found |= std::strcmp(row.name, r.name) == 0;
    EXPECT_TRUE(found) << "reference \"" << r.name << "\" names no row of kDTypes";
  }
}

// The float32 tensor the references start from is the pixels normalised: at the frame's own
// size (no resampling) each element is (pixel * scale - mean) / std, computed here in double.
TEST(DTypeTable, Float32TensorIsThePixelsNormalised) {
  const Case& c = kCases[1];
  ASSERT_TRUE(c.explicit_norm && c.tw == c.w && c.th == c.h);
  Output f = run(Element::Tensorize, std::string(c.props) + " " + normalisation_props(kDTypes[0], true), "float32",
                 caps_of(c), frame_of(c));
  const std::vector<float> v = as_floats(f.tensor);
  ASSERT_EQ(v.size(), size_t(c.w) * c.h * 3);
  const double mean[3] = {10, 20, 30}, stdv[3] = {2, 1, 0.5};
  for (int ch = 0; ch < 3; ++ch)
    for (int y = 0; y < c.h; ++y)
      for (int x = 0; x < c.w; ++x) {
        const double pixel = photo().at<cv::Vec3b>(y, x)[2 - ch];  // RGB order, the photo is BGR
        const double want = (pixel * 0.5 - mean[ch]) / stdv[ch];
        ASSERT_NEAR(v[(size_t(ch) * c.h + y) * c.w + x], want, 1e-5 * std::max(1.0, std::fabs(want)))
            << "(" << x << ", " << y << ") channel " << ch;
      }
}

// ---- every row through both elements -----------------------------------------------------------

// Each row, set by name, on every case: caps, size, and every element equal to the reference
// conversion of the float32 tensor made with the same normalisation; cudatensorbatch the same
// bytes. Each row narrower than float32 must have met values it rounds, and the cases must hold
// values halfway between two integers (the integer rows' ties), so a wrong rounding cannot pass
// unseen.
TEST(DTypeTable, EveryRowMatchesItsReferenceOnBothElements) {
  for (const DTypeInfo& row : kDTypes) {
    SCOPED_TRACE(std::string("dtype ") + row.name);
    const Reference* ref = reference_for(row.name);
    if (!ref) {
      ADD_FAILURE() << no_reference(row);
      continue;
    }
    size_t rounded = 0, halves = 0, compared = 0;
    for (const Case& c : kCases) {
      SCOPED_TRACE(c.what);
      const std::string norm = normalisation_props(row, c.explicit_norm);
      // The row's own default normalisation is left unset: the element must pick it from the table.
      const std::string props = std::string(c.props) + (c.explicit_norm ? " " + norm : "");
      Output f32 = run(Element::Tensorize, std::string(c.props) + " " + norm, "float32", caps_of(c), frame_of(c));
      Output out = run(Element::Tensorize, props, row.name, caps_of(c), frame_of(c));
      const size_t n = size_t(c.tw) * c.th * c.channels;
      ASSERT_EQ(f32.tensor.size(), n * 4);
      EXPECT_EQ(out.types, row.name);
      ASSERT_EQ(out.tensor.size(), n * size_t(row.bytes)) << "W*H*C*bytes";
      ASSERT_EQ(row.bytes, ref->bytes) << "the table's element size differs from the test's";
      const std::vector<float> v = as_floats(f32.tensor);
      Bytes want(n * size_t(ref->bytes));
      for (size_t i = 0; i < n; ++i) {
        ref->encode(v[i], &want[i * ref->bytes]);
        rounded += ref->decode(&want[i * ref->bytes]) != double(v[i]);
        halves += v[i] - std::floor(v[i]) == 0.5;
      }
      compared += n;
      for (size_t i = 0; i < n; ++i)
        if (std::memcmp(&want[i * ref->bytes], &out.tensor[i * ref->bytes], size_t(ref->bytes)) != 0) {
          ADD_FAILURE() << "element " << i << " of " << n << ": float32 value " << v[i] << " should be "
                        << ref->decode(&want[i * ref->bytes]) << ", the element made "
                        << ref->decode(&out.tensor[i * ref->bytes]);
          break;
        }
      Output batch = run(Element::Batch, props, row.name, caps_of(c), frame_of(c));
      EXPECT_EQ(batch.types, row.name);
      EXPECT_TRUE(batch.tensor == out.tensor) << "cudatensorbatch differs from cudatensorize";
    }
    EXPECT_GT(compared, 0u);
    EXPECT_GT(halves, 0u) << "no value of the cases lies halfway between two integers: the ties are untested";
    if (ref->bytes < 4) {  // a narrower type than the float32 it comes from: some values must round
      EXPECT_GT(rounded, 0u) << "no value of the cases needed rounding: a wrong rounding would go unseen";
    }
  }
}

// Downstream asking for a row's type (types=<name>, no dtype set) gets it: the same tensor as
// dtype=<name>, from both elements.
TEST(DTypeTable, DownstreamTypesPickTheRow) {
  const Case& c = kCases[3];
  for (const DTypeInfo& row : kDTypes) {
    for (Element e : {Element::Tensorize, Element::Batch}) {
      SCOPED_TRACE(std::string(factory(e)) + " types=" + row.name);
      Output set = run(e, c.props, row.name, caps_of(c), frame_of(c));
      Output negotiated = run(e, c.props, nullptr, caps_of(c), frame_of(c), std::string("types=") + row.name);
      EXPECT_EQ(negotiated.types, row.name);
      EXPECT_EQ(negotiated.tensor.size(), size_t(c.tw) * c.th * c.channels * row.bytes);
      EXPECT_TRUE(negotiated.tensor == set.tensor) << "the negotiated tensor differs from dtype=" << row.name;
    }
  }
}

// The "dtype" enum (what gst-inspect lists) of both elements: one value per row, in table
// order, its nick the row's name and the caps' type, its description the row's.
TEST(DTypeTable, EnumHasOneValuePerRow) {
  for (Element e : {Element::Tensorize, Element::Batch}) {
    SCOPED_TRACE(factory(e));
    GstElement* el = gst_element_factory_make(factory(e), nullptr);
    ASSERT_NE(el, nullptr);
    GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(el), "dtype");
    ASSERT_NE(spec, nullptr);
    ASSERT_TRUE(G_IS_PARAM_SPEC_ENUM(spec));
    GEnumClass* ec = G_PARAM_SPEC_ENUM(spec)->enum_class;
    EXPECT_EQ(int(ec->n_values), kDTypeCount);
    for (int i = 0; i < kDTypeCount; ++i) {
      const DTypeInfo& row = kDTypes[i];
      const GEnumValue* v = g_enum_get_value_by_nick(ec, row.name);
      ASSERT_NE(v, nullptr) << "no enum value named " << row.name;
      EXPECT_EQ(v->value, i);
      EXPECT_STREQ(v->value_name, row.description);
      gst_util_set_object_arg(G_OBJECT(el), "dtype", row.name);
      gint got = -1;
      g_object_get(el, "dtype", &got, NULL);
      EXPECT_EQ(got, i) << row.name;
    }
    gst_object_unref(el);
  }
}

#if CUDAPREP_HAVE_TENSOR_META

namespace {

// GStreamer's tensor type of each row, as this test expects it.
struct MetaType {
  const char* name;
  GstTensorDataType type;
};
const MetaType kMetaTypes[] = {{"float32", GST_TENSOR_DATA_TYPE_FLOAT32},
                               {"float16", GST_TENSOR_DATA_TYPE_FLOAT16},
                               {"uint8", GST_TENSOR_DATA_TYPE_UINT8},
                               {"int8", GST_TENSOR_DATA_TYPE_INT8}};

}  // namespace

// output=video-meta: the frame carries one GstTensor of the row's GstTensorDataType, dims
// [1,C,H,W], holding the bytes output=tensor makes.
TEST(DTypeTable, TensorMetaCarriesTheRowsType) {
  const Case& c = kCases[0];
  for (const DTypeInfo& row : kDTypes) {
    SCOPED_TRACE(std::string("dtype ") + row.name);
    const MetaType* mt = nullptr;
    for (const MetaType& m : kMetaTypes)
      if (std::strcmp(m.name, row.name) == 0) mt = &m;
    if (!mt) {
      ADD_FAILURE() << "kDTypes row \"" << row.name << "\" has no GstTensorDataType in kMetaTypes in " << __FILE__;
      continue;
    }
    Output tensor = run(Element::Tensorize, c.props, row.name, caps_of(c), frame_of(c));
    Output on_frame = run(Element::Tensorize, std::string(c.props) + " output=video-meta", row.name, caps_of(c),
                          frame_of(c), "", /*keep_buffer=*/true);
    ASSERT_NE(on_frame.buffer, nullptr);
    GstTensorMeta* meta = gst_buffer_get_tensor_meta(on_frame.buffer);
    ASSERT_NE(meta, nullptr);
    ASSERT_EQ(meta->num_tensors, 1u);
    const gint index = gst_tensor_meta_get_index_from_id(meta, g_quark_from_string("cudaprep-tensorize"));
    ASSERT_EQ(index, 0);
    const GstTensor* t = gst_tensor_meta_get(meta, index);
    EXPECT_EQ(t->data_type, mt->type);
    EXPECT_EQ(t->dims_order, GST_TENSOR_DIM_ORDER_ROW_MAJOR);
    EXPECT_EQ(std::vector<gsize>(t->dims, t->dims + t->num_dims),
              (std::vector<gsize>{1, gsize(c.channels), gsize(c.th), gsize(c.tw)}));
    EXPECT_EQ(test::buffer_bytes(t->data), tensor.tensor);
    gst_buffer_unref(on_frame.buffer);
  }
}

#endif

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
