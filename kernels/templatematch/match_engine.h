// One interface for template matching in a frame, CPU and CUDA alike: an element picks the
// implementation once (at start) and calls it per frame without asking which one it has.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "image.h"
#include "status.h"
#include "bank_match.h"
#include "templatematch.h"

namespace cudaprep {

class MatchEngine {
 public:
  virtual ~MatchEngine() = default;
  // Where frames are read: device memory (CUDA) or host memory.
  virtual bool on_device() const = 0;
  // Per caps: allocates everything a frame of this format and size needs.
  virtual Status configure(PixelFormat format, int width, int height) = 0;
  // The bank of templates (template_bank.h), in host memory: checked, and its statistics (and
  // device copy) made once. A bank of one unmasked template runs on the single-template matcher.
  virtual Status set_bank(const TemplateBank& bank) = 0;
  virtual bool has_bank() const = 0;
  virtual const TemplateBank& bank() const = 0;
  // The gray (luma) image match() reads: the Y / gray plane in place, else converted.
  virtual Status gray_of(const ImageView& frame, GrayView* gray) = 0;
  // Copies `rect` of a gray image made by gray_of() into host memory (rect.w x rect.h bytes).
  virtual Status read_gray(const GrayView& gray, const Rect& rect, uint8_t* host) = 0;
  // Every member in its region (bank_match.h); matches carry their member.
  virtual Status match(const GrayView& gray, const BankSearch& search, bool suppress_across_templates,
                       std::vector<Match>* matches) = 0;
  virtual Status draw(const ImageView& frame, const Rect* boxes, int count, const BoxStyle& style) = 0;
  // What its caches did so far, for the element's debug log ("" where there are none).
  virtual std::string cache_summary() const { return std::string(); }
};

std::unique_ptr<MatchEngine> make_match_engine_cpu();
// `stream` is a cudaStream_t; the CUDA context must be current for every call, destruction too.
// `wait`: how match() waits for the kernel's result.
std::unique_ptr<MatchEngine> make_match_engine_cuda(void* stream, GpuWait wait);

}  // namespace cudaprep
