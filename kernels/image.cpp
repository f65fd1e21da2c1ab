#include "image.h"

namespace cudaprep {

const char* pixel_format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::NV12: return "NV12";
    case PixelFormat::I420: return "I420";
    case PixelFormat::BGR: return "BGR";
    case PixelFormat::RGB: return "RGB";
    case PixelFormat::BGRx: return "BGRx";
    case PixelFormat::RGBx: return "RGBx";
    case PixelFormat::BGRA: return "BGRA";
    case PixelFormat::RGBA: return "RGBA";
    case PixelFormat::GRAY8: return "GRAY8";
  }
  return "unknown";
}

}  // namespace cudaprep
