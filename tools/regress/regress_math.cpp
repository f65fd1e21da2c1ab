#include "regress_math.h"

#include <glib.h>
#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

namespace regress {

namespace {

struct DTypeInfo {
  DType type;
  const char* name;
  const char* ext;
  size_t size;
};

const DTypeInfo kTypes[] = {
    {DType::F32, "float32", "f32", 4}, {DType::F16, "float16", "f16", 2}, {DType::F64, "float64", "f64", 8},
    {DType::U8, "uint8", "u8", 1},     {DType::I8, "int8", "i8", 1},      {DType::U16, "uint16", "u16", 2},
    {DType::I16, "int16", "i16", 2},   {DType::I32, "int32", "i32", 4},   {DType::U32, "uint32", "u32", 4},
    {DType::I64, "int64", "i64", 8},   {DType::U64, "uint64", "u64", 8},
};

const DTypeInfo& info(DType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];
}

template <typename T>
T load_le(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof(T));  // the supported platforms (x86-64, aarch64) are little-endian
  return v;
}

}  // namespace

bool dtype_from_name(const std::string& name, DType* out) {
  for (const auto& i : kTypes)
    if (name == i.name) {
      *out = i.type;
      return true;
    }
  return false;
}
const char* dtype_name(DType t) { return info(t).name; }
const char* dtype_ext(DType t) { return info(t).ext; }
size_t dtype_size(DType t) { return info(t).size; }

float half_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        e++;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (uint32_t)(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

double element_value(const uint8_t* data, DType t, size_t i) {
  const uint8_t* p = data + i * dtype_size(t);
  switch (t) {
    case DType::F32: return load_le<float>(p);
    case DType::F16: return half_to_float(load_le<uint16_t>(p));
    case DType::F64: return load_le<double>(p);
    case DType::U8: return *p;
    case DType::I8: return (int8_t)*p;
    case DType::U16: return load_le<uint16_t>(p);
    case DType::I16: return load_le<int16_t>(p);
    case DType::I32: return load_le<int32_t>(p);
    case DType::U32: return load_le<uint32_t>(p);
    case DType::I64: return (double)load_le<int64_t>(p);
    case DType::U64: return (double)load_le<uint64_t>(p);
  }
  return 0;
}

// One loop per element type (no per-element dispatch on the type), with the same operations
// in the same order for any type and however the elements are split over add() calls, so the
// result is the same to the bit. `load` reads element i as the type's value.
template <typename Load>
void StatsAccumulator::add_with(const uint8_t* data, size_t n, bool may_be_nonfinite, Load load) {
  count_ += n;
  uint64_t nonfinite = nonfinite_;
  double sum = sum_, sum_sq = sum_sq_, lo = lo_, hi = hi_;
  size_t i = 0;
  if (!started_) {
    for (; i < n; i++) {  // the first finite element starts min and max
      const double v = load(data, i);
      if (may_be_nonfinite && !std::isfinite(v)) {
        nonfinite++;
        continue;
      }
      lo = hi = v;
      sum += v;
      sum_sq += v * v;
      started_ = true;
      i++;
      break;
    }
  }
  for (; i < n; i++) {
    const double v = load(data, i);
    if (may_be_nonfinite && !std::isfinite(v)) {
      nonfinite++;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    sum_sq += v * v;
  }
  nonfinite_ = nonfinite;
  sum_ = sum;
  sum_sq_ = sum_sq;
  lo_ = lo;
  hi_ = hi;
}

template <typename T>
void StatsAccumulator::add_as(const uint8_t* data, size_t n) {
  add_with(data, n, std::is_floating_point<T>::value,
           [](const uint8_t* d, size_t i) { return (double)load_le<T>(d + i * sizeof(T)); });
}

// Element values in double, summed in element order: deterministic for the same bytes.
void StatsAccumulator::add(const uint8_t* data, size_t n) {
  switch (type_) {
    case DType::F32: return add_as<float>(data, n);
    case DType::F16:
      return add_with(data, n, true,
                      [](const uint8_t* d, size_t i) { return (double)half_to_float(load_le<uint16_t>(d + i * 2)); });
    case DType::F64: return add_as<double>(data, n);
    case DType::U8: return add_as<uint8_t>(data, n);
    case DType::I8: return add_as<int8_t>(data, n);
    case DType::U16: return add_as<uint16_t>(data, n);
    case DType::I16: return add_as<int16_t>(data, n);
    case DType::I32: return add_as<int32_t>(data, n);
    case DType::U32: return add_as<uint32_t>(data, n);
    case DType::I64: return add_as<int64_t>(data, n);
    case DType::U64: return add_as<uint64_t>(data, n);
  }
}

TensorStats StatsAccumulator::finish() const {
  TensorStats s;
  s.count = count_;
  s.nonfinite = nonfinite_;
  s.min = lo_;
  s.max = hi_;
  const uint64_t finite = s.count - s.nonfinite;
  s.mean = finite ? sum_ / (double)finite : 0.0;
  s.l2 = std::sqrt(sum_sq_);
  return s;
}

TensorStats tensor_stats(const uint8_t* data, size_t bytes, DType t) {
  StatsAccumulator acc(t);
  acc.add(data, bytes / dtype_size(t));
  return acc.finish();
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || !EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr)) g_error("cudaprep-regress: cannot start a SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::update(const uint8_t* data, size_t bytes) {
  if (bytes && !EVP_DigestUpdate(ctx_, data, bytes)) g_error("cudaprep-regress: SHA-256 update failed");
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!EVP_DigestFinal_ex(ctx_, md, &len) || !EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr))
    g_error("cudaprep-regress: SHA-256 final failed");
  static const char kHex[] = "0123456789abcdef";
  std::string out(2 * len, '0');
  for (unsigned int i = 0; i < len; i++) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 0xf];
  }
  return out;
}

