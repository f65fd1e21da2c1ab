// The one table of the tensor element types the tensorize kernels write. Every layer reads it:
// the CPU and CUDA stores, the plan's checks and default normalisation, the elements' "dtype"
// enum, the caps' "types" and GstTensorMeta (gst/tensor/tensor_caps.h), the docs.
//
// Adding a type is a DType value, its row in kDTypes and its DTypeStore (the conversion from
// the normalised float value). The kernels are instantiated for every row (visit_dtype, the CUDA
// dispatch tables), so a row without a DTypeStore does not compile; gst/ maps each row to
// GStreamer's tensor type in an array checked against kDTypeCount. The tests walk the table:
// tests/elements/test_dtype_table.cpp fails until the new row has its reference conversion
// there (written independently of these stores; on GStreamer >= 1.26 builds also its
// GstTensorDataType), and tensorize_gpu's EveryDTypeRow* tests compare the CUDA kernels with
// the CPU path for every row.
// constexpr throughout: device code sizes its stores with it.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>

#include "image.h"  // CUDAPREP_HD

#ifdef __CUDACC__
#include <cuda_fp16.h>
#endif

namespace cudaprep {

// New types go at the end: the values index kDTypes and the CUDA dispatch tables.
enum class DType : int { Float32, Float16, UInt8, Int8 };

struct DTypeInfo {
  DType dtype;
  const char* name;         // the caps' "types", GstTensorMeta, the enum's nick
  const char* description;  // the enum value's text in gst-inspect
  int bytes;
  // Normalisation where the user sets none: out = (pixel * scale - mean) / 1.
  double default_scale, default_mean;
};

// In DType order (checked below).
inline constexpr DTypeInfo kDTypes[] = {
    {DType::Float32, "float32", "32-bit float", 4, 1.0 / 255.0, 0.0},
    {DType::Float16, "float16", "16-bit float (IEEE half, round to nearest even)", 2, 1.0 / 255.0, 0.0},
    {DType::UInt8, "uint8",
     "8-bit unsigned: the normalised value rounded to nearest even, saturated to 0..255 (by default "
     "the resized pixels)",
     1, 1.0, 0.0},
    // The input of a model quantised from a [0, 1] float input: scale 1/255, zero point -128.
    {DType::Int8, "int8",
     "8-bit signed: the normalised value rounded to nearest even, saturated to -128..127 (by "
     "default pixel - 128)",
     1, 1.0, 128.0},
};
constexpr int kDTypeCount = int(sizeof(kDTypes) / sizeof(kDTypes[0]));

constexpr bool dtypes_in_order() {
  for (int i = 0; i < kDTypeCount; ++i)
    if (static_cast<int>(kDTypes[i].dtype) != i) return false;
  return true;
}
static_assert(dtypes_in_order(), "kDTypes must list the types in DType order");

constexpr bool dtype_valid(DType d) { return static_cast<int>(d) >= 0 && static_cast<int>(d) < kDTypeCount; }
constexpr const DTypeInfo& dtype_info(DType d) { return kDTypes[static_cast<int>(d)]; }
constexpr int dtype_bytes(DType d) { return dtype_info(d).bytes; }
constexpr const char* dtype_name(DType d) { return dtype_valid(d) ? dtype_info(d).name : "unknown"; }

// ---- conversions -----------------------------------------------------------------------------

// IEEE binary16 with round-to-nearest-even (as __float2half_rn); NaN -> 0x7fff.
CUDAPREP_HD uint16_t float_to_half_rn(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return 0x7fffu;                                 // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 (and inf) -> inf
  if (ax >= 0x38800000u) {                                              // normal half (>= 2^-14)
    const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (ax <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 rounds to (signed) zero
  // Subnormal half: value / 2^-24 = m * 2^(e - 126), shift = 126 - e in [14, 24].
  const uint32_t e = ax >> 23;
  const uint32_t m = (ax & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - e;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}

// Integer outputs: saturate, then round to nearest, ties to even (rintf in the default rounding
// mode on the host; cvt.rni on the device). Saturating first gives the same integer as rounding
// first (the bounds are integers) and keeps the conversion in range.
CUDAPREP_HD uint8_t to_uint8(float v) {
  return static_cast<uint8_t>(static_cast<int>(rintf(fminf(fmaxf(v, 0.0f), 255.0f))));
}
CUDAPREP_HD int8_t to_int8(float v) {
  return static_cast<int8_t>(static_cast<int>(rintf(fminf(fmaxf(v, -128.0f), 127.0f))));
}

// How the normalised float value becomes an element of type D: `Bits`, the element as stored,
// and `from_float`. One specialisation per row of kDTypes; the primary template has no
// definition, so a type without one does not compile.
template <DType D>
struct DTypeStore;

template <>
struct DTypeStore<DType::Float32> {
  using Bits = float;
  CUDAPREP_HD static Bits from_float(float v) { return v; }
};
template <>
struct DTypeStore<DType::Float16> {
  using Bits = uint16_t;
  CUDAPREP_HD static Bits from_float(float v) {
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));  // one instruction; the same bits
#else
    return float_to_half_rn(v);
#endif
  }
};
template <>
struct DTypeStore<DType::UInt8> {
  using Bits = uint8_t;
  CUDAPREP_HD static Bits from_float(float v) { return to_uint8(v); }
};
template <>
struct DTypeStore<DType::Int8> {
  using Bits = int8_t;
  CUDAPREP_HD static Bits from_float(float v) { return to_int8(v); }
};

// Every row's bytes are its DTypeStore's.
namespace dtype_detail {
template <int... I>
constexpr bool bytes_match_stores(std::integer_sequence<int, I...>) {
  return ((sizeof(typename DTypeStore<static_cast<DType>(I)>::Bits) == size_t(kDTypes[I].bytes)) && ...);
}
}  // namespace dtype_detail
static_assert(dtype_detail::bytes_match_stores(std::make_integer_sequence<int, kDTypeCount>{}),
              "a kDTypes row's bytes differ from its DTypeStore's element");

// ---- runtime -> template ---------------------------------------------------------------------

template <DType D>
struct DTypeTag {
  static constexpr DType value = D;
};

namespace dtype_detail {
template <typename F, int... I>
void visit(DType d, F&& f, std::integer_sequence<int, I...>) {
  ((static_cast<int>(d) == I ? (f(DTypeTag<static_cast<DType>(I)>{}), 0) : 0), ...);
}
}  // namespace dtype_detail

// Calls f(DTypeTag<d>{}) for the runtime value d: every row is instantiated, none is forgotten.
// Host code (the CUDA launches index their own tables with the same order).
template <typename F>
void visit_dtype(DType d, F&& f) {
  dtype_detail::visit(d, f, std::make_integer_sequence<int, kDTypeCount>{});
}

}  // namespace cudaprep
