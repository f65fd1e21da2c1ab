// A batch under test: an output spec, one source per slot (or an empty slot), and the
// single-frame outputs that each slot must equal bit for bit. No OpenCV (the GPU test uses it).
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <algorithm>
#include <cmath>
#include <vector>

#include "tensorize_batch.h"
#include "test_images.h"

namespace tztest {

struct BatchCase {
  cudaprep::TensorOutputSpec spec;
  std::vector<cudaprep::SlotSourceSpec> sources;  // per slot; ignored for empty slots
  std::vector<HostImage> images;                  // per slot (an empty slot's may be empty)
  std::vector<bool> empty;

  cudaprep::TensorOutputPlan output{};
  std::vector<cudaprep::BatchSlot> slots;

  void add(const cudaprep::SlotSourceSpec& s, HostImage im) {
    sources.push_back(s);
    images.push_back(std::move(im));
    empty.push_back(false);
  }
  void add_empty() {
    sources.emplace_back();
    images.emplace_back();
    empty.push_back(true);
  }
  int count() const { return static_cast<int>(sources.size()); }

  // Resolves the plans; the images' views are the slots' sources.
  cudaprep::Status build() {
    CUDAPREP_RETURN_IF_ERROR(cudaprep::make_output_plan(spec, &output));
    slots.assign(sources.size(), cudaprep::BatchSlot());
    for (int i = 0; i < count(); ++i) {
      slots[i].empty = empty[i];
      if (empty[i]) continue;
      CUDAPREP_RETURN_IF_ERROR(cudaprep::make_slot_plan(spec, sources[i], &slots[i].plan));
      // (the view rebuilt on this image's own buffer: a copied HostImage's view still points into
      // the buffer it was copied from, which may be gone)
      slots[i].src = images[i].at(images[i].buf.data());
    }
    return cudaprep::Status();
  }
  cudaprep::TensorizeBatch batch() const {
    cudaprep::TensorizeBatch b;
    b.output = output;
    b.slots = slots.data();
    b.count = count();
    return b;
  }
  size_t bytes() const { return cudaprep::batch_bytes(output, count()); }

  // The single-frame configuration of slot i.
  cudaprep::TensorizeConfig config(int i) const {
    cudaprep::TensorizeConfig c;
    static_cast<cudaprep::TensorOutputSpec&>(c) = spec;
    static_cast<cudaprep::SlotSourceSpec&>(c) = sources[i];
    return c;
  }

  // What slot i must hold: the single-frame CPU output, or the pad value for an empty slot.
  std::vector<uint8_t> expected_slot(int i) const {
    std::vector<uint8_t> out(cudaprep::slot_bytes(output));
    if (empty[i]) {
      const size_t n = cudaprep::tensor_elements(cudaprep::combine_plan(output, cudaprep::SlotPlan{}));
      const int plane = output.dst_width * output.dst_height;
      for (size_t e = 0; e < n; ++e) {
        const int c = output.layout == cudaprep::Layout::NCHW ? static_cast<int>(e / plane)
                                                              : static_cast<int>(e % output.channels);
        const float v = output.pad_out[c];
        switch (output.dtype) {
          case cudaprep::DType::Float32: std::memcpy(out.data() + 4 * e, &v, 4); break;
          case cudaprep::DType::Float16: {
            const uint16_t h = cudaprep::float_to_half_bits(v);
            std::memcpy(out.data() + 2 * e, &h, 2);
            break;
          }
          // Pad values are whole grey levels times the normalisation: round as the kernels do.
          case cudaprep::DType::UInt8: out[e] = uint8_t(std::lrint(std::min(255.0f, std::max(0.0f, v)))); break;
          case cudaprep::DType::Int8:
            out[e] = uint8_t(int8_t(std::lrint(std::min(127.0f, std::max(-128.0f, v)))));
            break;
        }
      }
      return out;
    }
    cudaprep::TensorizePlan plan;
    const cudaprep::Status st = cudaprep::make_tensorize_plan(config(i), &plan);
    EXPECT_TRUE(st.ok()) << st.message();
    const cudaprep::Status run = cudaprep::tensorize_cpu(plan, images[i].view, out.data());
    EXPECT_TRUE(run.ok()) << run.message();
    return out;
  }

  // Every slot of `got` (batch_bytes) equals its single-frame output, bit for bit.
  bool slots_equal_single_frames(const std::vector<uint8_t>& got) const {
    const size_t stride = cudaprep::slot_bytes(output);
    bool ok = true;
    for (int i = 0; i < count(); ++i) {
      const std::vector<uint8_t> want = expected_slot(i);
      const size_t first = first_difference(want.data(), got.data() + stride * i, stride);
      if (first != stride) {
        ADD_FAILURE() << "slot " << i << (empty[i] ? " (empty)" : "")
                      << " differs from its single-frame output at byte " << first << " of " << stride;
        ok = false;
      }
    }
    return ok;
  }

  static size_t first_difference(const uint8_t* a, const uint8_t* b, size_t n) {
    for (size_t k = 0; k < n; ++k)
      if (a[k] != b[k]) return k;
    return n;
  }
};

// A random image of format number `format_index` (of kAllFormats), random size, row padding and
// plane offsets, as a slot whose ROI and YUV settings are randomised on top of `c`.
template <class Rng>
void add_random_slot(BatchCase& bc, const cudaprep::TensorizeConfig& c, int format_index, int max_side, Rng& rng) {
  std::uniform_int_distribution<int> side(1, max_side);
  const cudaprep::PixelFormat f = kAllFormats[format_index % kAllFormats.size()];
  HostImage im = make_image(f, side(rng), side(rng), side(rng) % 9, side(rng) % 5);
  fill_random(im, rng);
  cudaprep::TensorizeConfig sc = c;
  sc.format = f;
  sc.src_width = im.view.width;
  sc.src_height = im.view.height;
  sc.roi = cudaprep::Rect();
  randomize_settings(sc, rng);  // ROI, YUV matrix and range per slot
  bc.add(sc, std::move(im));
}

inline cudaprep::SlotSourceSpec source_of(const HostImage& im) {
  cudaprep::SlotSourceSpec s;
  s.format = im.view.format;
  s.src_width = im.view.width;
  s.src_height = im.view.height;
  return s;
}

}  // namespace tztest
