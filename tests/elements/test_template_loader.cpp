// The template loader on its own: sizes read from PNG / JPEG / PNM / BMP / GIF headers and oversize
// files refused from them at once; masks from a PNG's alpha and from a separate mask file; gray
// against OpenCV's cvtColor; corrupt and missing files; several loads at once.
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "image_files.h"
#include "template_loader.h"
#include "templatematch.h"

namespace {

constexpr int kMax = cudaprep::kMaxTemplateSide;

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& name) : path(test::temp_path(name)) {}
  ~TempFile() { remove(path.c_str()); }
};

std::vector<uint8_t> noise(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = (uint8_t)(rng() & 255);
  return v;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// OpenCV's gray of an RGB(A) buffer (the loader's formula is cvtColor's).
std::vector<uint8_t> opencv_gray(const std::vector<uint8_t>& px, int w, int h, int channels) {
  cv::Mat m(h, w, CV_8UC(channels), (void*)px.data()), g;
  cv::cvtColor(m, g, channels == 4 ? cv::COLOR_RGBA2GRAY : cv::COLOR_RGB2GRAY);
  return std::vector<uint8_t>(g.data, g.data + (size_t)w * h);
}

}  // namespace

TEST(TemplateLoader, HeaderSizes) {
  int w, h;
  std::string format;
  for (int ct : {0, 2, 4, 6}) {
    TempFile f("size.png");
    test::write_png(f.path, 37, 21, ct, noise((size_t)37 * 21 * test::png_channels(ct), ct));
    ASSERT_EQ(gst_cuda_prep_image_file_size(f.path, &w, &h, &format), "");
    EXPECT_EQ(format, "PNG");
    EXPECT_EQ(w, 37);
    EXPECT_EQ(h, 21);
  }
  cv::Mat img(23, 41, CV_8UC3);
  cv::randu(img, 0, 255);
  for (const char* ext : {".jpg", ".bmp", ".pgm", ".ppm"}) {
    TempFile f(std::string("size") + ext);
    cv::Mat m = img;
    if (std::string(ext) == ".pgm") cv::cvtColor(img, m, cv::COLOR_BGR2GRAY);
    ASSERT_TRUE(cv::imwrite(f.path, m)) << ext;
    ASSERT_EQ(gst_cuda_prep_image_file_size(f.path, &w, &h, &format), "") << ext;
    EXPECT_EQ(format, std::string(ext) == ".jpg" ? "JPEG" : std::string(ext) == ".bmp" ? "BMP" : "PNM") << ext;
    EXPECT_EQ(w, 41) << ext;
    EXPECT_EQ(h, 23) << ext;
  }
  {
    TempFile f("comments.pgm");  // comments between the numbers
    test::write_file(f.path, "P5\n# a\n# b\n 300\n#c\n 20 \n255\n" + std::string(6000, 'x'));
    ASSERT_EQ(gst_cuda_prep_image_file_size(f.path, &w, &h, &format), "");
    EXPECT_EQ(w, 300);
    EXPECT_EQ(h, 20);
  }
  {
    TempFile f("size.gif");
    test::write_file(f.path, std::string("GIF89a\x2c\x01\x14\x00", 10) + std::string(20, '\0'));
    ASSERT_EQ(gst_cuda_prep_image_file_size(f.path, &w, &h, &format), "");
    EXPECT_EQ(format, "GIF");
    EXPECT_EQ(w, 300);
    EXPECT_EQ(h, 20);
  }
  {
    TempFile f("other.tiff");  // a format whose header is not read: decoded with the size bound
    test::write_file(f.path, std::string("II*\0", 4) + std::string(100, '\0'));
    ASSERT_EQ(gst_cuda_prep_image_file_size(f.path, &w, &h, &format), "");
    EXPECT_EQ(format, "");
    EXPECT_EQ(w, 0);
  }
}

