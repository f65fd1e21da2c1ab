// Host images in any of the supported formats with arbitrary row padding and plane offsets,
// for the CPU and GPU tensorize tests. No OpenCV here (the GPU test links none).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "image.h"
#include "tensorize.h"

namespace tztest {

using cudaprep::ImageView;
using cudaprep::PixelFormat;

// Every format of the table (kernels/common/pixel_formats.h).
inline const std::vector<PixelFormat> kAllFormats = [] {
  std::vector<PixelFormat> formats;
  for (const cudaprep::PixelFormatInfo& f : cudaprep::kPixelFormats) formats.push_back(f.format);
  return formats;
}();

// Row bytes and rows of plane i of a w x h image (chroma planes: ceil(w/2) x ceil(h/2)).
inline void plane_geometry(PixelFormat f, int w, int h, int i, int* row_bytes, int* rows) {
  *row_bytes = static_cast<int>(cudaprep::plane_row_bytes(f, i, w));
  *rows = static_cast<int>(cudaprep::plane_rows(f, i, h));
}

// One buffer holding all planes: plane i starts at offset[i], rows are stride[i] bytes apart.
struct HostImage {
  std::vector<uint8_t> buf;
  ImageView view;
  size_t offset[3] = {0, 0, 0};

  uint8_t* plane(int i) { return buf.data() + offset[i]; }
  const uint8_t* plane(int i) const { return buf.data() + offset[i]; }
  int64_t stride(int i) const { return view.planes[i].stride; }
  // The same layout at another base address (e.g. a device copy of buf).
  ImageView at(const uint8_t* base) const {
    ImageView v = view;
    for (int i = 0; i < cudaprep::plane_count(view.format); ++i) v.planes[i].data = base + offset[i];
    return v;
  }
  uint8_t& at_byte(int plane_index, int row, int byte) {
    return buf[offset[plane_index] + size_t(row) * size_t(view.planes[plane_index].stride) + byte];
  }
};

// Allocates an image; each plane's stride is its row bytes + row_pad, and plane i starts
// plane_gap bytes after the previous one (first one at plane_gap too). Padding bytes are filled
// with `fill` (they must never influence the output).
inline HostImage make_image(PixelFormat f, int w, int h, int row_pad = 0, int plane_gap = 0, uint8_t fill = 0xA5) {
  HostImage im;
  im.view.format = f;
  im.view.width = w;
  im.view.height = h;
  size_t pos = 0;
  const int n = cudaprep::plane_count(f);
  // 16-bit formats: planes and rows start on even bytes (check_source refuses others).
  const int align = cudaprep::sample_bytes(f);
  row_pad = (row_pad + align - 1) / align * align;
  plane_gap = (plane_gap + align - 1) / align * align;
  for (int i = 0; i < n; ++i) {
    int rb, rows;
    plane_geometry(f, w, h, i, &rb, &rows);
    pos += plane_gap;
    im.offset[i] = pos;
    im.view.planes[i].stride = rb + row_pad;
    pos += size_t(rb + row_pad) * rows;
  }
  im.buf.assign(pos, fill);
  for (int i = 0; i < n; ++i) im.view.planes[i].data = im.buf.data() + im.offset[i];
  return im;
}

// P010 keeps its 10 bits at the top of each 16-bit sample: the low 6 bits are 0.
inline void clear_p010_low_bits(HostImage& im) {
  for (int i = 0; i < 2; ++i) {
    int rb, rows;
    plane_geometry(im.view.format, im.view.width, im.view.height, i, &rb, &rows);
    for (int y = 0; y < rows; ++y)
      for (int x = 0; x < rb; x += 2) im.at_byte(i, y, x) &= 0xC0;
  }
}

// Fills the visible bytes with a mix of smooth gradients, sharp edges and noise.
inline void fill_random(HostImage& im, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const int n = cudaprep::plane_count(im.view.format);
  for (int i = 0; i < n; ++i) {
    int rb, rows;
    plane_geometry(im.view.format, im.view.width, im.view.height, i, &rb, &rows);
    const double fx = 0.05 + 0.3 * u(rng), fy = 0.05 + 0.3 * u(rng), ph = 6.28 * u(rng);
    const int mode = byte(rng) % 3;
    for (int y = 0; y < rows; ++y) {
      uint8_t* row = im.plane(i) + size_t(y) * size_t(im.stride(i));
      for (int x = 0; x < rb; ++x) {
        int v;
        if (mode == 0) {
          v = byte(rng);
        } else if (mode == 1) {
          v = int(127.5 + 127.5 * std::sin(fx * x + fy * y + ph + (x % 3)));
        } else {
          v = ((x / 5 + y / 3) % 2) ? 230 : 20;
          v += byte(rng) % 16;
        }
        row[x] = uint8_t(v < 0 ? 0 : (v > 255 ? 255 : v));
      }
    }
  }
  if (im.view.format == PixelFormat::P010_10LE) clear_p010_low_bits(im);
}

// Writes separate 8-bit Y (y_stride bytes a row), U and V (cw x ch, compact, 4:2:0) planes into
// an image of any YUV format: 4:2:2 formats repeat each chroma row twice, P010 gets each value
// in its top 8 bits plus two random low bits of the 10 (rng; 0 without one).
inline void put_yuv(HostImage& im, cudaprep::PixelFormat f, const uint8_t* Y, size_t y_stride, const uint8_t* U,
                    const uint8_t* V, int w, int h, int cw, int ch, std::mt19937* rng = nullptr) {
  using cudaprep::PixelFormat;
  std::uniform_int_distribution<int> two_bits(0, 3);
  auto put16 = [&](int plane, int row, int byte, uint8_t v8) {
    const int v10 = v8 * 4 + (rng ? two_bits(*rng) : 0);
    im.at_byte(plane, row, byte) = uint8_t((v10 << 6) & 0xFF);
    im.at_byte(plane, row, byte + 1) = uint8_t(v10 >> 2);
  };
  const bool packed422 = f == PixelFormat::YUY2 || f == PixelFormat::UYVY;
  const int y_byte = f == PixelFormat::UYVY ? 1 : 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t v = Y[size_t(y) * y_stride + x];
      if (f == PixelFormat::P010_10LE)
        put16(0, y, 2 * x, v);
      else if (packed422)
        im.at_byte(0, y, 2 * x + y_byte) = v;
      else
        im.at_byte(0, y, x) = v;
    }
  const int rows = packed422 ? h : ch;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cw; ++x) {
      const int src = (packed422 ? y / 2 : y) * cw + x;
      switch (f) {
        case PixelFormat::NV12:
          im.at_byte(1, y, 2 * x) = U[src];
          im.at_byte(1, y, 2 * x + 1) = V[src];
          break;
        case PixelFormat::NV21:
          im.at_byte(1, y, 2 * x) = V[src];
          im.at_byte(1, y, 2 * x + 1) = U[src];
          break;
        case PixelFormat::I420:
          im.at_byte(1, y, x) = U[src];
          im.at_byte(2, y, x) = V[src];
          break;
        case PixelFormat::YUY2:
          im.at_byte(0, y, 4 * x + 1) = U[src];
          im.at_byte(0, y, 4 * x + 3) = V[src];
          break;
        case PixelFormat::UYVY:
          im.at_byte(0, y, 4 * x) = U[src];
          im.at_byte(0, y, 4 * x + 2) = V[src];
          break;
        case PixelFormat::P010_10LE:
          put16(1, y, 4 * x, U[src]);
          put16(1, y, 4 * x + 2, V[src]);
          break;
        default: break;
      }
    }
}