std::string sha256_hex(const uint8_t* data, size_t bytes) {
  Sha256 h;
  h.update(data, bytes);
  return h.hex();
}

double psnr_peak(double min, double max) {
  double peak = max - min;
  return (std::isfinite(peak) && peak > 0) ? peak : 1.0;
}

double psnr_db(double sum_sq, uint64_t count, double peak) {
  if (count == 0 || sum_sq == 0) return std::numeric_limits<double>::infinity();
  if (!std::isfinite(sum_sq)) return -std::numeric_limits<double>::infinity();
  const double mse = sum_sq / (double)count;
  return 10.0 * std::log10(peak * peak / mse);
}

TensorDiff diff_tensors(const uint8_t* ref, size_t ref_bytes, const uint8_t* run, size_t run_bytes, DType t) {
  TensorDiff d;
  if (ref_bytes != run_bytes) {
    d.same_size = false;
    d.identical = false;
    d.psnr = -std::numeric_limits<double>::infinity();
    d.max_abs = std::numeric_limits<double>::infinity();
    return d;
  }
  d.identical = ref_bytes == 0 || memcmp(ref, run, ref_bytes) == 0;
  const size_t n = ref_bytes / dtype_size(t);
  d.count = n;
  TensorStats rs = tensor_stats(ref, ref_bytes, t);
  d.peak = psnr_peak(rs.min, rs.max);
  if (d.identical) {
    d.psnr = std::numeric_limits<double>::infinity();
    return d;
  }
  for (size_t i = 0; i < n; i++) {
    const double a = element_value(ref, t, i), b = element_value(run, t, i);
    double diff;
    if (std::isnan(a) || std::isnan(b)) {
      diff = (std::isnan(a) && std::isnan(b)) ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (a == b) {
      diff = 0.0;  // also equal infinities
    } else {
      diff = std::fabs(a - b);
    }
    if (diff != 0.0) {
      d.differing++;
      if (diff > d.max_abs) {
        d.max_abs = diff;
        d.worst_index = i;
      }
      d.sum_sq += diff * diff;
    }
  }
  d.psnr = psnr_db(d.sum_sq, d.count, d.peak);
  return d;
}

std::string TensorTolerance::text() const {
  switch (kind) {
    case Exact: return "exact";
    case MaxAbs: return "max-abs=" + format_short(value, 9);
    case Psnr: return "psnr=" + format_short(value, 9);
  }
  return "?";
}

bool parse_decimal(const std::string& text, double* out) {
  size_t i = 0, n = text.size();
  if (i < n && (text[i] == '+' || text[i] == '-')) i++;
  size_t digits = 0;
  while (i < n && g_ascii_isdigit(text[i])) i++, digits++;
  if (i < n && text[i] == '.') {
    i++;
    while (i < n && g_ascii_isdigit(text[i])) i++, digits++;
  }
  if (digits == 0) return false;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    i++;
    if (i < n && (text[i] == '+' || text[i] == '-')) i++;
    size_t exp_digits = 0;
    while (i < n && g_ascii_isdigit(text[i])) i++, exp_digits++;
    if (exp_digits == 0) return false;
  }
  if (i != n) return false;
  char* end = nullptr;
  const double v = g_ascii_strtod(text.c_str(), &end);
  if (!end || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parse_tensor_tolerance(const std::string& s, TensorTolerance* out, std::string* error) {
  if (s == "exact") {
    *out = TensorTolerance{};
    return true;
  }
  double v;
  if (s.rfind("max-abs=", 0) == 0) {
    if (!parse_decimal(s.substr(8), &v) || v < 0 || std::signbit(v)) {
      *error = "--tensor-tol " + s + ": max-abs needs a decimal number >= 0, e.g. max-abs=1e-5";
      return false;
    }
    out->kind = TensorTolerance::MaxAbs;
    out->value = v;
    return true;
  }
  if (s.rfind("psnr=", 0) == 0) {
    if (!parse_decimal(s.substr(5), &v) || !(v > 0)) {
      *error = "--tensor-tol " + s + ": psnr needs a decimal number of dB > 0, e.g. psnr=60";
      return false;
    }
    out->kind = TensorTolerance::Psnr;
    out->value = v;
    return true;
  }
  *error = "--tensor-tol " + s + ": expected exact, max-abs=X or psnr=DB";
  return false;
}

bool tensor_diff_passes(const TensorDiff& d, const TensorTolerance& tol) {
  if (!d.same_size) return false;
  switch (tol.kind) {
    case TensorTolerance::Exact: return d.identical;
    case TensorTolerance::MaxAbs: return d.identical || d.max_abs <= tol.value;
    case TensorTolerance::Psnr: return d.identical || d.psnr >= tol.value;
  }
  return false;
}

std::string tensor_diff_failure(const TensorDiff& d, const TensorTolerance& tol) {
  if (tensor_diff_passes(d, tol)) return "";
  switch (tol.kind) {
    case TensorTolerance::Exact:
      return "tensor differs (max abs diff " + format_short(d.max_abs) + ", tolerance exact)";
    case TensorTolerance::MaxAbs:
      return "max abs diff " + format_short(d.max_abs) + " > tolerance " + format_short(tol.value);
    case TensorTolerance::Psnr:
      return "PSNR " + format_short(d.psnr) + " dB < tolerance " + format_short(tol.value) + " dB";
  }
  return "";
}

bool MatchDiff::single_template() const {
  return templates.empty() || (templates.size() == 1 && templates[0].label == kSingleTemplateLabel);
}

MatchDiff diff_matches(const std::vector<MatchRec>& ref, const std::vector<MatchRec>& run) {
  MatchDiff d;
  d.n_ref = ref.size();
  d.n_run = run.size();
  std::map<std::string, TemplateMatchDiff> by_label;
  for (const MatchRec& m : ref) by_label[m.label].n_ref++;
  for (const MatchRec& m : run) by_label[m.label].n_run++;
  struct Cand {
    double dist;
    int i, j;
  };
  std::vector<Cand> cands;
  for (size_t i = 0; i < ref.size(); i++)
    for (size_t j = 0; j < run.size(); j++)
      if (ref[i].label == run[j].label)
        cands.push_back({std::hypot(ref[i].sub_x - run[j].sub_x, ref[i].sub_y - run[j].sub_y), (int)i, (int)j});
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.dist != b.dist) return a.dist < b.dist;
    if (a.i != b.i) return a.i < b.i;
    return a.j < b.j;
  });
  std::vector<bool> used_ref(ref.size()), used_run(run.size());
  for (const Cand& c : cands) {
    if (used_ref[c.i] || used_run[c.j]) continue;
    used_ref[c.i] = used_run[c.j] = true;
    const MatchRec &a = ref[c.i], &b = run[c.j];
    MatchPair p;
    p.ref = c.i;
    p.run = c.j;
    p.dpos = c.dist;
    p.dscore = std::fabs(a.score - b.score);
    p.member_changed = a.scale != b.scale || a.angle != b.angle;
    p.full_changed = a.full_search != b.full_search;
    d.pairs.push_back(p);
    TemplateMatchDiff& t = by_label[a.label];
    t.pairs++;
    if (p.member_changed) t.member_changes++;
    if (p.full_changed) t.full_changes++;
    t.max_dpos = std::max(t.max_dpos, p.dpos);
    t.max_dscore = std::max(t.max_dscore, p.dscore);
  }
  std::sort(d.pairs.begin(), d.pairs.end(), [](const MatchPair& a, const MatchPair& b) { return a.ref < b.ref; });
  for (const MatchPair& p : d.pairs) {
    d.max_dpos = std::max(d.max_dpos, p.dpos);
    d.max_dscore = std::max(d.max_dscore, p.dscore);
  }
  for (auto& [label, t] : by_label) {
    t.label = label;
    d.templates.push_back(t);
  }
  return d;
}

bool match_diff_passes(const MatchDiff& d, double pos_tol, double score_tol) {
  for (const TemplateMatchDiff& t : d.templates)
    if (t.n_ref != t.n_run || t.member_changes || t.full_changes) return false;
  return d.n_ref == d.n_run && d.max_dpos <= pos_tol && d.max_dscore <= score_tol;
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string format_short(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  g_snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string format_time(int64_t ns) {
  if (ns < 0) return "none";
  char buf[64];
  const uint64_t t = (uint64_t)ns;
  g_snprintf(buf, sizeof buf, "%u:%02u:%02u.%09u", (unsigned)(t / 3600000000000ull),
             (unsigned)(t / 60000000000ull % 60), (unsigned)(t / 1000000000ull % 60), (unsigned)(t % 1000000000ull));
  return buf;
}

}  // namespace regress