// Oversize files of every format read from its header are refused at once (no decoding), naming
// the file and its size; headers claim sizes their (small) files do not hold.
TEST(TemplateLoader, OversizeRefusedFromEveryHeader) {
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes
  {
    TempFile png("big.png");
    test::write_png(png.path, 4, 4, 0, noise(16, 1));
    std::string bytes = test::read_file(png.path);
    bytes[16] = 0, bytes[17] = 0, bytes[18] = 0x1f, bytes[19] = 0x40;  // width 8000
    bytes[20] = 0, bytes[21] = 0, bytes[22] = 0x1f, bytes[23] = 0x40;  // height 8000
    files.push_back({"big.png", bytes});
  }
  {
    TempFile jpg("big.jpg");
    cv::Mat img(300, 9000 / 30, CV_8UC1, cv::Scalar(7));
    ASSERT_TRUE(cv::imwrite(jpg.path, img));
    std::string bytes = test::read_file(jpg.path);
    const size_t sof = bytes.find("\xff\xc0", 2);
    ASSERT_NE(sof, std::string::npos);
    bytes[sof + 5] = 0x01, bytes[sof + 6] = 0x2c;  // height 300
    bytes[sof + 7] = 0x23, bytes[sof + 8] = 0x28;  // width 9000
    files.push_back({"big.jpg", bytes});
  }
  files.push_back({"big.pgm", "P5\n9000 300\n255\n" + std::string(100, '\0')});
  files.push_back({"big.ppm", "P6 9000\n300 255\n" + std::string(100, '\0')});
  {
    std::string bmp = "BM" + std::string(12, '\0') + std::string("\x28\0\0\0", 4);
    bmp += std::string("\x28\x23\0\0", 4) + std::string("\xd4\xfe\xff\xff", 4);  // 9000 x -300 (top-down)
    files.push_back({"big.bmp", bmp + std::string(40, '\0')});
  }
  files.push_back({"big.gif", std::string("GIF87a\x28\x23\x2c\x01", 10) + std::string(20, '\0')});
  for (const auto& [name, bytes] : files) {
    TempFile f(name);
    test::write_file(f.path, bytes);
    GrayImage img;
    const auto t0 = std::chrono::steady_clock::now();
    std::string err = gst_cuda_prep_load_gray_image(f.path, kMax, &img);
    EXPECT_LT(seconds_since(t0), 0.5) << name;
    const std::string size = name == "big.png" ? "8000x8000" : "9000x300";
    EXPECT_TRUE(contains(err, "template file '" + f.path + "' is " + size + " pixels")) << name << ": " << err;
    EXPECT_TRUE(contains(err, "at most 256x256")) << name << ": " << err;
  }
}

// Files that decode, in every format read from the header, at the limit.
TEST(TemplateLoader, DecodesAtTheLimit) {
  cv::Mat rgb(kMax, kMax - 1, CV_8UC3);
  cv::randu(rgb, 0, 255);
  for (const char* ext : {".png", ".jpg", ".ppm"}) {
    TempFile f(std::string("limit") + ext);
    ASSERT_TRUE(cv::imwrite(f.path, rgb));
    GrayImage img;
    ASSERT_EQ(gst_cuda_prep_load_gray_image(f.path, kMax, &img), "") << ext;
    EXPECT_EQ(img.width, kMax - 1) << ext;
    EXPECT_EQ(img.height, kMax) << ext;
  }
}

// An RGBA PNG: gray as cvtColor, mask = alpha > 0 (a non-binary alpha counts wherever it is above
// 0, as OpenCV binarises an 8-bit mask).
TEST(TemplateLoader, AlphaGivesTheMask) {
  const int w = 33, h = 17;
  std::vector<uint8_t> rgba = noise((size_t)w * h * 4, 5);
  for (int i = 0; i < w * h; i++) rgba[4 * i + 3] = (uint8_t)(i % 4 == 0 ? 0 : i % 4 == 1 ? 1 : i % 4 == 2 ? 128 : 255);
  TempFile f("alpha.png");
  test::write_png(f.path, w, h, 6, rgba);
  cudaprep::MaskedGray t;
  ASSERT_EQ(gst_cuda_prep_load_masked_template(f.path, "", kMax, &t), "");
  ASSERT_EQ(t.width, w);
  ASSERT_EQ(t.height, h);
  EXPECT_EQ(t.pixels, opencv_gray(rgba, w, h, 4));
  ASSERT_TRUE(t.masked());
  for (int i = 0; i < w * h; i++) ASSERT_EQ(t.mask[i], i % 4 == 0 ? 0 : 1) << i;
  // The same through OpenCV's reading of the PNG (alpha > 0).
  cv::Mat read = cv::imread(f.path, cv::IMREAD_UNCHANGED);
  ASSERT_EQ(read.channels(), 4);
  std::vector<cv::Mat> ch;
  cv::split(read, ch);
  cv::Mat cv_mask = ch[3] > 0;
  for (int i = 0; i < w * h; i++) ASSERT_EQ(t.mask[i] != 0, cv_mask.data[i] != 0) << i;

  // Gray + alpha (PNG colour type 4).
  std::vector<uint8_t> ga = noise((size_t)w * h * 2, 6);
  for (int i = 0; i < w * h; i++) ga[2 * i + 1] = (uint8_t)(i % 3 ? 200 : 0);
  TempFile g("gray_alpha.png");
  test::write_png(g.path, w, h, 4, ga);
  ASSERT_EQ(gst_cuda_prep_load_masked_template(g.path, "", kMax, &t), "");
  ASSERT_TRUE(t.masked());
  for (int i = 0; i < w * h; i++) {
    ASSERT_EQ(t.mask[i], i % 3 ? 1 : 0) << i;
    ASSERT_EQ(t.pixels[i], ga[2 * i]) << i;
  }

  // Every pixel opaque: no mask.
  for (int i = 0; i < w * h; i++) rgba[4 * i + 3] = 255;
  test::write_png(f.path, w, h, 6, rgba);
  ASSERT_EQ(gst_cuda_prep_load_masked_template(f.path, "", kMax, &t), "");
  EXPECT_FALSE(t.masked());
  EXPECT_EQ(t.pixels, opencv_gray(rgba, w, h, 4));
  // No alpha channel: no mask.
  std::vector<uint8_t> rgb = noise((size_t)w * h * 3, 7);
  test::write_png(f.path, w, h, 2, rgb);
  ASSERT_EQ(gst_cuda_prep_load_masked_template(f.path, "", kMax, &t), "");
  EXPECT_FALSE(t.masked());
  EXPECT_EQ(t.pixels, opencv_gray(rgb, w, h, 3));
}

