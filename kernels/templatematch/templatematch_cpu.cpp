// CPU template matcher: exact integer sums (the correlation as rows of u8 x u8 products that gcc
// vectorises, window sums as running column sums), one double quotient per position. It is the
// reference the CUDA path is checked against and the element's path where there is no GPU.
#include <algorithm>
#include <cstring>

#include "templatematch_internal.h"
#include "worker_pool.h"

namespace cudaprep {

// The product of two bytes fits 16 bits, which lets the vectoriser multiply 16-bit lanes before
// widening. Built for AVX2 and for the baseline; the loader picks one at start.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
void tm::mac_row(uint32_t* __restrict acc, const uint8_t* __restrict src, uint32_t t, int n) {
  const uint16_t t16 = static_cast<uint16_t>(t);
  for (int u = 0; u < n; ++u) acc[u] += static_cast<uint16_t>(t16 * src[u]);
}

namespace {

struct MapJob {
  const uint8_t* frame;  // first byte of the search region
  int64_t stride;
  int mw, mh;
  const uint8_t* templ;  // dense tw x th
  int tw, th;
  int64_t n, st, var_t;
  float* out;
  int64_t out_pitch;
  uint32_t* row_sums;  // one slice of row_sums_per_worker values per worker
  int64_t row_sums_per_worker;
};

// Values of one worker's slice: two column sums over the search width and one correlation row,
// rounded up to a cache line so that neighbouring workers never write the same line.
int64_t row_sums_per_worker(int mw, int tw) {
  const int64_t values = 2 * static_cast<int64_t>(mw + tw - 1) + mw;
  return (values + 15) / 16 * 16;
}

// Rows [v0, v1) of the score map, with the given worker's slice of job.row_sums.
void map_rows(const MapJob& job, int worker, int v0, int v1) {
  const int mw = job.mw, tw = job.tw, th = job.th;
  const int cols = mw + tw - 1;
  uint32_t* col1 = job.row_sums + worker * job.row_sums_per_worker;
  uint32_t* col2 = col1 + cols;
  uint32_t* acc = col2 + cols;
  std::fill(col1, col2 + cols, 0u);  // the slice still holds the previous frame's sums
  // Column sums over the template's height for the window rows starting at v0.
  for (int j = 0; j < th; ++j) {
    const uint8_t* row = job.frame + (v0 + j) * job.stride;
    for (int x = 0; x < cols; ++x) {
      col1[x] += row[x];
      col2[x] += static_cast<uint32_t>(row[x]) * row[x];
    }
  }
  for (int v = v0; v < v1; ++v) {
    if (v > v0) {  // slide the column sums down one row
      const uint8_t* out_row = job.frame + (v - 1) * job.stride;
      const uint8_t* in_row = job.frame + (v + th - 1) * job.stride;
      for (int x = 0; x < cols; ++x) {
        col1[x] += static_cast<uint32_t>(in_row[x]) - out_row[x];
        col2[x] += static_cast<uint32_t>(in_row[x]) * in_row[x] - static_cast<uint32_t>(out_row[x]) * out_row[x];
      }
    }
    // Correlation of this map row.
    std::fill(acc, acc + mw, 0u);
    for (int j = 0; j < th; ++j) {
      const uint8_t* row = job.frame + (v + j) * job.stride;
      const uint8_t* trow = job.templ + static_cast<int64_t>(j) * tw;
      for (int i = 0; i < tw; ++i) {
        if (trow[i]) tm::mac_row(acc, row + i, trow[i], mw);
      }
    }
    // Window sums by sliding along the row, then the score.
    uint32_t s1 = 0, s2 = 0;
    for (int i = 0; i < tw; ++i) {
      s1 += col1[i];
      s2 += col2[i];
    }
    float* out = job.out + static_cast<int64_t>(v) * job.out_pitch;
    for (int u = 0; u < mw; ++u) {
      if (u > 0) {
        s1 += col1[u + tw - 1] - col1[u - 1];
        s2 += col2[u + tw - 1] - col2[u - 1];
      }
      out[u] = static_cast<float>(tm::ccoeff_normed(job.n, job.st, job.var_t, s1, s2, acc[u]));
    }
  }
}

int worker_count(int64_t work) {
  // Below ~8M multiply-adds a thread costs more than it saves.
  const int64_t by_work = work / (8ll << 20) + 1;
  return static_cast<int>(std::min<int64_t>(WorkerPool::shared().max_threads(), by_work));
}

}  // namespace

// Out of line: tm::Candidate is complete only here.
TemplateMatcherCpu::TemplateMatcherCpu() = default;
TemplateMatcherCpu::~TemplateMatcherCpu() = default;
TemplateMatcherCpu::TemplateMatcherCpu(TemplateMatcherCpu&&) noexcept = default;
TemplateMatcherCpu& TemplateMatcherCpu::operator=(TemplateMatcherCpu&&) noexcept = default;

Status TemplateMatcherCpu::set_template(const GrayView& templ) {
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(templ, "template"));
  if (templ.width > kMaxTemplateSide || templ.height > kMaxTemplateSide)
    return Status::error("template " + std::to_string(templ.width) + "x" + std::to_string(templ.height) +
                         " is larger than the maximum of " + std::to_string(kMaxTemplateSide) + "x" +
                         std::to_string(kMaxTemplateSide));
  std::vector<uint8_t> px(static_cast<size_t>(templ.width) * templ.height);
  int64_t sum = 0, sum_sq = 0;
  for (int y = 0; y < templ.height; ++y) {
    const uint8_t* row = templ.data + y * templ.stride;
    std::memcpy(px.data() + static_cast<size_t>(y) * templ.width, row, templ.width);
    for (int x = 0; x < templ.width; ++x) {
      sum += row[x];
      sum_sq += static_cast<int64_t>(row[x]) * row[x];
    }
  }
  const int64_t n = static_cast<int64_t>(templ.width) * templ.height;
  if (n * sum_sq - sum * sum <= 0) return Status::error(tm::kFlatTemplateMessage);
  pixels_ = std::move(px);
  width_ = templ.width;
  height_ = templ.height;
  sum_ = sum;
  sum_sq_ = sum_sq;
  return Status();
}

