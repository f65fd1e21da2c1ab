// Bank descriptions (key files, lists of files) and the banks built from them: every key, the
// defaults, ranges, errors naming the file, group and key, the limits (counts named), members in
// the order template, scale, angle equal to scale_template then rotate_template (each checked
// against OpenCV in test_template_resample) and to cv::resize on the decoded file, and building
// on several threads at once.
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "image_files.h"
#include "template_bank_spec.h"
#include "template_resample.h"
#include "templatematch.h"

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A temporary directory with the bank's files; removed with everything in it.
struct Dir {
  std::string path;
  std::vector<std::string> files;
  Dir() {
    gchar* p = g_dir_make_tmp("cudaprep-bank-XXXXXX", nullptr);
    path = p;
    g_free(p);
  }
  ~Dir() {
    for (auto f = files.rbegin(); f != files.rend(); ++f) g_remove(f->c_str());  // files, then their folders
    g_rmdir(path.c_str());
  }
  void make_dir(const std::string& name) {
    g_mkdir((path + "/" + name).c_str(), 0700);
    files.push_back(path + "/" + name);
  }
  std::string file(const std::string& name) {
    files.push_back(path + "/" + name);
    return files.back();
  }
  // A textured gray template (PGM).
  std::string pgm(const std::string& name, int w, int h, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> px((size_t)w * h);
    for (auto& v : px) v = (uint8_t)(rng() & 255);
    std::string p = file(name);
    test::write_pnm(p, w, h, false, px);
    return p;
  }
  std::string text(const std::string& name, const std::string& contents) {
    std::string p = file(name);
    test::write_file(p, contents);
    return p;
  }
};

std::vector<double> v(std::initializer_list<double> l) { return l; }

}  // namespace