// A palette PNG with a transparent colour (tRNS): that colour is out of the mask.
TEST(TemplateLoader, PaletteTransparencyGivesTheMask) {
  const int w = 8, h = 6;
  std::string rows;
  for (int y = 0; y < h; y++) {
    rows.push_back('\0');
    for (int x = 0; x < w; x++) rows.push_back((char)((x + y) % 3));
  }
  uLongf n = compressBound((uLong)rows.size());
  std::string idat(n, '\0');
  compress(reinterpret_cast<Bytef*>(&idat[0]), &n, reinterpret_cast<const Bytef*>(rows.data()), (uLong)rows.size());
  idat.resize(n);
  TempFile f("palette.png");
  {
    std::ofstream out(f.path, std::ios::binary);
    out.write("\x89PNG\r\n\x1a\n", 8);
    std::string ihdr;
    test::put_be32(&ihdr, w);
    test::put_be32(&ihdr, h);
    ihdr += std::string{8, 3, 0, 0, 0};
    test::png_chunk(out, "IHDR", ihdr);
    test::png_chunk(out, "PLTE", std::string("\x0a\x14\x1e\xc8\x64\x32\x00\xff\x00", 9));
    test::png_chunk(out, "tRNS", std::string("\x00\xff\x80", 3));  // colour 0 transparent, 2 half
    test::png_chunk(out, "IDAT", idat);
    test::png_chunk(out, "IEND", "");
  }
  cudaprep::MaskedGray t;
  ASSERT_EQ(gst_cuda_prep_load_masked_template(f.path, "", kMax, &t), "");
  ASSERT_TRUE(t.masked());
  const std::vector<uint8_t> palette = {10, 20, 30, 200, 100, 50, 0, 255, 0};
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int i = (x + y) % 3;
      EXPECT_EQ(t.mask[y * w + x], i == 0 ? 0 : 1) << x << "," << y;
      EXPECT_EQ(t.pixels[y * w + x], opencv_gray({palette[3 * i], palette[3 * i + 1], palette[3 * i + 2]}, 1, 1, 3)[0])
          << x << "," << y;
    }
}