inline void set_sizes(cudaprep::TensorizeConfig& c, int w, int h, int tw, int th) {
  c.src_width = w;
  c.src_height = h;
  c.dst_width = tw;
  c.dst_height = th;
}

// A default configuration for a format and sizes; tests change what they exercise.
inline cudaprep::TensorizeConfig base_config(cudaprep::PixelFormat f, int w, int h, int tw, int th) {
  cudaprep::TensorizeConfig c;
  c.format = f;
  set_sizes(c, w, h, tw, th);
  return c;
}

// The exhaustive tests' grid: every format x mode x align x interpolation x dtype x layout x channels
// (3, 1), with the dtype's default normalisation, in a
// fixed order. f(config, n) gets a default configuration with those six set (sizes still to be
// set) and its index n. Returns the number of combinations.
template <class F>
int for_each_combination(F&& f) {
  using namespace cudaprep;
  int n = 0;
  for (PixelFormat fmt : kAllFormats)
    for (ResizeMode m : {ResizeMode::Letterbox, ResizeMode::Stretch, ResizeMode::Crop, ResizeMode::Ultralytics})
      for (Align a : {Align::Center, Align::TopLeft})
        for (Interpolation ip : {Interpolation::Bilinear, Interpolation::Nearest})
          for (DType d : {DType::Float32, DType::Float16, DType::UInt8, DType::Int8})
            for (Layout l : {Layout::NCHW, Layout::NHWC})
              for (int channels : {3, 1}) {
                TensorizeConfig c;
                c.format = fmt;
                c.mode = m;
                c.align = a;
                c.interpolation = ip;
                c.dtype = d;
                c.layout = l;
                c.channels = channels;
                const Normalisation norm = default_normalisation(d);  // what the elements use by default
                c.scale = norm.scale;
                for (int k = 0; k < 3; ++k) {
                  c.mean[k] = norm.mean[k];
                  c.std[k] = norm.std[k];
                }
                f(c, n++);
              }
  return n;
}

// Randomises what the exhaustive tests do not enumerate: channel order, pad value, YUV matrix
// and range, and (each half of the time) normalisation and an ROI.
inline void randomize_settings(cudaprep::TensorizeConfig& c, std::mt19937& rng) {
  using namespace cudaprep;
  std::uniform_int_distribution<int> any(0, 1 << 30);
  std::uniform_real_distribution<double> u(0, 1);
  c.channel_order = any(rng) % 2 ? ChannelOrder::BGR : ChannelOrder::RGB;
  c.pad_value = any(rng) % 256;
  c.yuv_matrix = static_cast<YuvMatrix>(any(rng) % 3);
  c.yuv_full_range = any(rng) % 2;
  if (any(rng) % 2) {
    c.scale = 0.5 + u(rng);
    for (int k = 0; k < 3; ++k) {
      c.mean[k] = 300 * u(rng) - 100;
      c.std[k] = (any(rng) % 2 ? 1 : -1) * (0.2 + 80 * u(rng));
    }
  }
  if (any(rng) % 2 && c.src_width > 2 && c.src_height > 2) {
    c.roi.x = any(rng) % (c.src_width - 1);
    c.roi.y = any(rng) % (c.src_height - 1);
    c.roi.w = 1 + any(rng) % (c.src_width - c.roi.x);
    c.roi.h = 1 + any(rng) % (c.src_height - c.roi.y);
  }
}

inline const char* format_name(PixelFormat f) { return cudaprep::pixel_format_name(f); }

}  // namespace tztest
