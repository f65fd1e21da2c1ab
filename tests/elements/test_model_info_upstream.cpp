// GStreamer >= 1.28: the model-info test files read by gst_analytics_modelinfo_load (what
// onnxinference uses) agree with our reader: the same input tensor (type and dims), id, group id,
// dims order, ranges and the scale / offset of every channel; the files it refuses, ours refuses.
#include <gst/analytics/analytics.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_info.h"
#include "model_info_files.h"

namespace {

test::ModelInfoDir& files() {
  static test::ModelInfoDir dir;
  return dir;
}

std::string str(gchar* s) {  // takes s
  std::string out = s ? s : "";
  g_free(s);
  return out;
}

GstTensorDataType upstream_type(cudaprep::DType d) {
  switch (d) {
    case cudaprep::DType::Float16: return GST_TENSOR_DATA_TYPE_FLOAT16;
    case cudaprep::DType::UInt8: return GST_TENSOR_DATA_TYPE_UINT8;
    case cudaprep::DType::Int8: return GST_TENSOR_DATA_TYPE_INT8;
    default: return GST_TENSOR_DATA_TYPE_FLOAT32;
  }
}

// The dims of our reading, outermost first as NCHW / NHWC says (then reversed for col-major);
// a dimension the file leaves open (-1) is given a size, which the file's wildcard must take.
std::vector<gsize> dims_of(const ModelInput& m) {
  auto v = [](int x) { return x > 0 ? (gsize)x : (gsize)7; };
  std::vector<gsize> d = m.layout == cudaprep::Layout::NCHW
                             ? std::vector<gsize>{v(m.batch), v(m.channels), v(m.height), v(m.width)}
                             : std::vector<gsize>{v(m.batch), v(m.height), v(m.width), v(m.channels)};
  if (m.col_major) d = std::vector<gsize>(d.rbegin(), d.rend());
  return d;
}

TEST(ModelInfoUpstream, GoodFilesAgree) {
  for (const auto& f : test::good_model_infos()) {
    const std::string path = files().path(f.name);
    const std::string input = std::string(f.name) == "two_inputs.modelinfo" ? "img" : "";
    ModelInput m;
    const cudaprep::Status st = gst_cuda_prep_model_info_read(path, input, cudaprep::Layout::NCHW, &m);
    ASSERT_TRUE(st.ok()) << st.message();

    GstAnalyticsModelInfo* mi = gst_analytics_modelinfo_load(path.c_str());
    ASSERT_NE(mi, nullptr) << f.name;
    EXPECT_EQ(str(gst_analytics_modelinfo_get_id(mi, m.section.c_str())), m.id) << f.name;
    EXPECT_EQ(str(gst_analytics_modelinfo_get_group_id(mi)), m.group_id) << f.name;
    EXPECT_EQ(gst_analytics_modelinfo_get_dims_order(mi, m.section.c_str()),
              m.col_major ? GST_TENSOR_DIM_ORDER_COL_MAJOR : GST_TENSOR_DIM_ORDER_ROW_MAJOR)
        << f.name;
    // Our type and dims find the same section (by its name, then by index, then by dims).
    const std::vector<gsize> dims = dims_of(m);
    EXPECT_EQ(str(gst_analytics_modelinfo_find_tensor_name(mi, MODELINFO_DIRECTION_INPUT, 0, m.section.c_str(),
                                                           upstream_type(m.dtype), dims.size(), dims.data())),
              m.section)
        << f.name;

    gsize n = 0;
    gdouble *mins = nullptr, *maxs = nullptr;
    const gboolean has_ranges = gst_analytics_modelinfo_get_target_ranges(mi, m.section.c_str(), &n, &mins, &maxs);
    EXPECT_EQ(has_ranges, !m.range_min.empty()) << f.name;
    double scale, mean[3], std[3];
    if (has_ranges && gst_cuda_prep_model_info_normalisation(m, &scale, mean, std)) {
      ASSERT_EQ(n, m.range_min.size()) << f.name;
      // onnxinference: every channel's input is 0..255.
      std::vector<gdouble> in_min(n, 0.0), in_max(n, 255.0);
      gsize n_out = 0;
      gdouble *scales = nullptr, *offsets = nullptr;
      ASSERT_TRUE(gst_analytics_modelinfo_get_input_scales_offsets(mi, m.section.c_str(), n, in_min.data(),
                                                                   in_max.data(), &n_out, &scales, &offsets))
          << f.name;
      for (int c = 0; c < m.channels; c++) {
        const gsize i = n == 1 ? 0 : (gsize)c;
        EXPECT_EQ(mins[i], m.range_min[i]) << f.name;
        EXPECT_EQ(maxs[i], m.range_max[i]) << f.name;
        // Ours: out = (pixel * scale - mean) / std = pixel * (scale / std) - mean / std.
        EXPECT_NEAR(scale / std[c], scales[i], 1e-15) << f.name << " channel " << c;
        EXPECT_NEAR(-mean[c] / std[c], offsets[i], 1e-12) << f.name << " channel " << c;
      }
      g_free(scales);
      g_free(offsets);
    }
    g_free(mins);
    g_free(maxs);
    gst_analytics_modelinfo_free(mi);
  }
}

TEST(ModelInfoUpstream, RefusedByBoth) {
  int refused = 0;
  for (const auto& f : test::bad_model_infos()) {
    if (!f.upstream_refuses) continue;
    const std::string path = files().path(f.name);
    EXPECT_EQ(gst_analytics_modelinfo_load(path.c_str()), nullptr) << f.name;
    ModelInput m;
    EXPECT_FALSE(gst_cuda_prep_model_info_read(path, "", cudaprep::Layout::NCHW, &m).ok()) << f.name;
    refused++;
  }
  EXPECT_GT(refused, 0);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  gst_init(&argc, &argv);
  return RUN_ALL_TESTS();
}
