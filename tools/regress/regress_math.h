// cudaprep-regress: the comparison maths (no GStreamer here, unit-tested on synthetic data).
//
// Tensors are compared element by element in double precision:
//   max abs diff = max |a - b|
//   PSNR         = 10 * log10(peak^2 / MSE), peak = max - min of the reference (the golden, or
//                  the first set of `compare`), 1 where that range is 0; +inf when MSE = 0.
// A NaN against a number counts as an infinite difference; two NaNs (any payload) as equal.
// Exact comparison is bitwise: the SHA-256 of the bytes must agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX (openssl/evp.h)

namespace regress {

enum class DType { F32, F16, F64, U8, I8, U16, I16, I32, U32, I64, U64 };

// NNStreamer's type names ("float32", "float16", "uint8", ...).
bool dtype_from_name(const std::string& name, DType* out);
const char* dtype_name(DType t);
const char* dtype_ext(DType t);  // file extension: f32, f16, f64, u8, ...
size_t dtype_size(DType t);
float half_to_float(uint16_t h);
// Element i of little-endian data as a double.
double element_value(const uint8_t* data, DType t, size_t i);

struct TensorStats {
  uint64_t count = 0;      // elements
  uint64_t nonfinite = 0;  // NaN / inf elements, left out of min, max, mean and L2
  double min = 0, max = 0, mean = 0, l2 = 0;
};
// Sequential accumulation in double: deterministic for the same bytes.
TensorStats tensor_stats(const uint8_t* data, size_t bytes, DType t);

// tensor_stats over elements fed in pieces: add() any number of times (whole elements, in
// order), then finish(). The result equals tensor_stats over all the elements at once, to the
// bit: the same operations in the same order (tensor_stats is this with one add()).
class StatsAccumulator {
 public:
  explicit StatsAccumulator(DType t) : type_(t) {}
  // `count` elements of the accumulator's type at `data` (no alignment needed).
  void add(const uint8_t* data, size_t count);
  TensorStats finish() const;

 private:
  template <typename Load>
  void add_with(const uint8_t* data, size_t n, bool may_be_nonfinite, Load load);
  template <typename T>
  void add_as(const uint8_t* data, size_t n);

  DType type_;
  bool started_ = false;  // a finite element has started min and max
  uint64_t count_ = 0, nonfinite_ = 0;
  double sum_ = 0, sum_sq_ = 0, lo_ = 0, hi_ = 0;
};

// SHA-256 through OpenSSL's libcrypto (its code uses the CPU's SHA instructions where there are
// some). Lowercase hex.
std::string sha256_hex(const uint8_t* data, size_t bytes);

// SHA-256 of bytes fed in pieces: update() any number of times, then hex(), which ends it.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const uint8_t* data, size_t bytes);
  // The digest of everything fed since the start (or the last hex()), as sha256_hex gives it;
  // the object then starts over.
  std::string hex();

 private:
  evp_md_ctx_st* ctx_;
};

struct TensorDiff {
  bool same_size = true;
  bool identical = true;     // bitwise
  uint64_t count = 0;        // elements compared
  uint64_t differing = 0;    // elements whose values differ
  double max_abs = 0;        // over elements
  uint64_t worst_index = 0;  // element of max_abs
  double sum_sq = 0;         // sum of squared differences (inf when a NaN meets a number)
  double peak = 1;           // reference range used for PSNR
  double psnr = 0;           // dB; +inf when identical in value
};
// `ref` is the reference (golden). Sizes must match for figures; otherwise same_size=false.
TensorDiff diff_tensors(const uint8_t* ref, size_t ref_bytes, const uint8_t* run, size_t run_bytes, DType t);
double psnr_db(double sum_sq, uint64_t count, double peak);
// peak from a reference's range
double psnr_peak(double min, double max);

struct TensorTolerance {
  enum Kind { Exact, MaxAbs, Psnr } kind = Exact;
  double value = 0;
  std::string text() const;  // "exact", "max-abs=1e-05", "psnr=60"
};
// A plain decimal number: optional sign, digits with an optional fraction, an optional decimal
// exponent ("0.5", "1e-5", ".25", "60"). No hex ("0x10", "0x1p-3"), no "inf" / "nan", no
// surrounding spaces, nothing after it; the value must be finite.
bool parse_decimal(const std::string& text, double* out);
// "exact" | "max-abs=X" (X >= 0) | "psnr=DB" (DB > 0), numbers as parse_decimal takes them
bool parse_tensor_tolerance(const std::string& s, TensorTolerance* out, std::string* error);
// Whether a diff with full data passes the tolerance.
bool tensor_diff_passes(const TensorDiff& d, const TensorTolerance& tol);
// Why a diff with full data fails the tolerance ("max abs diff 0.5 > tolerance 0.1"), "" if it passes.
std::string tensor_diff_failure(const TensorDiff& d, const TensorTolerance& tol);

// The label of a match from a single template (template-location, template-rect), and of the
// matches of recordings made before matches carried their template's label.
inline constexpr const char* kSingleTemplateLabel = "template-match";

struct MatchRec {
  int x = 0, y = 0, w = 0, h = 0;  // integer box of the ROI meta
  double score = 0;
  double sub_x = 0, sub_y = 0;               // sub-pixel top-left ("template-match" param x, y)
  std::string label = kSingleTemplateLabel;  // the template's label ("template" param, else the roi-type)
  double scale = 1, angle = 0;               // the bank member that matched
  bool full_search = true;                   // found by a full search (not a tracking window)
};

struct MatchPair {
  int ref = -1, run = -1;       // indices into the two lists
  double dpos = 0;              // Euclidean distance of the sub-pixel positions
  double dscore = 0;            // |score difference|
  bool member_changed = false;  // another scale or angle of the same template
  bool full_changed = false;    // full-search differs
};
// One template's part of a frame's comparison.
struct TemplateMatchDiff {
  std::string label;
  size_t n_ref = 0, n_run = 0;
  size_t pairs = 0, member_changes = 0, full_changes = 0;
  double max_dpos = 0, max_dscore = 0;
};
struct MatchDiff {
  size_t n_ref = 0, n_run = 0;
  std::vector<MatchPair> pairs;  // greedy nearest pairs within each template, in reference order
  double max_dpos = 0, max_dscore = 0;
  std::vector<TemplateMatchDiff> templates;  // every label of either side, in label order
  // Whether the only template is the single, unlabelled one ("template-match").
  bool single_template() const;
};
// Pairs the matches of one frame by position, within each template label (whatever their
// scale and angle): all (ref, run) pairs of a label sorted by distance (ties by indices), taken
// greedily; what is left unpaired shows in the template's counts. A pair whose scale or angle
// differs counts as a member change, one whose full-search flag differs as a full-search change.
MatchDiff diff_matches(const std::vector<MatchRec>& ref, const std::vector<MatchRec>& run);
// Every template with the same count on both sides, no member or full-search change, and the
// positions and scores within the tolerances.
bool match_diff_passes(const MatchDiff& d, double pos_tol, double score_tol);

// Shortest text that reads back to the same double ("0.1", "1e-05", "3"); "nan", "inf",
// "-inf" for the non-finite.
std::string format_double(double v);
// Fixed, human-friendly: "%.*g" with `digits` significant digits ("inf" for +inf).
std::string format_short(double v, int digits = 6);
// "0:00:01.500000000" or "none"
std::string format_time(int64_t ns);

}  // namespace regress