Status TemplateMatcherCpu::score_map(const GrayView& frame, const Rect& search, std::vector<float>* scores, int* map_w,
                                     int* map_h) {
  if (!has_template()) return Status::error("no template set");
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(frame, "frame"));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(frame.width, frame.height, width_, height_, search, &r));
  const int mw = r.w - width_ + 1, mh = r.h - height_ + 1;
  scores->resize(static_cast<size_t>(mw) * mh);
  MapJob job;
  job.frame = frame.data + r.y * frame.stride + r.x;
  job.stride = frame.stride;
  job.mw = mw;
  job.mh = mh;
  job.templ = pixels_.data();
  job.tw = width_;
  job.th = height_;
  job.n = static_cast<int64_t>(width_) * height_;
  job.st = sum_;
  job.var_t = job.n * sum_sq_ - sum_ * sum_;
  job.out = scores->data();
  job.out_pitch = mw;

  const int workers = std::min(worker_count(static_cast<int64_t>(mw) * mh * job.n), mh);
  // Grown only: a smaller frame or template reuses the front of it.
  job.row_sums_per_worker = row_sums_per_worker(mw, width_);
  const size_t row_sums_needed = static_cast<size_t>(workers * job.row_sums_per_worker);
  if (row_sums_.size() < row_sums_needed) row_sums_.resize(row_sums_needed);
  job.row_sums = row_sums_.data();
  // Share w has its own slice of the row sums, whichever thread runs it.
  WorkerPool::shared().parallel_for(workers, [&job, mh, workers](int w) {
    const int v0 = static_cast<int>(static_cast<int64_t>(mh) * w / workers);
    const int v1 = static_cast<int>(static_cast<int64_t>(mh) * (w + 1) / workers);
    map_rows(job, w, v0, v1);
  });
  *map_w = mw;
  *map_h = mh;
  return Status();
}

Status TemplateMatcherCpu::match(const GrayView& frame, const MatchSettings& settings, std::vector<Match>* matches) {
  matches->clear();
  CUDAPREP_RETURN_IF_ERROR(tm::check_match_settings(settings));
  if (!has_template()) return Status::error("no template set");
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(frame, "frame"));
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(frame.width, frame.height, width_, height_, settings.search, &r));
  int mw = 0, mh = 0;
  CUDAPREP_RETURN_IF_ERROR(score_map(frame, r, &scratch_, &mw, &mh));
  // Cleared by collect_candidates, keeps its capacity from the previous frames.
  tm::collect_candidates(scratch_.data(), mw, mw, mh, width_, height_, settings.threshold, &candidates_);
  tm::select_matches(candidates_.data(), static_cast<int>(candidates_.size()), r, width_, height_, settings.max_matches,
                     matches);
  return Status();
}

}  // namespace cudaprep