TEST(BankSpec, KeyFileEveryKey) {
  Dir d;
  d.pgm("logo.pgm", 20, 16, 1);
  d.pgm("sign.pgm", 12, 12, 2);
  d.pgm("sign-mask.pgm", 12, 12, 3);
  d.make_dir("sub");
  d.pgm("sub/icon.pgm", 8, 8, 4);
  const std::string bank = d.text("bank.ini",
                                  "# a bank\n"
                                  "[logo]\n"
                                  "file=logo.pgm\n"
                                  "threshold=0.75\n"
                                  "max-matches=3\n"
                                  "scales=0.8;1.0;1.25\n"
                                  "angles=-10;0;10\n"
                                  "track-margin=24\n"
                                  "\n"
                                  "[stop sign]\n"
                                  "file = sign.pgm\n"
                                  "mask = sign-mask.pgm\n"
                                  "scale-range=0.8;1.2;0.1\n"
                                  "angle-range=-30;30;15\n"
                                  "track-margin-templates=1.5\n"
                                  "[icon]\n"
                                  "file=sub/icon.pgm\n");
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_parse_bank_file(bank, &specs), "");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].label, "logo");
  EXPECT_EQ(specs[0].file, d.path + "/logo.pgm");
  EXPECT_EQ(specs[0].mask, "");
  EXPECT_EQ(specs[0].threshold, 0.75);
  EXPECT_EQ(specs[0].max_matches, 3);
  EXPECT_EQ(specs[0].scales, v({0.8, 1.0, 1.25}));
  EXPECT_EQ(specs[0].angles, v({-10, 0, 10}));
  ASSERT_TRUE(specs[0].track_margin.has_value());
  double mx, my;
  specs[0].track_margin->pixels(20, 16, &mx, &my);
  EXPECT_EQ(mx, 24);
  EXPECT_EQ(my, 24);

  EXPECT_EQ(specs[1].label, "stop sign");
  EXPECT_EQ(specs[1].file, d.path + "/sign.pgm");
  EXPECT_EQ(specs[1].mask, d.path + "/sign-mask.pgm");
  EXPECT_FALSE(specs[1].threshold.has_value());
  EXPECT_FALSE(specs[1].max_matches.has_value());
  EXPECT_EQ(specs[1].scales, v({0.8, 0.9, 1.0, 1.1, 1.2}));  // exact: rounded to 9 decimals
  EXPECT_EQ(specs[1].angles, v({-30, -15, 0, 15, 30}));
  ASSERT_TRUE(specs[1].track_margin.has_value());
  specs[1].track_margin->pixels(12, 10, &mx, &my);
  EXPECT_EQ(mx, 18);
  EXPECT_EQ(my, 15);

  EXPECT_EQ(specs[2].label, "icon");
  EXPECT_EQ(specs[2].file, d.path + "/sub/icon.pgm");
  EXPECT_FALSE(specs[2].scales.has_value());
  EXPECT_FALSE(specs[2].angles.has_value());
  EXPECT_FALSE(specs[2].track_margin.has_value());

  // Built: 9 + 25 + 1 members, in the order template, scale, angle; defaults where unset.
  BankDefaults defaults;
  defaults.threshold = 0.6;
  defaults.max_matches = 2;
  cudaprep::TemplateBank b;
  std::string error;
  ASSERT_TRUE(gst_cuda_prep_build_template_bank(specs, defaults, &b, &error)) << error;
  ASSERT_EQ(b.templates.size(), 3u);
  EXPECT_EQ(b.templates[0].label, "logo");
  EXPECT_EQ(b.templates[0].threshold, 0.75);
  EXPECT_EQ(b.templates[0].max_matches, 3);
  EXPECT_TRUE(b.templates[0].own_threshold);
  EXPECT_TRUE(b.templates[0].own_max_matches);
  EXPECT_EQ(b.templates[1].threshold, 0.6);
  EXPECT_EQ(b.templates[1].max_matches, 2);
  EXPECT_FALSE(b.templates[1].own_threshold);
  EXPECT_FALSE(b.templates[1].own_max_matches);
  ASSERT_EQ(b.members.size(), 9u + 25u + 1u);
  EXPECT_EQ(b.members[0].scale, 0.8);
  EXPECT_EQ(b.members[0].angle, -10);
  EXPECT_EQ(b.members[1].angle, 0);
  EXPECT_EQ(b.members[3].scale, 1.0);
  EXPECT_EQ(b.members[8].template_index, 0);
  EXPECT_EQ(b.members[9].template_index, 1);
  EXPECT_EQ(b.members[34].template_index, 2);
  EXPECT_EQ(b.members[34].image.width, 8);
  // Members with a mask: the sign's, and every rotated one.
  EXPECT_TRUE(b.members[9].image.masked());
  EXPECT_TRUE(b.members[0].image.masked());   // rotated by -10
  EXPECT_FALSE(b.members[4].image.masked());  // logo at 1.0, 0 degrees
}

// The key file docs/template-bank.md shows parses to what the page says.
TEST(BankSpec, DocumentedExample) {
  const std::string page = test::read_file(std::string(TEST_SOURCE_DIR) + "/../docs/template-bank.md");
  const size_t begin = page.find("```ini\n");
  ASSERT_NE(begin, std::string::npos);
  const size_t end = page.find("```", begin + 7);
  ASSERT_NE(end, std::string::npos);
  Dir d;
  for (const char* sub : {"signs", "icons"}) d.make_dir(sub);
  for (const char* f : {"logo.png", "signs/stop.jpg", "signs/stop-mask.png", "icons/icon.pgm"}) d.text(f, "");
  const std::string bank = d.text("bank.ini", page.substr(begin + 7, end - begin - 7));
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_parse_bank_file(bank, &specs), "");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].label, "logo");
  EXPECT_EQ(specs[0].file, d.path + "/logo.png");
  EXPECT_EQ(specs[0].threshold, 0.75);
  EXPECT_EQ(specs[0].max_matches, 3);
  EXPECT_EQ(specs[0].scales, v({0.8, 1.0, 1.25}));
  EXPECT_EQ(specs[0].angles, v({-10, 0, 10}));
  EXPECT_EQ(specs[0].track_margin->unit, TrackMargin::Unit::kPixels);
  EXPECT_EQ(specs[0].track_margin->value, 24);
  EXPECT_EQ(specs[1].label, "stop sign");
  EXPECT_EQ(specs[1].mask, d.path + "/signs/stop-mask.png");
  EXPECT_EQ(specs[1].scales, v({0.8, 0.9, 1.0, 1.1, 1.2}));
  EXPECT_EQ(specs[1].angles, v({-30, -15, 0, 15, 30}));
  EXPECT_EQ(specs[1].track_margin->unit, TrackMargin::Unit::kTemplateSizes);
  EXPECT_EQ(specs[1].track_margin->value, 1.5);
  EXPECT_EQ(specs[2].file, d.path + "/icons/icon.pgm");
}

