// Unit tests of cudaprep-regress suite (regress_suite.h): the part a clip falls in, reading
// manifests, results files and their merge, JUnit XML and the HTML index on synthetic results
// (tests/regress/regress_suite.sh runs suites of real clips).
#include <glib.h>
#include <glib/gstdio.h>
#include <gtest/gtest.h>

#include <string>

#include "regress_store.h"
#include "regress_suite.h"

using namespace regress;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

struct TempDir {
  std::string path;
  TempDir() {
    gchar* p = g_dir_make_tmp("suite-unit-XXXXXX", nullptr);
    path = p;
    g_free(p);
  }
  ~TempDir() { remove_tree(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = path + "/" + name;
    std::string err;
    EXPECT_TRUE(write_file(p, text.data(), text.size(), &err)) << err;
    return p;
  }
};

ClipResult clip(const std::string& name, Verdict v, const std::string& message = "") {
  ClipResult c;
  c.name = name;
  c.clip = "/clips/" + name + ".mp4";
  c.golden = "goldens/" + name;
  c.verdict = v;
  c.message = message;
  c.seconds = 1.25;
  c.log = "clips/" + name + "/log.txt";
  c.html = "clips/" + name + "/html/index.html";
  return c;
}

}  // namespace

TEST(SuitePart, Fnv1a64KnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(SuitePart, ByNameOnlyEachOnce) {
  for (uint32_t n = 1; n <= 7; n++) {
    for (int i = 0; i < 200; i++) {
      const std::string name = "drive-" + std::to_string(i);
      const uint32_t p = suite_part(name, n);
      EXPECT_LT(p, n);
      EXPECT_EQ(p, (uint32_t)(fnv1a64(name) % n));
    }
  }
  // 200 names over 4 parts: none empty, none with most of them
  int count[4] = {0, 0, 0, 0};
  for (int i = 0; i < 200; i++) count[suite_part("drive-" + std::to_string(i), 4)]++;
  for (int c : count) {
    EXPECT_GT(c, 25);
    EXPECT_LT(c, 80);
  }
}

TEST(SuiteLoad, ManifestDefaultsOverridesAndCommandLine) {
  TempDir d;
  const std::string m = d.write("s.ini",
                                "[suite]\nname=cams\npipeline=P {clip}\ntensor-tol=max-abs=0.1\ntimeout=30\n"
                                "clips=data\n\n[clip b]\nfile=b.mp4\n\n[clip a/x]\nfile=x.mkv\npipeline=Q {clip}\n"
                                "tensor-tol=psnr=60\ntimeout=5\n");
  SuiteDefaults def;
  def.options["match-pos-tol"] = "0.5";
  def.options["tensor-tol"] = "exact";
  Suite s;
  std::string err;
  ASSERT_TRUE(load_suite(m, def, &s, &err)) << err;
  EXPECT_EQ(s.name, "cams");
  ASSERT_EQ(s.clips.size(), 2u);
  EXPECT_EQ(s.clips[0].name, "a/x");  // sorted by name
  EXPECT_EQ(s.clips[0].clip, d.path + "/data/x.mkv");
  EXPECT_EQ(s.clips[0].golden, d.path + "/goldens/a/x");
  EXPECT_EQ(s.clips[0].pipeline, "Q {clip}");
  EXPECT_EQ(s.clips[0].options["tensor-tol"], "psnr=60");  // the clip's own wins
  EXPECT_EQ(s.clips[0].options["match-pos-tol"], "0.5");
  EXPECT_EQ(s.clips[0].timeout_s, 5);
  EXPECT_EQ(s.clips[1].pipeline, "P {clip}");
  EXPECT_EQ(s.clips[1].options["tensor-tol"], "exact");  // the command line over [suite]
  EXPECT_EQ(s.clips[1].timeout_s, 30);
}

TEST(SuiteLoad, ManifestErrorsNameTheGroup) {
  TempDir d;
  const std::pair<std::string, std::string> cases[] = {
      {"[suite]\nbogus=1\n[clip a]\nfile=a.mp4\n", "[suite]: unknown key bogus"},
      {"[suite]\n[clip a]\nfil=a.mp4\n", "[clip a]: unknown key fil"},
      {"[suite]\n[clip a]\npipeline=x\n", "[clip a]: no file="},
      {"[suite]\n[clip ../a]\nfile=a.mp4\n", "[clip ../a]: a clip's name may hold"},
      {"[suite]\n[clip a b]\nfile=a.mp4\n", "[clip a b]: a clip's name may hold"},
      {"[suite]\n[clip a]\nfile=a.mp4\ntimeout=0x10\n", "[clip a] timeout=0x10"},
      {"[suite]\n[other]\n", "[other]: expected [suite] or [clip NAME]"},
      {"[suite]\nname=x\n", "no [clip NAME] group"},
      {"[clip a]\nfile=a.mp4\n", "no [suite] group"},
      {"not a key file\n", "s.ini: "},
  };
  for (const auto& [text, want] : cases) {
    const std::string m = d.write("s.ini", text);
    Suite s;
    std::string err;
    EXPECT_FALSE(load_suite(m, SuiteDefaults(), &s, &err)) << text;
    EXPECT_TRUE(contains(err, want)) << err << " lacks " << want;
  }
  Suite s;
  std::string err;
  EXPECT_FALSE(load_suite(d.path + "/none.ini", SuiteDefaults(), &s, &err));
  EXPECT_TRUE(contains(err, "No such file or directory")) << err;
}

TEST(SuiteResults, ExitCodeAndRoundTrip) {
  TempDir d;
  SuiteResults r;
  r.suite = "cams";
  r.command = "check";
  r.parts = 2;
  r.part_indices = {1};
  r.suite_clips = 5;
  r.clips = {clip("a", Verdict::kPass), clip("b", Verdict::kRegression, "first failing frame: 3")};
  EXPECT_EQ(r.exit_code(), 1);
  r.clips[0].flaky = true;
  r.clips[0].attempts = 2;
  std::string err;
  ASSERT_TRUE(results_to_file(r, d.path + "/r.json", &err)) << err;
  SuiteResults back;
  ASSERT_TRUE(results_from_file(d.path + "/r.json", &back, &err)) << err;
  EXPECT_EQ(back.suite, "cams");
  EXPECT_EQ(back.parts, 2u);
  ASSERT_EQ(back.part_indices.size(), 1u);
  EXPECT_EQ(back.part_indices[0], 1u);
  ASSERT_EQ(back.clips.size(), 2u);
  EXPECT_TRUE(back.clips[0].flaky);
  EXPECT_EQ(back.clips[0].attempts, 2);
  EXPECT_EQ(back.clips[1].verdict, Verdict::kRegression);
  EXPECT_EQ(back.clips[1].message, "first failing frame: 3");
  r.clips.push_back(clip("c", Verdict::kTimeout));
  EXPECT_EQ(r.exit_code(), 2);
  d.write("bad.json", "{\"suite\": 1}");
  EXPECT_FALSE(results_from_file(d.path + "/bad.json", &back, &err));
  EXPECT_TRUE(contains(err, "not a results file")) << err;
}

TEST(SuiteResults, MergeRefusesMixedRunsAndDuplicates) {
  SuiteResults a, b;
  a.suite = b.suite = "cams";
  a.command = b.command = "check";
  a.parts = b.parts = 2;
  a.suite_clips = b.suite_clips = 3;
  a.part_indices = {0};
  b.part_indices = {1};
  a.clips = {clip("x", Verdict::kPass), clip("z", Verdict::kPass)};
  b.clips = {clip("y", Verdict::kCrash)};
  SuiteResults m;
  std::string err;
  ASSERT_TRUE(merge_results({b, a}, &m, &err)) << err;
  ASSERT_EQ(m.clips.size(), 3u);
  EXPECT_EQ(m.clips[1].name, "y");  // sorted by name
  EXPECT_EQ(m.exit_code(), 2);
  EXPECT_FALSE(merge_results({a, a}, &m, &err));
  EXPECT_TRUE(contains(err, "part 0 is given twice")) << err;
  SuiteResults c = b;
  c.part_indices = {1};
  c.clips = {clip("x", Verdict::kPass)};
  SuiteResults a2 = a;
  EXPECT_FALSE(merge_results({a2, c}, &m, &err));
  EXPECT_TRUE(contains(err, "clip x is given twice")) << err;
  c = b;
  c.suite = "other";
  EXPECT_FALSE(merge_results({a, c}, &m, &err));
  EXPECT_TRUE(contains(err, "not of the same suite run")) << err;
  c = b;
  c.parts = 3;
  EXPECT_FALSE(merge_results({a, c}, &m, &err));
}

TEST(SuiteReports, JunitEscapesAndCounts) {
  SuiteResults r;
  r.suite = "cams <&>";
  r.command = "check";
  r.clips = {clip("a", Verdict::kRegression, "first failing frame: 7 \"x\" <y> \x01 \xff"),
             clip("b", Verdict::kSetupError, "no clip"), clip("c", Verdict::kPass)};
  const std::string x = junit_xml(r, "../out/");
  EXPECT_TRUE(contains(x, "tests=\"3\" failures=\"1\" errors=\"1\"")) << x;
  EXPECT_TRUE(contains(x, "classname=\"cams &lt;&amp;&gt;\""));
  EXPECT_TRUE(contains(x,
                       "<failure type=\"regression\" message=\"regression: first failing frame: 7 &quot;x&quot; "
                       "&lt;y&gt;   \xef\xbf\xbd\""))
      << x;
  EXPECT_TRUE(contains(x, "<error type=\"setup-error\""));
  EXPECT_TRUE(contains(x, "report: ../out/clips/a/html/index.html"));
  EXPECT_FALSE(contains(x, "\x01"));
}

TEST(SuiteReports, HtmlIndexWorstFirst) {
  SuiteResults r;
  r.suite = "cams";
  r.command = "check";
  r.clips = {clip("a", Verdict::kPass), clip("b", Verdict::kRegression), clip("c", Verdict::kCrash),
             clip("d", Verdict::kPass), clip("e", Verdict::kTimeout)};
  r.clips[3].flaky = true;
  r.clips[1].html = "clips/b b/html/index.html";
  const std::string h = html_index(r);
  const size_t c = h.find("data-clip=\"c\""), e = h.find("data-clip=\"e\""), b = h.find("data-clip=\"b\""),
               d = h.find("data-clip=\"d\""), a = h.find("data-clip=\"a\"");
  EXPECT_TRUE(c < e && e < b && b < d && d < a) << h;
  EXPECT_TRUE(contains(h, "href=\"clips/b%20b/html/index.html\""));
  EXPECT_TRUE(contains(h, "pass (flaky)"));
  EXPECT_TRUE(
      contains(results_summary(r), "5 clips: 2 pass (1 flaky), 1 regression, 0 setup error, 1 timeout, 1 crash"));
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
