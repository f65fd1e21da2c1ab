// GStreamer >= 1.28: the transform meta on a frame (cudatensorize output=video-meta) follows the
// frame through elements that transform metas with a matrix (videocrop, videobox, compositor;
// videoscale as before): a tensor point maps back to where that pixel is in the frame those
// elements made, computed here from the geometry each one applies to the frame the tensor was made
// from. Flips and quarter turns, which GStreamer 1.28's videoflip passes on as a plain copy, are
// checked by handing the meta the matrix such an element gives; a projective matrix drops it.
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include <functional>
#include <string>

#include "gstcudaprepmeta.h"
#include "harness_util.h"

namespace {

struct Mapped {
  bool has_meta = false;
  GstCudaPrepTransform t{};
  GstBuffer* frame = nullptr;  // the frame that came out (owned)
  ~Mapped() {
    if (frame) gst_buffer_unref(frame);
  }
};

// appsrc (a 64x40 RGBA frame) ! cudatensorize backend=cpu output=video-meta width=32 height=32
// ! AFTER ! appsink: the transform meta on the frame that comes out.
Mapped run(const std::string& after) {
  Mapped out;
  const std::string desc = "appsrc name=src format=time caps=\"" + test::video_caps("RGBA", 64, 40) +
                           "\" ! cudatensorize backend=cpu output=video-meta width=32 height=32 ! " + after +
                           " ! appsink name=out sync=false";
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(desc.c_str(), &err);
  EXPECT_EQ(err, nullptr) << desc << (err ? err->message : "");
  if (!pipeline) return out;
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBuffer* frame = test::make_frame(GST_VIDEO_FORMAT_RGBA, 64, 40, 5).buffer;
  GST_BUFFER_PTS(frame) = 0;
  GST_BUFFER_DURATION(frame) = GST_SECOND / 30;
  gst_app_src_push_buffer(GST_APP_SRC(src), frame);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 5 * GST_SECOND);
  EXPECT_NE(s, nullptr) << desc;
  if (s) {
    out.frame = gst_buffer_ref(gst_sample_get_buffer(s));
    out.has_meta = gst_cuda_prep_buffer_get_transform(out.frame, &out.t);
    gst_sample_unref(s);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return out;
}

void to_frame(const GstCudaPrepTransform& t, double tx, double ty, double* x, double* y) {
  *x = t.tensor_to_src[0] * tx + t.tensor_to_src[1] * ty + t.tensor_to_src[2];
  *y = t.tensor_to_src[3] * tx + t.tensor_to_src[4] * ty + t.tensor_to_src[5];
}

// Tensor points through `after` land where `expect` puts the original frame's pixel (pixel-centre
// coordinates), on a `w` x `h` frame; and the frame -> tensor map is the inverse.
using Expect = std::function<void(double, double, double*, double*)>;

void check_maps(const std::string& after, const Mapped& base, const Mapped& got, int w, int h, Expect expect) {
  ASSERT_TRUE(base.has_meta);
  ASSERT_TRUE(got.has_meta) << after << ": the meta was dropped";
  EXPECT_EQ(got.t.source_width, w) << after;
  EXPECT_EQ(got.t.source_height, h) << after;
  const double pts[][2] = {{0, 0}, {31, 31}, {5, 20}, {16, 16}};
  for (const auto& p : pts) {
    double x0, y0, x, y, ex, ey;
    to_frame(base.t, p[0], p[1], &x0, &y0);
    to_frame(got.t, p[0], p[1], &x, &y);
    expect(x0, y0, &ex, &ey);
    EXPECT_NEAR(x, ex, 1e-4) << after << " tensor (" << p[0] << "," << p[1] << ")";
    EXPECT_NEAR(y, ey, 1e-4) << after << " tensor (" << p[0] << "," << p[1] << ")";
    const double* n = got.t.src_to_tensor;
    EXPECT_NEAR(n[0] * x + n[1] * y + n[2], p[0], 1e-4) << after;
    EXPECT_NEAR(n[3] * x + n[4] * y + n[5], p[1], 1e-4) << after;
  }
}

void check(const std::string& after, int w, int h, Expect expect) {
  const Mapped base = run("identity");
  const Mapped got = run(after);
  check_maps(after, base, got, w, h, expect);
}

// The meta of a 64x40 frame handed `matrix` (edges of the whole frame into a w x h frame), as an
// element that transforms metas with a matrix does.
Mapped through_matrix(const Mapped& base, const float matrix[3][3], int w, int h) {
  Mapped out;
  GstVideoInfo in_info, out_info;
  gst_video_info_set_format(&in_info, GST_VIDEO_FORMAT_RGBA, 64, 40);
  gst_video_info_set_format(&out_info, GST_VIDEO_FORMAT_RGBA, w, h);
  GstVideoMetaTransformMatrix m;
  m.in_info = &in_info;
  m.in_rectangle = GstVideoRectangle{0, 0, 64, 40};
  m.out_info = &out_info;
  m.out_rectangle = GstVideoRectangle{0, 0, w, h};
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) m.matrix[r][c] = matrix[r][c];
  GstMeta* meta = (GstMeta*)gst_buffer_get_custom_meta(base.frame, GST_CUDA_PREP_TRANSFORM_META_NAME);
  EXPECT_NE(meta, nullptr);
  if (!meta) return out;
  out.frame = gst_buffer_new();
  meta->info->transform_func(out.frame, meta, base.frame, gst_video_meta_transform_matrix_get_quark(), &m);
  out.has_meta = gst_cuda_prep_buffer_get_transform(out.frame, &out.t);
  return out;
}

