/* Loads a template image file (PNG, JPEG, PGM, anything GStreamer can decode) as 8-bit gray,
 * with GStreamer's own decoders. YUV decodes (JPEG) give their luma plane as is; RGB decodes
 * (PNG) are converted with the cv::cvtColor BGR2GRAY formula, so the template matches what
 * the element computes from RGB frames. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct GrayImage {
  std::vector<uint8_t> pixels; /* width * height, no padding */
  int width = 0, height = 0;
};

/* Returns an empty string on success, else a message saying what went wrong. The path is a
 * file name in the file system's encoding (any bytes). An image larger than @max_side on a
 * side is refused from its header, before it is decoded. */
std::string gst_cuda_prep_load_gray_image(const std::string& path, int max_side, GrayImage* out);