// Each member is the loaded template scaled, then rotated; at angle 0 the scaling is cv::resize's.
TEST(BankSpec, MembersAreScaledThenRotated) {
  Dir d;
  const std::string file = d.pgm("t.pgm", 31, 23, 5);
  std::vector<TemplateSpec> specs(1);
  specs[0].label = "t";
  specs[0].file = file;
  specs[0].scales = v({0.55, 1.0, 1.7});
  specs[0].angles = v({0, 12.5, -90});
  cudaprep::TemplateBank b;
  std::string error;
  ASSERT_TRUE(gst_cuda_prep_build_template_bank(specs, BankDefaults(), &b, &error)) << error;
  ASSERT_EQ(b.members.size(), 9u);
  std::mt19937 rng(5);
  cudaprep::MaskedGray src;
  src.width = 31;
  src.height = 23;
  for (int i = 0; i < 31 * 23; i++) src.pixels.push_back((uint8_t)(rng() & 255));
  cv::Mat src_mat(23, 31, CV_8UC1, src.pixels.data());
  int k = 0;
  for (double s : {0.55, 1.0, 1.7}) {
    cudaprep::MaskedGray scaled;
    ASSERT_TRUE(cudaprep::scale_template(src, s, &scaled).ok());
    cv::Mat resized;
    cv::resize(src_mat, resized, cv::Size(scaled.width, scaled.height), 0, 0,
               s < 1 ? cv::INTER_AREA : cv::INTER_LINEAR);
    for (double a : {0.0, 12.5, -90.0}) {
      cudaprep::MaskedGray expected;
      ASSERT_TRUE(cudaprep::rotate_template(scaled, a, &expected).ok());
      const cudaprep::BankMember& m = b.members[k++];
      EXPECT_EQ(m.scale, s);
      EXPECT_EQ(m.angle, a);
      EXPECT_EQ(m.image.width, expected.width);
      EXPECT_EQ(m.image.height, expected.height);
      EXPECT_EQ(m.image.pixels, expected.pixels) << s << " " << a;
      EXPECT_EQ(m.image.mask, expected.mask) << s << " " << a;
      if (a == 0) {
        EXPECT_EQ(m.image.pixels, std::vector<uint8_t>(resized.data, resized.data + resized.total())) << s;
      }
    }
  }
}

