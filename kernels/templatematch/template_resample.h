// Scaled and rotated copies of a template (with its mask), as the members of a bank are made.
//
// Both functions give, pixel for pixel, what OpenCV's 8-bit functions give (OpenCV 4.6's
// fixed-point and float arithmetic reproduced here, so no OpenCV is needed):
//
// scale_template(src, s): the result is round(w * s) x round(h * s) pixels (rounded half away
// from zero, std::lround). Its pixels are cv::resize(src, dsize, 0, 0, INTER_AREA) when s < 1
// and cv::resize(..., INTER_LINEAR) when s > 1; s == 1, or a size that rounds to the source's,
// is a copy. The mask is cv::resize(mask, dsize, INTER_NEAREST), binarised (non-zero -> 1).
//
// rotate_template(src, a): a in degrees, positive = counter-clockwise (as OpenCV: the image's y
// axis points down). The result is the bounding box of the rotated template:
//   bw = ceil(w |cos a| + h |sin a| - 1e-6), bh = ceil(w |sin a| + h |cos a| - 1e-6)
// (the rotated w x h rectangle of the template; the 1e-6 keeps 90 and 180 degrees exact). With
// the template's centre c = ((w - 1) / 2, (h - 1) / 2) and the box's centre
// c' = ((bw - 1) / 2, (bh - 1) / 2):
//   M = cv::getRotationMatrix2D(Point2f(c), a, 1.0);  M(0, 2) += c'.x - c.x;  M(1, 2) += c'.y - c.y;
//   pixels = cv::warpAffine(src, M, Size(bw, bh), INTER_LINEAR, BORDER_CONSTANT, 0)
// The mask keeps a pixel when both
//   - the source mask there counts: cv::warpAffine(mask, M, ..., INTER_NEAREST, BORDER_CONSTANT, 0)
//     is non-zero (an unmasked source counts everywhere inside it), and
//   - the rotation covers it: every source pixel its bilinear interpolation weighs (non-zero
//     weight) lies inside the template; equivalently, warping a float image of ones with the same
//     M and INTER_LINEAR gives exactly 1. The corners a rotation uncovers, and the one-pixel rim
//     that would blend in the zero border, are out of the mask.
// a == 0 is a copy. 90, 180 and 270 degrees move every pixel exactly (no interpolation).
//
// The result's mask is empty (every pixel counts) when the source has none and every pixel of
// the result counts; otherwise it holds 0 or 1 per pixel.
//
// Errors: a source whose buffers do not match its size, a scale that is not a finite number
// above 0, an angle that is not finite, and a result smaller than kMinTemplateSide or larger
// than kMaxTemplateSide on a side (the message names the size, the scale or angle and the limit).
#pragma once

#include "status.h"
#include "template_bank.h"

namespace cudaprep {

Status scale_template(const MaskedGray& src, double scale, MaskedGray* out);
Status rotate_template(const MaskedGray& src, double angle_deg, MaskedGray* out);

// The sizes these functions give (no limit checked).
void scaled_template_size(int width, int height, double scale, int* out_width, int* out_height);
void rotated_template_size(int width, int height, double angle_deg, int* out_width, int* out_height);

}  // namespace cudaprep
