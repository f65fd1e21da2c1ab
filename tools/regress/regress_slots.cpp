#include "regress_slots.h"

#include <gst/gst.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

namespace regress {

namespace {

std::string fmt(double v) { return format_short(v, 6); }

void fail(SlotResult* s, const std::string& why) {
  s->pass = false;
  s->problem += (s->problem.empty() ? "" : "; ") + why;
}

std::string int_text(int64_t v) { return v < 0 ? std::string("none") : std::to_string(v); }

}  // namespace

double transform_delta(const Transform& a, const Transform& b) {
  double d = 0;
  auto upd = [&](double x, double y) { d = std::max(d, (x == y) ? 0.0 : std::fabs(x - y)); };
  upd(a.source_w, b.source_w);
  upd(a.source_h, b.source_h);
  upd(a.tensor_w, b.tensor_w);
  upd(a.tensor_h, b.tensor_h);
  for (int i = 0; i < 6; i++) upd(a.src_to_tensor[i], b.src_to_tensor[i]);
  for (int i = 0; i < 6; i++) upd(a.tensor_to_src[i], b.tensor_to_src[i]);
  for (int i = 0; i < 4; i++) upd(a.active_rect[i], b.active_rect[i]);
  return std::isnan(d) ? INFINITY : d;
}

std::string transform_fields_differing(const SlotEntry& a, const SlotEntry& b, double* delta) {
  std::string fields;
  *delta = 0;
  auto field = [&](const char* name, const double* x, const double* y, int n) {
    double d = 0;
    for (int k = 0; k < n; k++) {
      const double diff = x[k] == y[k] ? 0.0 : std::fabs(x[k] - y[k]);
      if (!(diff <= d)) d = diff;  // NaN sticks
    }
    if (!(d <= *delta)) *delta = d;
    if (!(d <= kTransformTolerance)) fields += std::string(fields.empty() ? "" : ", ") + name;
  };
  if (a.transform.present && b.transform.present) {
    const Transform &p = a.transform, &q = b.transform;
    const double ps[2] = {(double)p.source_w, (double)p.source_h}, qs[2] = {(double)q.source_w, (double)q.source_h};
    const double pt[2] = {(double)p.tensor_w, (double)p.tensor_h}, qt[2] = {(double)q.tensor_w, (double)q.tensor_h};
    field("source", ps, qs, 2);
    field("tensor", pt, qt, 2);
    field("src_to_tensor", p.src_to_tensor, q.src_to_tensor, 6);
    field("tensor_to_src", p.tensor_to_src, q.tensor_to_src, 6);
    field("active_rect", p.active_rect, q.active_rect, 4);
  }
  field("source_rect", a.source_rect, b.source_rect, 4);
  if (std::isnan(*delta)) *delta = INFINITY;
  return fields;
}

uint64_t caps_batch(const std::string& text) {
  TensorCapsText c;
  if (!static_tensor_caps(text, &c) || c.num_tensors != 1 || c.dimensions.size() != 1) return 0;
  gchar** comps = g_strsplit(c.dimensions[0].c_str(), ":", -1);
  uint64_t batch = 1;
  if (g_strv_length(comps) >= 4) {
    gchar* end = nullptr;
    const guint64 v = g_ascii_strtoull(g_strstrip(comps[3]), &end, 10);
    batch = (end && *end == '\0' && v > 0) ? v : 0;  // "0" or text: not fixed
  }
  g_strfreev(comps);
  return batch;
}

/* ---- JSON ------------------------------------------------------------------------------- */

Json slots_to_json(const std::vector<SlotEntry>& slots) {
  Json a = Json::array();
  for (const SlotEntry& s : slots) {
    Json o = Json::object();
    o.set("tensor", Json::integer(s.tensor));
    o.set("slot", Json::integer(s.slot));
    o.set("empty", Json::boolean(s.empty));
    o.set("region_index", Json::integer(s.region_index));
    o.set("region_id", Json::integer(s.region_id));
    o.set("source_pts", s.source_pts < 0 ? Json::null() : Json::integer(s.source_pts));
    if (!s.source_pad.empty()) o.set("source_pad", Json::string(s.source_pad));
    Json rect = Json::array();
    for (double v : s.source_rect) rect.push(Json::number(v));
    o.set("source_rect", rect);
    o.set("sha256", Json::string(s.sha256));
    if (s.transform.present) o.set("transform", transform_to_json(s.transform));
    a.push(o);
  }
  return a;
}

bool slots_from_json(const Json& j, std::vector<SlotEntry>* slots, std::string* error) {
  slots->clear();
  if (!j.is_array()) {
    *error = "\"slots\" is not a list";
    return false;
  }
  for (size_t i = 0; i < j.size(); i++) {
    const Json& o = j.at(i);
    SlotEntry s;
    int64_t tensor, slot, region_index, region_id, pts = -1;
    const Json& rect = o["source_rect"];
    bool ok = o["tensor"].get_int(&tensor) && tensor >= 0 && o["slot"].get_int(&slot) && slot >= 0 &&
              o["empty"].get_bool(&s.empty) && o["region_index"].get_int(&region_index) &&
              o["region_id"].get_int(&region_id) && (o["source_pts"].is_null() || o["source_pts"].get_int(&pts)) &&
              o["sha256"].get_string(&s.sha256) && s.sha256.size() == 64 && rect.is_array() && rect.size() == 4;
    for (size_t k = 0; ok && k < 4; k++) ok = rect.at(k).get_double(&s.source_rect[k]);
    if (ok && o.has("source_pad")) ok = o["source_pad"].get_string(&s.source_pad);
    if (ok && o["transform"].is_object()) ok = transform_from_json(o["transform"], &s.transform);
    if (!ok) {
      *error = "slots[" + std::to_string(i) +
               "] is malformed (tensor, slot, empty, region_index, region_id, "
               "source_pts, source_rect, sha256, transform)";
      return false;
    }
    s.tensor = (uint32_t)tensor;
    s.slot = (uint32_t)slot;
    s.region_index = (int)region_index;
    s.region_id = (int)region_id;
    s.source_pts = pts;
    slots->push_back(s);
  }
  return true;
}

/* ---- consistency ------------------------------------------------------------------------ */

bool check_frame_tensors(const TensorEntry& t, uint64_t tensor_bytes, uint64_t batch, std::string* why) {
  if (t.tensors == 0) {
    *why = "field \"tensors\" is 0: a frame has at least one tensor";
    return false;
  }
  if (tensor_bytes && t.bytes != t.tensors * tensor_bytes) {
    *why = "field \"bytes\" is " + std::to_string(t.bytes) + " but the manifest's field \"caps\" makes " +
           std::to_string(tensor_bytes) +
           (t.tensors == 1
                ? std::string(" bytes a frame")
                : " bytes a tensor, and the frame has " + std::to_string(t.tensors) + " tensors (field \"tensors\")");
    return false;
  }
  if (t.slots.empty()) {
    if (t.tensors > 1) {
      *why = "field \"tensors\" is " + std::to_string(t.tensors) + " but the frame has no \"slots\"";
      return false;
    }
    return true;
  }
  if (t.slots.size() % t.tensors != 0 || (batch && t.slots.size() != t.tensors * batch)) {
    *why = "field \"slots\" has " + std::to_string(t.slots.size()) + " slots but the frame has " +
           std::to_string(t.tensors) + (t.tensors == 1 ? " tensor" : " tensors") + " of batch " +
           (batch ? std::to_string(batch) + " (the manifest's caps)" : std::string("(unknown)"));
    return false;
  }
  if (t.bytes % t.slots.size() != 0) {
    *why = "field \"bytes\" (" + std::to_string(t.bytes) + ") is not a whole number of its " +
           std::to_string(t.slots.size()) + " slots";
    return false;
  }
  const uint64_t per_tensor = t.slots.size() / t.tensors;
  for (size_t i = 0; i < t.slots.size(); i++)
    if (t.slots[i].tensor != i / per_tensor || t.slots[i].slot != i % per_tensor) {
      *why = "slots[" + std::to_string(i) + "] says tensor " + std::to_string(t.slots[i].tensor) + " slot " +
             std::to_string(t.slots[i].slot) + ", expected tensor " + std::to_string(i / per_tensor) + " slot " +
             std::to_string(i % per_tensor);
      return false;
    }
  return true;
}

bool continues_frame(const TensorEntry& frame, const TensorEntry& tensor, int tensor_index) {
  const std::vector<SlotEntry>& before = frame.slots;
  if (tensor.pts != frame.pts || tensor.slots.empty() || before.size() < tensor.slots.size()) return false;
  if (tensor_index >= 0) return tensor_index > 0 && (uint32_t)tensor_index == frame.tensors;
  int last = -1;
  for (size_t i = before.size() - tensor.slots.size(); i < before.size(); i++) {
    if (before[i].empty) return false;
    last = before[i].region_index;
  }
  return last >= 0 && tensor.slots[0].region_index > last;
}

void digest_slots(const uint8_t* data, uint64_t bytes, std::vector<SlotEntry>* slots) {
  if (slots->empty()) return;
  const uint64_t each = bytes / slots->size();
  for (size_t i = 0; i < slots->size(); i++) (*slots)[i].sha256 = sha256_hex(data + i * each, each);
}

FrameDigest::FrameDigest(uint64_t bytes, std::vector<SlotEntry>* slots) : slots_(slots) {
  if (!slots->empty()) {
    each_ = bytes / slots->size();
    covered_ = each_ * slots->size();
  }
}

void FrameDigest::update(const uint8_t* data, size_t n) {
  // pieces small enough to stay in the L2 cache between the frame's digest and the slot's
  for (size_t off = 0; off < n; off += kFramePiece) update_piece(data + off, std::min(kFramePiece, n - off));
}

void FrameDigest::update_piece(const uint8_t* data, size_t n) {
  frame_.update(data, n);
  while (n && offset_ < covered_) {  // split at the slots' ends
    const uint64_t slot_end = (slot_ + 1) * each_;
    const size_t k = (size_t)std::min<uint64_t>(n, slot_end - offset_);
    slot_digest_.update(data, k);
    offset_ += k;
    data += k;
    n -= k;
    if (offset_ == slot_end) (*slots_)[slot_++].sha256 = slot_digest_.hex();
  }
  offset_ += n;  // what the even split leaves over, in no slot
}

std::string FrameDigest::finish() {
  for (; slot_ < slots_->size(); slot_++) (*slots_)[slot_].sha256 = slot_digest_.hex();  // empty slots
  return frame_.hex();
}

std::string digest_frame(const uint8_t* data, uint64_t bytes, std::vector<SlotEntry>* slots) {
  FrameDigest d(bytes, slots);
  d.update(data, (size_t)bytes);
  return d.finish();
}

FramePass::FramePass(uint8_t* out, uint64_t bytes, DType t, std::vector<SlotEntry>* slots)
    : out_(out), element_(dtype_size(t)), digest_(bytes, slots), stats_(t) {
  stats_end_ = bytes - bytes % element_;
}

void FramePass::add(const uint8_t* data, size_t n) {
  while (n) {
    const size_t k = std::min(n, kFramePiece);
    uint8_t* piece = out_ + written_;
    memcpy(piece, data, k);
    written_ += k;
    data += k;
    n -= k;
    digest_.update(piece, k);
    const uint64_t whole = (std::min(written_, stats_end_) - stats_done_) / element_;
    if (whole) {
      stats_.add(out_ + stats_done_, (size_t)whole);
      stats_done_ += whole * element_;
    }
  }
}

std::string FramePass::finish(TensorStats* stats) {
  *stats = stats_.finish();
  return digest_.finish();
}

bool pass_frame(const std::vector<FramePart>& parts, DType t, const TensorEntry* expected, TensorEntry* e,
                std::vector<uint8_t>* out) {
  uint64_t total = 0;
  for (const FramePart& part : parts) total += part.second;
  e->bytes = total;
  if (expected && expected->bytes == total && expected->slots.size() == e->slots.size() && !expected->sha256.empty()) {
    FrameDigest digest(total, &e->slots);
    for (const FramePart& part : parts) digest.update(part.first, part.second);
    e->sha256 = digest.finish();
    if (e->sha256 == expected->sha256) {
      e->stats = expected->stats;
      out->clear();
      return false;
    }
  }
  out->resize(total);  // (keeps its capacity)
  FramePass pass(out->data(), total, t, &e->slots);
  for (const FramePart& part : parts) pass.add(part.first, part.second);
  e->sha256 = pass.finish(&e->stats);
  return true;
}

std::string slot_name(const SlotEntry& s, bool several_tensors) {
  std::string name = several_tensors ? "tensor " + std::to_string(s.tensor) + " slot " + std::to_string(s.slot)
                                     : "slot " + std::to_string(s.slot);
  if (s.empty) return name + " (empty)";
  if (s.region_index >= 0) name += " (region " + std::to_string(s.region_index) + ")";
  if (!s.source_pad.empty()) name += " (" + s.source_pad + ")";
  return name;
}

/* ---- comparison ------------------------------------------------------------------------- */

std::vector<SlotResult> compare_slots(const TensorEntry& ref, const uint8_t* ref_data, const TensorEntry& run,
                                      const uint8_t* run_data, DType type, const TensorTolerance& tol,
                                      const std::string& rl, const std::string& ul) {
  std::vector<SlotResult> out;
  const size_t n = std::max(ref.slots.size(), run.slots.size());
  const bool several = ref.tensors > 1 || run.tensors > 1;
  const uint64_t ref_each = ref.slots.empty() ? 0 : ref.bytes / ref.slots.size();
  const uint64_t run_each = run.slots.empty() ? 0 : run.bytes / run.slots.size();
  for (size_t i = 0; i < n; i++) {
    SlotResult s;
    s.ref_present = i < ref.slots.size();
    s.run_present = i < run.slots.size();
    const SlotEntry& a = s.ref_present ? ref.slots[i] : run.slots[i];
    const SlotEntry& b = s.run_present ? run.slots[i] : ref.slots[i];
    s.name = slot_name(a, several);
    s.ref_empty = a.empty;
    s.run_empty = b.empty;
    if (!s.ref_present || !s.run_present) {
      fail(&s, "slot only in " + (s.ref_present ? rl : ul));
      out.push_back(s);
      continue;
    }
    if (a.empty != b.empty)
      fail(&s, std::string(a.empty ? "empty" : "filled") + " in " + rl + ", " + (b.empty ? "empty" : "filled") +
                   " in " + ul);
    if (a.source_pad != b.source_pad)
      fail(&s, "camera (source pad) '" + a.source_pad + "' in " + rl + ", '" + b.source_pad + "' in " + ul);
    if (a.region_index != b.region_index)
      fail(&s, "region index " + std::to_string(a.region_index) + " in " + rl + ", " + std::to_string(b.region_index) +
                   " in " + ul);
    if (a.region_id != b.region_id)
      fail(&s,
           "region id " + std::to_string(a.region_id) + " in " + rl + ", " + std::to_string(b.region_id) + " in " + ul);
    if (a.source_pts != b.source_pts)
      fail(&s, "source pts " + int_text(a.source_pts) + " in " + rl + ", " + int_text(b.source_pts) + " in " + ul);
    if (a.transform.present != b.transform.present) {
      fail(&s, "slot transform only in " + (a.transform.present ? rl : ul));
    } else {
      const std::string fields = transform_fields_differing(a, b, &s.transform_delta);
      if (!fields.empty()) fail(&s, "slot transform differs by " + fmt(s.transform_delta) + " (" + fields + ")");
    }
    if (ref_each != run_each) {
      fail(&s, "slot size differs: " + rl + " " + std::to_string(ref_each) + " bytes, " + ul + " " +
                   std::to_string(run_each) + " bytes");
    } else if (ref_data && run_data) {
      s.data_compared = true;
      s.diff = diff_tensors(ref_data + i * ref_each, ref_each, run_data + i * run_each, run_each, type);
      s.identical = s.diff.identical;
      const std::string why = tensor_diff_failure(s.diff, tol);
      if (!why.empty()) fail(&s, why);
    } else {
      s.identical = a.sha256 == b.sha256;
      if (!s.identical) fail(&s, "SHA-256 differs (digest-only: exact comparison only)");
    }
    out.push_back(s);
  }
  return out;
}

/* ---- report ----------------------------------------------------------------------------- */

std::string slot_line(const SlotResult& s, const std::string& rl, const std::string& ul) {
  std::string name = s.name;
  name.resize(std::max<size_t>(name.size(), 28), ' ');
  std::string line = "          " + name + " " + (s.pass ? "ok    " : "FAIL  ");
  if (!s.ref_present || !s.run_present)
    line += "only in " + (s.ref_present ? rl : ul);
  else if (s.identical)
    line += "identical";
  else if (s.data_compared)
    line += "max-abs " + fmt(s.diff.max_abs) + " (element " + std::to_string(s.diff.worst_index) + "), PSNR " +
            fmt(s.diff.psnr) + " dB, " + std::to_string(s.diff.differing) + " of " + std::to_string(s.diff.count) +
            " values differ";
  else
    line += "SHA-256 differs";
  if (!s.pass) line += "  <- " + s.problem;
  return line;
}

void slot_summary_to(std::ostringstream& o,
                     const std::vector<std::pair<uint64_t, const std::vector<SlotResult>*>>& frames) {
  struct Position {
    std::string name;
    uint64_t compared = 0, failing = 0, empty = 0, count = 0, worst = 0;
    bool figures = true;
    double max_abs = 0, sum_sq = 0, peak = 1;  // PSNR peak: the largest of the slots' reference ranges
  };
  std::vector<Position> positions;  // by slot index, in order
  for (const auto& [frame, slots] : frames)
    for (size_t i = 0; i < slots->size(); i++) {
      const SlotResult& s = (*slots)[i];
      if (positions.size() <= i) positions.resize(i + 1);
      Position& p = positions[i];
      if (p.name.empty()) p.name = s.name.substr(0, s.name.find(" ("));  // the region may vary by frame
      if (!s.ref_present || !s.run_present) continue;
      p.compared++;
      if (!s.pass) p.failing++;
      if (s.ref_empty) p.empty++;
      if (!s.data_compared) {
        p.figures = p.figures && s.identical;
        continue;
      }
      p.count += s.diff.count;
      p.sum_sq += s.diff.sum_sq;
      p.peak = std::max(p.peak, s.diff.peak);
      if (s.diff.max_abs > p.max_abs || std::isnan(s.diff.max_abs)) {
        p.max_abs = s.diff.max_abs;
        p.worst = frame;
      }
    }
  for (const Position& p : positions) {
    o << "    " << p.name << ": " << p.compared << " frames compared, " << p.failing << " failing, " << p.empty
      << " empty";
    if (p.figures) {
      o << "; max abs diff " << fmt(p.max_abs);
      if (p.max_abs > 0) o << " (frame " << p.worst << ")";
      o << ", PSNR " << (p.sum_sq == 0 ? std::string("inf") : fmt(psnr_db(p.sum_sq, p.count ? p.count : 1, p.peak)))
        << " dB";
    } else {
      o << "; per-value figures n/a (digest-only recording)";
    }
    o << "\n";
  }
}

}  // namespace regress