// Every bad key file: one error naming the file, the group and the key.
TEST(BankSpec, KeyFileErrorsNameFileGroupAndKey) {
  Dir d;
  d.pgm("a.pgm", 10, 10, 1);
  struct Bad {
    std::string body, group, key, what;
  };
  const std::vector<Bad> bad = {
      {"[a]\nfile=a.pgm\ncolour=red\n", "[a]", "'colour'", "unknown key"},
      {"[a]\nfile=a.pgm\nthreshold=high\n", "[a]", "'threshold'", "'high' is not a number"},
      {"[a]\nfile=a.pgm\nthreshold=1.5\n", "[a]", "'threshold'", "not in -1..1"},
      {"[a]\nfile=a.pgm\nmax-matches=0\n", "[a]", "'max-matches'", "not in 1..64"},
      {"[a]\nfile=a.pgm\nmax-matches=2.5\n", "[a]", "'max-matches'", "not a whole number"},
      {"[a]\nfile=a.pgm\nscales=0.5;big\n", "[a]", "'scales'", "'big' is not a number"},
      {"[a]\nfile=a.pgm\nscales=1;0.5;1\n", "[a]", "'scales'", "1 is listed twice"},
      {"[a]\nfile=a.pgm\nscales=-1\n", "[a]", "'scales'", "not above 0"},
      {"[a]\nfile=a.pgm\nscales=\n", "[a]", "'scales'", "an empty list"},
      {"[a]\nfile=a.pgm\nscale-range=1.2;0.8;0.1\n", "[a]", "'scale-range'", "below the smallest"},
      {"[a]\nfile=a.pgm\nscale-range=0.8;1.2\n", "[a]", "'scale-range'", "not min;max;step"},
      {"[a]\nfile=a.pgm\nangle-range=-10;10;0\n", "[a]", "'angle-range'", "step 0 is not above 0"},
      {"[a]\nfile=a.pgm\nangle-range=0;360;0.001\n", "[a]", "'angle-range'", "360001 values"},
      {"[a]\nfile=a.pgm\nscales=1\nscale-range=1;2;1\n", "[a]", "'scale-range'", "not both"},
      {"[a]\nfile=a.pgm\ntrack-margin=-3\n", "[a]", "'track-margin'", "below 0"},
      {"[a]\nfile=a.pgm\ntrack-margin=3\ntrack-margin-templates=1\n", "[a]", "'track-margin-templates'", "not both"},
      {"[a]\nfile=missing.pgm\n", "[a]", "'file'", "missing.pgm' does not exist"},
      {"[a]\nfile=a.pgm\nmask=nomask.pgm\n", "[a]", "'mask'", "nomask.pgm' does not exist"},
      {"[a]\nfile=.\n", "[a]", "'file'", "is not a regular file"},
      {"[a]\nthreshold=0.5\n", "[a]", "", "no 'file' key"},
      {"[a]\nfile=a.pgm\n[b]\nfile=a.pgm\n[a]\nfile=a.pgm\n", "[a]", "", "the group appears twice"},
      {"[a]\nfile=a.pgm\nfile=a.pgm\n", "[a]", "'file'", "the key appears twice"},
  };
  for (const Bad& b : bad) {
    const std::string path = d.text("bad.ini", b.body);
    std::vector<TemplateSpec> specs;
    const std::string err = gst_cuda_prep_parse_bank_file(path, &specs);
    EXPECT_TRUE(contains(err, "bank file '" + path + "'")) << b.body << "-> " << err;
    EXPECT_TRUE(contains(err, "group " + b.group)) << b.body << "-> " << err;
    if (!b.key.empty()) {
      EXPECT_TRUE(contains(err, "key " + b.key)) << b.body << "-> " << err;
    }
    EXPECT_TRUE(contains(err, b.what)) << b.body << "-> " << err;
    EXPECT_TRUE(specs.empty());
  }
  // The file itself: missing, not a key file, no group, too many groups.
  std::vector<TemplateSpec> specs;
  std::string err = gst_cuda_prep_parse_bank_file(d.path + "/none.ini", &specs);
  EXPECT_TRUE(contains(err, "bank file '" + d.path + "/none.ini'")) << err;
  err = gst_cuda_prep_parse_bank_file(d.text("syntax.ini", "file=a.pgm\n"), &specs);
  EXPECT_TRUE(contains(err, "syntax.ini'")) << err;
  err = gst_cuda_prep_parse_bank_file(d.text("empty.ini", "# nothing\n"), &specs);
  EXPECT_TRUE(contains(err, "no template")) << err;
  std::string many;
  for (int i = 0; i < 65; i++) many += "[t" + std::to_string(i) + "]\nfile=a.pgm\n";
  err = gst_cuda_prep_parse_bank_file(d.text("many.ini", many), &specs);
  EXPECT_TRUE(contains(err, "65 templates")) << err;
  EXPECT_TRUE(contains(err, "at most 64")) << err;
}

