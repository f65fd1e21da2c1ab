// Host code shared by the CPU and CUDA template matchers: search-region checks, the peak search
// on a host map (CPU path), candidate ordering and non-maximum suppression (both paths), and the
// box colours of the drawing kernels.
#include <algorithm>
#include <cmath>
#include <string>

#include "templatematch_internal.h"

namespace cudaprep {

namespace {
std::string dims(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
std::string rect_text(const Rect& r) {
  return "(" + std::to_string(r.x) + "," + std::to_string(r.y) + " " + dims(r.w, r.h) + ")";
}
uint8_t clamp_u8(double v) {
  const double r = std::floor(v + 0.5);
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}
}  // namespace

Status resolve_search_region(int frame_w, int frame_h, int templ_w, int templ_h, const Rect& requested,
                             Rect* resolved) {
  if (frame_w <= 0 || frame_h <= 0) return Status::error("invalid frame size " + dims(frame_w, frame_h));
  if (templ_w <= 0 || templ_h <= 0) return Status::error("invalid template size " + dims(templ_w, templ_h));
  if (templ_w > kMaxTemplateSide || templ_h > kMaxTemplateSide)
    return Status::error("template " + dims(templ_w, templ_h) + " is larger than the maximum of " +
                         dims(kMaxTemplateSide, kMaxTemplateSide));
  Rect r = requested;
  if (r.empty()) {
    r = Rect{0, 0, frame_w, frame_h};
  } else if (r.x < 0 || r.y < 0 || r.x > frame_w - r.w || r.y > frame_h - r.h) {
    return Status::error("search region " + rect_text(r) + " lies outside the frame " + dims(frame_w, frame_h));
  }
  if (templ_w > frame_w || templ_h > frame_h)
    return Status::error("template " + dims(templ_w, templ_h) + " is larger than the frame " + dims(frame_w, frame_h));
  if (templ_w > r.w || templ_h > r.h)
    return Status::error("template " + dims(templ_w, templ_h) + " is larger than the search region " + rect_text(r));
  *resolved = r;
  return Status();
}

namespace tm {

const char* const kFlatTemplateMessage = "template has no variance (flat): TM_CCOEFF_NORMED is undefined for it";

Status check_gray(const GrayView& g, const char* what) {
  if (!g.data) return Status::error(std::string(what) + ": no data");
  if (g.width <= 0 || g.height <= 0)
    return Status::error(std::string(what) + ": invalid size " + dims(g.width, g.height));
  if (g.stride < g.width) return Status::error(std::string(what) + ": stride smaller than the width");
  return Status();
}

Status check_match_settings(const MatchSettings& s) {
  if (s.max_matches < 1)
    return Status::error("max_matches must be at least 1 (got " + std::to_string(s.max_matches) + ")");
  if (std::isnan(s.threshold)) return Status::error("threshold is NaN");
  return Status();
}

void collect_candidates(const float* map, int64_t pitch, int mw, int mh, int tw, int th, double threshold,
                        std::vector<Candidate>* out) {
  out->clear();
  const int cw = cell_side(tw), ch = cell_side(th);
  for (int v0 = 0; v0 < mh; v0 += ch) {
    const int v1 = std::min(mh, v0 + ch);
    for (int u0 = 0; u0 < mw; u0 += cw) {
      const int u1 = std::min(mw, u0 + cw);
      // Row-major scan with a strict comparison: ties keep the lowest y, then the lowest x.
      float best = map[static_cast<int64_t>(v0) * pitch + u0];
      int bu = u0, bv = v0;
      for (int v = v0; v < v1; ++v) {
        const float* row = map + static_cast<int64_t>(v) * pitch;
        for (int u = u0; u < u1; ++u) {
          if (row[u] > best) {
            best = row[u];
            bu = u;
            bv = v;
          }
        }
      }
      if (static_cast<double>(best) >= threshold) {
        Candidate c;
        c.u = bu;
        c.v = bv;
        c.score = best;
        subpixel_at(map, pitch, mw, mh, bu, bv, &c.dx, &c.dy);
        out->push_back(c);
      }
    }
  }
}

void select_matches(Candidate* candidates, int count, const Rect& search, int tw, int th, int max_matches,
                    std::vector<Match>* matches) {
  matches->clear();
  // Best first: higher score, then lower v, then lower u (positions are unique: a strict order).
  auto better = [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.v != b.v) return a.v < b.v;
    return a.u < b.u;
  };
  const int limit = std::min(max_matches, kMaxMatches);
  int remaining = count;
  while (remaining > 0 && static_cast<int>(matches->size()) < limit) {
    int best = 0;
    for (int i = 1; i < remaining; ++i)
      if (better(candidates[i], candidates[best])) best = i;
    const Candidate kept = candidates[best];
    // Drop it and every candidate its box overlaps (two boxes of the same size intersect, IoU > 0,
    // iff they are closer than a side on both axes): none of those could be kept later.
    int w = 0;
    for (int i = 0; i < remaining; ++i)
      if (std::abs(candidates[i].u - kept.u) >= tw || std::abs(candidates[i].v - kept.v) >= th)
        candidates[w++] = candidates[i];
    remaining = w;
    Match m;
    m.x = search.x + kept.u;
    m.y = search.y + kept.v;
    m.width = tw;
    m.height = th;
    m.sub_x = m.x + kept.dx;
    m.sub_y = m.y + kept.dy;
    m.score = kept.score;
    matches->push_back(m);
  }
}

// A box writes the bytes of a packed pixel that come before its padding byte (write_bytes); a
// format with padding anywhere but last would need a byte mask instead.
constexpr bool padding_is_last_byte() {
  for (const PixelFormatInfo& f : kPixelFormats)
    if (f.padding >= 0 && f.padding != f.packed_bytes - 1) return false;
  return true;
}
static_assert(padding_is_last_byte(), "box_colour writes every byte before the padding byte");

BoxColour box_colour(PixelFormat format, const BoxStyle& style) {
  BoxColour bc;
  const int r = style.r, g = style.g, b = style.b;
  const PixelFormatInfo& f = pixel_format_info(format);
  if (f.packed_bytes == 1) {  // gray
    bc.c[0] = gray_from_rgb(r, g, b);
    bc.write_bytes = 1;
  } else if (f.packed_bytes > 1) {
    bc.c[f.r] = static_cast<uint8_t>(r);
    bc.c[f.g] = static_cast<uint8_t>(g);
    bc.c[f.b] = static_cast<uint8_t>(b);
    if (f.alpha >= 0) bc.c[f.alpha] = 255;
    bc.write_bytes = f.padding >= 0 ? f.padding : f.packed_bytes;
  }
  // BT.601, limited range (Y 16..235, Cb/Cr 16..240), rounded to nearest.
  bc.y = clamp_u8(16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0);
  bc.u = clamp_u8(128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0);
  bc.v = clamp_u8(128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0);
  return bc;
}

}  // namespace tm
}  // namespace cudaprep
