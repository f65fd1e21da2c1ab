// cudaprep-regress: images for the HTML report. PNG encoding and frame decoding are GStreamer's
// (pngenc through gst_video_convert_sample, decodebin), not done by hand here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace regress {

// Packed 8-bit RGB, rows of width * 3 bytes, no padding.
struct RgbImage {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  RgbImage() = default;
  RgbImage(int w, int h) : width(w), height(h), rgb((size_t)w * h * 3, 0) {}
  uint8_t* at(int x, int y) { return &rgb[((size_t)y * width + x) * 3]; }
  const uint8_t* at(int x, int y) const { return &rgb[((size_t)y * width + x) * 3]; }
};

// Encodes with GStreamer's pngenc (needs gst_init and gst-plugins-good).
bool encode_png(const RgbImage& image, std::vector<uint8_t>* png, std::string* error);
bool write_png(const std::string& path, const RgbImage& image, std::string* error);

// A frame of a clip to decode: its index in decoding order and its PTS (-1: pick by index).
struct FrameWanted {
  uint64_t index = 0;
  int64_t pts = -1;
};
// Decodes the clip (decodebin) up to the last frame wanted and returns those frames by index.
// A frame is matched by PTS when one is given, else by its position in decoding order.
// False with a message when the clip does not decode or a frame is not found.
bool decode_frames(const std::string& clip, const std::vector<FrameWanted>& wanted, std::map<uint64_t, RgbImage>* out,
                   std::string* error);

}  // namespace regress
