/* Loads a template image file (PNG, JPEG, PGM, anything GStreamer can decode) as 8-bit gray,
 * with GStreamer's own decoders. YUV decodes (JPEG) give their luma plane as is; RGB decodes
 * (PNG) are converted with the cv::cvtColor BGR2GRAY formula, so the template matches what
 * the element computes from RGB frames.
 *
 * Every file's size is read from its header before anything is decoded: PNG (IHDR), JPEG (the
 * first frame header, SOF0..SOF15), PGM / PPM / PBM (P1..P6), BMP and GIF. A file larger than the
 * limit is refused at once, naming the file and its size. Other formats (TIFF, WebP, ...) are
 * decoded with the size bound on the decoder's output: an image over the limit is refused when
 * the decoder announces its size, before the pixels are converted.
 *
 * Masks: a template decoded with an alpha channel (a PNG with alpha, or with a transparent
 * palette colour) gets a mask: alpha > 0 counts (as OpenCV binarises an 8-bit mask: a non-binary
 * alpha counts wherever it is above 0). A separate mask file replaces the alpha: it is read as gray
 * (any format; its own alpha is ignored) and gray > 0 counts; it must have the template's size.
 * A mask in which every pixel counts is dropped (the template is unmasked).
 *
 * Thread-safe: each call builds its own decoder; call it off the streaming thread. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "template_bank.h"

struct GrayImage {
  std::vector<uint8_t> pixels; /* width * height, no padding */
  int width = 0, height = 0;
};

/* Returns an empty string on success, else a message saying what went wrong, naming the file.
 * The path is a file name in the file system's encoding (any bytes). An image larger than
 * @max_side on a side is refused from its header, before it is decoded. */
std::string gst_cuda_prep_load_gray_image(const std::string& path, int max_side, GrayImage* out);

/* The template at @path with its mask: @mask_path's gray (> 0 counts) when not empty, else the
 * template's alpha (> 0 counts) when it has one. Both files are limited to @max_side. */
std::string gst_cuda_prep_load_masked_template(const std::string& path, const std::string& mask_path, int max_side,
                                               cudaprep::MaskedGray* out);

/* The size in an image file's header, without decoding it. Returns "" and sets @format ("PNG",
 * "JPEG", "PNM", "BMP", "GIF") and the size; "" with an empty @format and size 0x0 for a format it
 * does not read; a message naming the file when the file cannot be read or its header is broken. */
std::string gst_cuda_prep_image_file_size(const std::string& path, int* width, int* height, std::string* format);