TEST(BankSpec, ListOfFiles) {
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_bank_specs_from_files({"/x/logo.png", "sign.v2.pgm", "plain"}, &specs), "");
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].label, "logo");
  EXPECT_EQ(specs[0].file, "/x/logo.png");
  EXPECT_EQ(specs[1].label, "sign.v2");
  EXPECT_EQ(specs[2].label, "plain");
  EXPECT_FALSE(specs[0].scales.has_value());
  EXPECT_FALSE(specs[0].threshold.has_value());

  std::string err = gst_cuda_prep_bank_specs_from_files({"/a/logo.png", "/b/logo.jpg"}, &specs);
  EXPECT_TRUE(contains(err, "'/a/logo.png'")) << err;
  EXPECT_TRUE(contains(err, "'/b/logo.jpg'")) << err;
  EXPECT_TRUE(contains(err, "\"logo\"")) << err;
  EXPECT_NE(gst_cuda_prep_bank_specs_from_files({}, &specs), "");
  EXPECT_NE(gst_cuda_prep_bank_specs_from_files({""}, &specs), "");
  std::vector<std::string> many;
  for (int i = 0; i < 65; i++) many.push_back("t" + std::to_string(i) + ".png");
  EXPECT_TRUE(contains(gst_cuda_prep_bank_specs_from_files(many, &specs), "65 templates"));
}

// Element-wide scales and angles apply to every template of a list.
TEST(BankSpec, DefaultsApplyToAList) {
  Dir d;
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_bank_specs_from_files({d.pgm("a.pgm", 16, 16, 1), d.pgm("b.pgm", 24, 20, 2)}, &specs), "");
  BankDefaults defaults;
  defaults.scales = {0.5, 1.0};
  defaults.angles = {0, 45, 90};
  defaults.threshold = 0.7;
  defaults.max_matches = 5;
  cudaprep::TemplateBank b;
  std::string error;
  ASSERT_TRUE(gst_cuda_prep_build_template_bank(specs, defaults, &b, &error)) << error;
  ASSERT_EQ(b.members.size(), 12u);
  EXPECT_EQ(b.templates[1].label, "b");
  EXPECT_EQ(b.templates[1].threshold, 0.7);
  EXPECT_EQ(b.templates[1].max_matches, 5);
  EXPECT_EQ(b.members[6].template_index, 1);
  EXPECT_EQ(b.members[6].scale, 0.5);
  EXPECT_EQ(b.members[6].image.width, 12);
  EXPECT_EQ(b.members[8].angle, 90);
  EXPECT_EQ(b.members[8].image.width, 10);  // 12x10 turned
  EXPECT_EQ(b.members[8].image.height, 12);
}

