// Image files written by hand for the template-loading tests: PNG (any colour type, with zlib, so
// a huge image of one colour is a small file), binary PGM / PPM, and a temporary path per test.
#pragma once

#include <glib.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace test {

inline std::string temp_path(const std::string& name) {
  return std::string(g_get_tmp_dir()) + "/cudaprep-test-" + std::to_string(getpid()) + "-" + name;
}

inline void put_be32(std::string* s, uint32_t v) {
  for (int i = 3; i >= 0; i--) s->push_back((char)((v >> (8 * i)) & 0xff));
}

inline void png_chunk(std::ofstream& f, const char* type, const std::string& data) {
  std::string out;
  put_be32(&out, (uint32_t)data.size());
  std::string body = std::string(type, 4) + data;
  out += body;
  put_be32(&out, (uint32_t)crc32(0, reinterpret_cast<const Bytef*>(body.data()), (uInt)body.size()));
  f.write(out.data(), (std::streamsize)out.size());
}

// PNG colour types: 0 gray, 2 RGB, 4 gray + alpha, 6 RGBA (8 bits a sample).
inline int png_channels(int color_type) {
  switch (color_type) {
    case 0: return 1;
    case 2: return 3;
    case 4: return 2;
    default: return 4;
  }
}

// Writes a PNG whose rows come from row(y, bytes) (width * channels bytes each); rows are
// compressed as they come (zlib `level`), so a huge image needs no huge buffer.
template <typename RowFn>
void write_png_rows(const std::string& path, int w, int h, int color_type, RowFn row, int level = 6) {
  std::ofstream f(path, std::ios::binary);
  f.write("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_be32(&ihdr, (uint32_t)w);
  put_be32(&ihdr, (uint32_t)h);
  ihdr += std::string{8, (char)color_type, 0, 0, 0};
  png_chunk(f, "IHDR", ihdr);
  z_stream z{};
  deflateInit(&z, level);
  const size_t row_bytes = (size_t)w * png_channels(color_type) + 1;
  std::vector<uint8_t> line(row_bytes), out(1 << 16);
  std::string idat;
  for (int y = 0; y <= h; y++) {
    if (y < h) {
      line[0] = 0;  // filter: none
      row(y, line.data() + 1);
      z.next_in = line.data();
      z.avail_in = (uInt)row_bytes;
    }
    int ret;
    do {
      z.next_out = out.data();
      z.avail_out = (uInt)out.size();
      ret = deflate(&z, y < h ? Z_NO_FLUSH : Z_FINISH);
      idat.append(reinterpret_cast<const char*>(out.data()), out.size() - z.avail_out);
    } while (y < h ? z.avail_out == 0 : ret != Z_STREAM_END);
  }
  deflateEnd(&z);
  // IDAT chunks of 8 KB, as libpng writes them (decoders handle many small chunks differently
  // from one large one)
  for (size_t i = 0; i < idat.size(); i += 8192) png_chunk(f, "IDAT", idat.substr(i, 8192));
  png_chunk(f, "IEND", "");
}

// A PNG of `pixels` (width * height * channels bytes).
inline void write_png(const std::string& path, int w, int h, int color_type, const std::vector<uint8_t>& pixels) {
  const size_t rb = (size_t)w * png_channels(color_type);
  write_png_rows(path, w, h, color_type, [&](int y, uint8_t* dst) {
    std::copy(pixels.begin() + (long)(y * rb), pixels.begin() + (long)((y + 1) * rb), dst);
  });
}

// Binary PGM (P5) or PPM (P6) with a comment in the header.
inline void write_pnm(const std::string& path, int w, int h, bool color, const std::vector<uint8_t>& pixels) {
  std::ofstream f(path, std::ios::binary);
  f << (color ? "P6" : "P5") << "\n# written by a test\n" << w << " " << h << "\n255\n";
  f.write(reinterpret_cast<const char*>(pixels.data()), (std::streamsize)pixels.size());
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), (std::streamsize)bytes.size());
}

}  // namespace test