TEST(TransformMatrix, HorizontalFlipMatrix) {
  const Mapped base = run("identity");
  const float flip[3][3] = {{-1, 0, 64}, {0, 1, 0}, {0, 0, 1}};  // edges: x' = 64 - x
  check_maps("horizontal flip", base, through_matrix(base, flip, 64, 40), 64, 40,
             [](double x, double y, double* ox, double* oy) {
               *ox = 63 - x;
               *oy = y;
             });
}

TEST(TransformMatrix, QuarterTurnMatrix) {
  const Mapped base = run("identity");
  const float turn[3][3] = {{0, -1, 40}, {1, 0, 0}, {0, 0, 1}};  // clockwise: a 40x64 frame
  check_maps("clockwise", base, through_matrix(base, turn, 40, 64), 40, 64,
             [](double x, double y, double* ox, double* oy) {
               *ox = 39 - y;
               *oy = x;
             });
}

TEST(TransformMatrix, ProjectiveMatrixDropsTheMeta) {
  const Mapped base = run("identity");
  const float keystone[3][3] = {{1, 0, 0}, {0, 1, 0}, {0.001f, 0, 1}};
  EXPECT_FALSE(through_matrix(base, keystone, 64, 40).has_meta);
}

TEST(TransformMatrix, Crop) {
  check("videocrop left=8 top=4 right=2 bottom=6", 54, 30, [](double x, double y, double* ox, double* oy) {
    *ox = x - 8;
    *oy = y - 4;
  });
}

TEST(TransformMatrix, BoxBorders) {
  // Negative values add borders.
  check("videobox left=-10 top=-6", 74, 46, [](double x, double y, double* ox, double* oy) {
    *ox = x + 10;
    *oy = y + 6;
  });
}

TEST(TransformMatrix, CompositorPlacement) {
  check("compositor sink_0::xpos=20 sink_0::ypos=10 ! video/x-raw,width=100,height=80", 100, 80,
        [](double x, double y, double* ox, double* oy) {
          *ox = x + 20;
          *oy = y + 10;
        });
}

TEST(TransformMatrix, ScaleStillFollows) {
  check("videoscale ! video/x-raw,width=128,height=80", 128, 80, [](double x, double y, double* ox, double* oy) {
    *ox = (x + 0.5) * 2 - 0.5;
    *oy = (y + 0.5) * 2 - 0.5;
  });
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new test::GstEnv);
  return RUN_ALL_TESTS();
}
