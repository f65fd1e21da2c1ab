// The one table of the pixel formats the project accepts: how each lays out its bytes. Every layer
// reads it (the kernels, gst/core/pixel_format.h, the tests); adding a format starts with a PixelFormat
// value and a row here. `name` is GStreamer's spelling of the format (gst_video_format_to_string),
// so the GStreamer layer maps formats by name and nothing here knows GStreamer.
// constexpr throughout: device code may use the lookups in constant expressions.
#pragma once
#include <cstdint>

namespace cudaprep {

// New formats go at the end: the values index kPixelFormats and the tests' parameterisations.
enum class PixelFormat : int { NV12, I420, BGR, RGB, BGRx, RGBx, BGRA, RGBA, GRAY8, YUY2, UYVY, NV21, P010_10LE };

constexpr int kMaxPlanes = 3;

// One plane: each sample group covers x_sub x y_sub pixels and takes group_bytes bytes of a row
// (NV12's UV plane: 2 x 2 pixels, 2 bytes; BGR: 1 x 1 pixel, 3 bytes; YUY2: 2 x 1 pixels, 4 bytes).
struct PlaneLayout {
  int x_sub, y_sub;
  int group_bytes;
};

struct PixelFormatInfo {
  PixelFormat format;
  const char* name;
  int planes;
  PlaneLayout plane[kMaxPlanes];  // entries past `planes` are empty
  bool yuv;
  int packed_bytes;  // bytes per pixel of a single-plane format; 0 for planar YUV
  // Byte offsets inside a packed pixel, -1 where there is none. GRAY8: R = G = B = byte 0.
  int r, g, b;
  int alpha;
  int padding;  // a byte that carries nothing (the x of BGRx)
  // YUV: where the samples are. Luma is in plane 0, luma_step bytes apart, at y_byte within its
  // step (UYVY: 1). U and V are in chroma_plane (V in plane 2 for I420), one chroma group
  // (plane[chroma_plane].group_bytes) apart, at u_byte and v_byte within the group. Samples are
  // sample_bytes wide (2: little-endian, the value in the top `depth` bits, as P010).
  int sample_bytes, depth;
  int luma_step, y_byte;
  int chroma_plane, u_byte, v_byte;
};

namespace pixel_format_rows {

constexpr PlaneLayout kNoPlane{1, 1, 0};

// 4:2:0 with U and V in one plane (NV12: U at byte u_byte of each chroma pair), 8 or 16 bits.
constexpr PixelFormatInfo semi_planar420(PixelFormat f, const char* name, int sample_bytes, int depth, int u_byte,
                                         int v_byte) {
  const int s = sample_bytes;
  return {f, name,   2,     {{1, 1, s}, {2, 2, 2 * s}, kNoPlane}, true, 0, -1, -1, -1, -1, -1, s, depth, s, 0,
          1, u_byte, v_byte};
}

constexpr PixelFormatInfo planar420(PixelFormat f, const char* name) {
  return {f, name, 3, {{1, 1, 1}, {2, 2, 1}, {2, 2, 1}}, true, 0, -1, -1, -1, -1, -1, 1, 8, 1, 0, 1, 0, 0};
}

// 4:2:2 packed in one plane: each pair of pixels is 4 bytes holding Y0, U, Y1, V in some order.
constexpr PixelFormatInfo packed422(PixelFormat f, const char* name, int y_byte, int u_byte, int v_byte) {
  return {f, name, 1, {{2, 1, 4}, kNoPlane, kNoPlane}, true, 0, -1, -1, -1, -1, -1, 1, 8, 2, y_byte, 0, u_byte, v_byte};
}

constexpr PixelFormatInfo packed(PixelFormat f, const char* name, int bytes, int r, int g, int b, int alpha,
                                 int padding) {
  return {f, name, 1, {{1, 1, bytes}, kNoPlane, kNoPlane}, false, bytes, r, g, b, alpha, padding, 1, 8, 0, 0, 0, 0, 0};
}

}  // namespace pixel_format_rows

// In PixelFormat order (checked below).
inline constexpr PixelFormatInfo kPixelFormats[] = {
    //                                format             name  sample bytes, depth, U byte, V byte
    pixel_format_rows::semi_planar420(PixelFormat::NV12, "NV12", 1, 8, 0, 1),
    pixel_format_rows::planar420(PixelFormat::I420, "I420"),
    //                        format              name    bytes  R  G  B alpha padding
    pixel_format_rows::packed(PixelFormat::BGR, "BGR", 3, 2, 1, 0, -1, -1),
    pixel_format_rows::packed(PixelFormat::RGB, "RGB", 3, 0, 1, 2, -1, -1),
    pixel_format_rows::packed(PixelFormat::BGRx, "BGRx", 4, 2, 1, 0, -1, 3),
    pixel_format_rows::packed(PixelFormat::RGBx, "RGBx", 4, 0, 1, 2, -1, 3),
    pixel_format_rows::packed(PixelFormat::BGRA, "BGRA", 4, 2, 1, 0, 3, -1),
    pixel_format_rows::packed(PixelFormat::RGBA, "RGBA", 4, 0, 1, 2, 3, -1),
    pixel_format_rows::packed(PixelFormat::GRAY8, "GRAY8", 1, 0, 0, 0, -1, -1),
    //                           format             name    Y byte  U byte  V byte (of 4)
    pixel_format_rows::packed422(PixelFormat::YUY2, "YUY2", 0, 1, 3),
    pixel_format_rows::packed422(PixelFormat::UYVY, "UYVY", 1, 0, 2),
    pixel_format_rows::semi_planar420(PixelFormat::NV21, "NV21", 1, 8, 1, 0),
    // 10 bits in the top of 16 (HEVC Main10 decoders, HDR cameras).
    pixel_format_rows::semi_planar420(PixelFormat::P010_10LE, "P010_10LE", 2, 10, 0, 2),
};
constexpr int kPixelFormatCount = static_cast<int>(sizeof(kPixelFormats) / sizeof(kPixelFormats[0]));

constexpr bool pixel_formats_in_enum_order() {
  for (int i = 0; i < kPixelFormatCount; ++i)
    if (static_cast<int>(kPixelFormats[i].format) != i) return false;
  return true;
}
static_assert(pixel_formats_in_enum_order(), "kPixelFormats must list every PixelFormat in enum order");

// What a value outside the enum (a plan or view that was never set up) looks like: no planes.
inline constexpr PixelFormatInfo kUnknownPixelFormat{
    PixelFormat::GRAY8, "unknown", 0, {}, false, 0, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0};

constexpr bool is_valid_pixel_format(PixelFormat f) {
  return static_cast<int>(f) >= 0 && static_cast<int>(f) < kPixelFormatCount;
}

constexpr const PixelFormatInfo& pixel_format_info(PixelFormat f) {
  return is_valid_pixel_format(f) ? kPixelFormats[static_cast<int>(f)] : kUnknownPixelFormat;
}

constexpr const char* pixel_format_name(PixelFormat f) { return pixel_format_info(f).name; }
constexpr int plane_count(PixelFormat f) { return pixel_format_info(f).planes; }
constexpr bool is_yuv(PixelFormat f) { return pixel_format_info(f).yuv; }
constexpr int packed_bytes_per_pixel(PixelFormat f) { return pixel_format_info(f).packed_bytes; }
constexpr int sample_bytes(PixelFormat f) { return pixel_format_info(f).sample_bytes; }
// YUV: pixels per chroma sample across and down (2 and 2 for 4:2:0, 2 and 1 for 4:2:2).
constexpr int chroma_x_sub(PixelFormat f) {
  return pixel_format_info(f).plane[pixel_format_info(f).chroma_plane].x_sub;
}
constexpr int chroma_y_sub(PixelFormat f) {
  return pixel_format_info(f).plane[pixel_format_info(f).chroma_plane].y_sub;
}
// YUV: bytes from one chroma group to the next in its plane.
constexpr int chroma_step(PixelFormat f) {
  return pixel_format_info(f).plane[pixel_format_info(f).chroma_plane].group_bytes;
}
// YUV: the plane holding V (I420: its own; else with U).
constexpr int v_plane(PixelFormat f) {
  return pixel_format_info(f).planes == 3 ? 2 : pixel_format_info(f).chroma_plane;
}

// Bytes of pixel data in one row of plane `plane` of an image `width` pixels wide (a partly
// covered sample group counts whole: NV12's UV row of a 5-pixel-wide image is 6 bytes).
constexpr int64_t plane_row_bytes(PixelFormat f, int plane, int64_t width) {
  if (plane < 0 || plane >= plane_count(f)) return 0;
  const PlaneLayout& l = pixel_format_info(f).plane[plane];
  return (width + l.x_sub - 1) / l.x_sub * l.group_bytes;
}

// Rows of plane `plane` of an image `height` pixels high.
constexpr int64_t plane_rows(PixelFormat f, int plane, int64_t height) {
  if (plane < 0 || plane >= plane_count(f)) return 0;
  const PlaneLayout& l = pixel_format_info(f).plane[plane];
  return (height + l.y_sub - 1) / l.y_sub;
}

// Looks a format up by its name; false when no format has it.
constexpr bool pixel_format_from_name(const char* name, PixelFormat* out) {
  for (const PixelFormatInfo& info : kPixelFormats) {
    int i = 0;
    while (info.name[i] != '\0' && info.name[i] == name[i]) ++i;
    if (info.name[i] == name[i]) {
      *out = info.format;
      return true;
    }
  }
  return false;
}

}  // namespace cudaprep