TEST(BankSpec, BuildErrors) {
  Dir d;
  const std::string a = d.pgm("a.pgm", 20, 10, 1);
  std::string error;
  cudaprep::TemplateBank b;
  auto build = [&](std::vector<TemplateSpec> specs, BankDefaults defaults = BankDefaults()) {
    error.clear();
    EXPECT_FALSE(gst_cuda_prep_build_template_bank(specs, defaults, &b, &error));
    return error;
  };
  auto spec = [&](const std::string& label, const std::string& file) {
    TemplateSpec s;
    s.label = label;
    s.file = file;
    return s;
  };
  // Limits, with the counts.
  std::vector<TemplateSpec> many;
  for (int i = 0; i < 65; i++) many.push_back(spec("t" + std::to_string(i), a));
  EXPECT_TRUE(contains(build(many), "65 templates")) << error;
  std::vector<TemplateSpec> big(2, spec("x", a));
  big[1].label = "y";
  BankDefaults wide;
  wide.angles.clear();
  for (int i = 0; i < 129; i++) wide.angles.push_back(i);  // 2 x 129 members
  EXPECT_TRUE(contains(build(big, wide), "258 members")) << error;
  EXPECT_TRUE(contains(error, "at most 256")) << error;
  // A scale that makes the template too small or too large: size, scale, limit and label.
  std::vector<TemplateSpec> one{spec("small", a)};
  one[0].scales = v({1.0, 0.3});
  EXPECT_TRUE(contains(build(one), "template \"small\"")) << error;
  EXPECT_TRUE(contains(error, "6x3")) << error;
  EXPECT_TRUE(contains(error, "0.3")) << error;
  EXPECT_TRUE(contains(error, "at least 4x4")) << error;
  one[0].scales = v({13});
  EXPECT_TRUE(contains(build(one), "260x130")) << error;
  EXPECT_TRUE(contains(error, "at most 256x256")) << error;
  // Duplicate labels, missing files, masks.
  EXPECT_TRUE(contains(build({spec("same", a), spec("same", a)}), "\"same\"")) << error;
  EXPECT_TRUE(contains(build({spec("gone", d.path + "/gone.pgm")}), "does not exist")) << error;
  EXPECT_TRUE(contains(error, "gone.pgm")) << error;
  TemplateSpec masked = spec("masked", a);
  masked.mask = d.pgm("m.pgm", 21, 10, 3);
  EXPECT_TRUE(contains(build({masked}), "21x10")) << error;
  EXPECT_TRUE(contains(error, "20x10")) << error;
  masked.mask = d.file("zero.pgm");
  test::write_pnm(masked.mask, 20, 10, false, std::vector<uint8_t>(200, 0));
  EXPECT_TRUE(contains(build({masked}), "\"masked\"")) << error;
  EXPECT_TRUE(contains(error, "all zero")) << error;
  const std::string flat = d.file("flat.pgm");
  test::write_pnm(flat, 20, 10, false, std::vector<uint8_t>(200, 77));
  EXPECT_TRUE(contains(build({spec("flat", flat)}), "no variance")) << error;
  EXPECT_TRUE(contains(error, "\"flat\"")) << error;
  EXPECT_TRUE(b.members.empty());  // untouched on errors

  // From a key file, the error names the file, the group and the key that asked for the scale.
  const std::string ini = d.text("scaled.ini", "[tiny]\nfile=a.pgm\nscale-range=0.3;0.5;0.1\n");
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_parse_bank_file(ini, &specs), "");
  EXPECT_TRUE(contains(build(specs), "bank file '" + ini + "', group [tiny], key 'scale-range': ")) << error;
  EXPECT_TRUE(contains(error, "6x3")) << error;
}

// Banks built on several threads at once are the same.
TEST(BankSpec, BuildsOnSeveralThreads) {
  Dir d;
  std::vector<TemplateSpec> specs;
  ASSERT_EQ(gst_cuda_prep_bank_specs_from_files({d.pgm("a.pgm", 30, 20, 1), d.pgm("b.pgm", 17, 25, 2)}, &specs), "");
  BankDefaults defaults;
  defaults.scales = {0.75, 1.0, 1.5};
  defaults.angles = {-20, 0, 20};
  cudaprep::TemplateBank expected;
  std::string error;
  ASSERT_TRUE(gst_cuda_prep_build_template_bank(specs, defaults, &expected, &error)) << error;
  std::vector<cudaprep::TemplateBank> banks(4);
  std::vector<std::thread> threads;
  std::vector<int> ok(4);
  for (int i = 0; i < 4; i++)
    threads.emplace_back([&, i] {
      std::string e;
      ok[i] = gst_cuda_prep_build_template_bank(specs, defaults, &banks[i], &e);
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; i++) {
    ASSERT_TRUE(ok[i]);
    ASSERT_EQ(banks[i].members.size(), expected.members.size());
    for (size_t m = 0; m < expected.members.size(); m++) {
      EXPECT_EQ(banks[i].members[m].image.pixels, expected.members[m].image.pixels);
      EXPECT_EQ(banks[i].members[m].image.mask, expected.members[m].image.mask);
    }
  }
}

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