// A separate mask file: gray > 0 counts; it replaces the template's alpha; its size must be the
// template's.
TEST(TemplateLoader, SeparateMaskFile) {
  const int w = 29, h = 19;
  std::vector<uint8_t> rgba = noise((size_t)w * h * 4, 8);
  for (int i = 0; i < w * h; i++) rgba[4 * i + 3] = 0;  // alpha would mask everything out
  TempFile t_file("masked.png"), m_file("mask.pgm");
  test::write_png(t_file.path, w, h, 6, rgba);
  std::vector<uint8_t> m(w * h);
  for (int i = 0; i < w * h; i++) m[i] = (uint8_t)(i % 5 == 0 ? 0 : i % 5);
  test::write_pnm(m_file.path, w, h, false, m);
  cudaprep::MaskedGray t;
  ASSERT_EQ(gst_cuda_prep_load_masked_template(t_file.path, m_file.path, kMax, &t), "");
  ASSERT_TRUE(t.masked());
  for (int i = 0; i < w * h; i++) ASSERT_EQ(t.mask[i], i % 5 == 0 ? 0 : 1) << i;
  EXPECT_EQ(t.pixels, opencv_gray(rgba, w, h, 4));

  // A PNG mask (RGB): its gray.
  TempFile png_mask("mask.png");
  std::vector<uint8_t> rgb_mask((size_t)w * h * 3, 0);
  for (int i = 0; i < w * h; i += 2) rgb_mask[3 * i + 1] = 255;
  test::write_png(png_mask.path, w, h, 2, rgb_mask);
  ASSERT_EQ(gst_cuda_prep_load_masked_template(t_file.path, png_mask.path, kMax, &t), "");
  for (int i = 0; i < w * h; i++) ASSERT_EQ(t.mask[i], i % 2 == 0 ? 1 : 0) << i;

  // Another size: both sizes and both files named.
  test::write_pnm(m_file.path, w + 1, h, false, std::vector<uint8_t>((size_t)(w + 1) * h, 1));
  std::string err = gst_cuda_prep_load_masked_template(t_file.path, m_file.path, kMax, &t);
  EXPECT_TRUE(contains(err, "30x19")) << err;
  EXPECT_TRUE(contains(err, "29x19")) << err;
  EXPECT_TRUE(contains(err, m_file.path)) << err;
  EXPECT_TRUE(contains(err, t_file.path)) << err;
  // Missing and oversize masks.
  err = gst_cuda_prep_load_masked_template(t_file.path, "/nonexistent/mask.png", kMax, &t);
  EXPECT_TRUE(contains(err, "mask file '/nonexistent/mask.png' does not exist")) << err;
  test::write_file(m_file.path, "P5 300 300 255\n" + std::string(90000, '\1'));
  err = gst_cuda_prep_load_masked_template(t_file.path, m_file.path, kMax, &t);
  EXPECT_TRUE(contains(err, "mask file '" + m_file.path + "' is 300x300 pixels")) << err;
}

// Corrupt and missing files: one error naming the file.
TEST(TemplateLoader, CorruptAndMissingFiles) {
  GrayImage img;
  std::string err = gst_cuda_prep_load_gray_image("/nonexistent/t.png", kMax, &img);
  EXPECT_EQ(err, "template file '/nonexistent/t.png' does not exist");
  err = gst_cuda_prep_load_gray_image(g_get_tmp_dir(), kMax, &img);
  EXPECT_TRUE(contains(err, "is not a regular file")) << err;

  struct Bad {
    const char* name;
    std::string bytes;
    const char* expected;
  };
  TempFile good("good.png");
  test::write_png(good.path, 20, 20, 0, noise(400, 9));
  std::string png = test::read_file(good.path);
  std::string corrupt_idat = png;
  for (size_t i = 45; i < corrupt_idat.size() - 20; i++) corrupt_idat[i] = (char)(corrupt_idat[i] ^ 0x5a);
  const std::vector<uint8_t> random_bytes = noise(3000, 10);
  const std::vector<Bad> bad = {
      {"sig.png", "\x89PNG\r\n\x1a\n this is not a png", "is not a valid PNG file: no IHDR header"},
      {"data.png", corrupt_idat, "could not decode template file"},
      {"short.jpg", std::string("\xff\xd8\xff\xe0\x00\x10JFIF", 10), "is not a valid JPEG file"},
      {"nosize.pgm", "P5\n# no size\n", "is not a valid PNM file: no size in its header"},
      {"empty.pgm", "P5 0 10 255\n", "is 0x10 pixels: an empty image"},
      {"random.bin", std::string(random_bytes.begin(), random_bytes.end()), "could not decode template file"},
      {"empty.png", "", "could not decode template file"},
  };
  for (const Bad& b : bad) {
    TempFile f(b.name);
    test::write_file(f.path, b.bytes);
    const auto t0 = std::chrono::steady_clock::now();
    err = gst_cuda_prep_load_gray_image(f.path, kMax, &img);
    EXPECT_TRUE(contains(err, b.expected)) << b.name << ": " << err;
    EXPECT_TRUE(contains(err, "'" + f.path + "'")) << b.name << ": " << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << b.name << ": " << err;
    EXPECT_LT(seconds_since(t0), 5.0) << b.name;
  }
}

// Loads run on several threads at once, each with its own decoder.
TEST(TemplateLoader, SeveralThreadsAtOnce) {
  const int w = 40, h = 30;
  std::vector<uint8_t> rgba = noise((size_t)w * h * 4, 11);
  TempFile f("threads.png");
  test::write_png(f.path, w, h, 6, rgba);
  cudaprep::MaskedGray expected;
  ASSERT_EQ(gst_cuda_prep_load_masked_template(f.path, "", kMax, &expected), "");
  std::vector<cudaprep::MaskedGray> got(6);
  std::vector<std::string> errors(6);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; i++)
    threads.emplace_back([&, i] { errors[i] = gst_cuda_prep_load_masked_template(f.path, "", kMax, &got[i]); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 6; i++) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(got[i].pixels, expected.pixels);
    EXPECT_EQ(got[i].mask, expected.mask);
  }
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
