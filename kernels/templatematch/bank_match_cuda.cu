// CUDA bank matcher (bank_match.h). Per frame, on the caller's stream, no allocation: the members'
// regions are copied from pinned memory, bank_scores_kernel scores every member in its region
// (one launch), bank_peaks_kernel turns the cells that reach their threshold into candidates in
// mapped pinned memory and clears the cells (one launch), then one stream synchronisation and the
// host's suppression (select_bank_matches, shared with the CPU path).
//
// bank_scores_kernel: a block owns a tile of 32 x 16 positions; it stages the frame bytes under
// the tile and its largest member once in shared memory, then, member after member, each thread
// sums its 4 consecutive positions with dp4a: sum(MT * I), sum(M * I) and sum(M * I^2) (the
// window's bytes ANDed with the mask's bytes: I * I where M), all exact in 32 bits, and takes the
// score from the same formula as the CPU path. Each cell's best position is kept with a 64-bit
// atomicMax of (ordered score, inverted position), first over the block in shared memory, then
// over the blocks in the member's cell keys.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bank_match.h"
#include "cuda_device.h"
#include "cuda_status.h"
#include "templatematch_internal.h"

namespace cudaprep {

namespace {

constexpr int kTileX = 32, kTileY = 16, kThreads = 128;  // a thread: 4 consecutive positions of one row
constexpr int kLocalCells = 64;                          // cells of >= 4 x 4 positions a tile can touch: at most 9 x 5
constexpr int kMaxCandidates = 1 << 18;

struct MemberDev {
  const uint8_t* templ;  // th rows of kp bytes: T where the mask is set, else 0
  const uint8_t* mask;   // th rows of kp bytes: 1 where the mask is set, else 0
  int tw, th, kp, masked;
  long long n, st, var_t;
  int cw, ch;
  unsigned long long* keys;  // the cells of a whole-frame search, 0 between frames
};

// Per frame: the member's region (mw == 0: not searched).
struct MemberRegion {
  int rx, ry, mw, mh, ncx, ncy;
  float* map;  // score_map(): the member's scores, else null
  double threshold;
};
static_assert(sizeof(MemberRegion) == 40, "MemberRegion");

struct BankParams {
  const uint8_t* frame;
  long long stride;
  int fw, fh;
  const MemberDev* members;
  const MemberRegion* regions;
  int count;
  int bx, by;       // first position of the tiles (the regions' union)
  int rows, pitch;  // staged tile: rows x pitch bytes
  BankCandidate* out;
  unsigned* out_count;
  unsigned capacity;
};

__device__ __forceinline__ unsigned long long cell_key(float score, unsigned position) {
  const unsigned bits = __float_as_uint(score);
  const unsigned ordered = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<unsigned long long>(ordered) << 32) | ~position;
}

__device__ __forceinline__ float key_score(unsigned long long key) {
  const unsigned ordered = static_cast<unsigned>(key >> 32);
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

__global__ void __launch_bounds__(kThreads) bank_scores_kernel(const BankParams p) {
  extern __shared__ __align__(16) uint8_t tile[];
  __shared__ unsigned long long cell_keys[kLocalCells];
  const int x0 = p.bx + blockIdx.x * kTileX, y0 = p.by + blockIdx.y * kTileY;

  // Stage the frame bytes of the tile (zero outside the frame: only padded template columns,
  // which are zero, read them).
  uint32_t* words = reinterpret_cast<uint32_t*>(tile);
  const int wpr = p.pitch / 4;
  for (int i = threadIdx.x; i < p.rows * wpr; i += kThreads) {
    const int r = i / wpr, c = (i % wpr) * 4;
    const int y = y0 + r;
    uint32_t w = 0;
    if (y < p.fh) {
      const uint8_t* row = p.frame + y * p.stride;
      for (int k = 3; k >= 0; --k) {
        const int x = x0 + c + k;
        w = (w << 8) | (x < p.fw ? row[x] : 0u);
      }
    }
    words[i] = w;
  }
  __syncthreads();

  const int tx = threadIdx.x % 8, ty = threadIdx.x / 8;
  const int px = x0 + 4 * tx, py = y0 + ty;
  for (int m = 0; m < p.count; ++m) {
    const MemberRegion rg = p.regions[m];
    if (rg.mw == 0) continue;
    // The tile's positions in this member's map; the block skips members it has none of.
    const int u_first = max(x0 - rg.rx, 0), u_last = min(x0 + kTileX - 1 - rg.rx, rg.mw - 1);
    const int v_first = max(y0 - rg.ry, 0), v_last = min(y0 + kTileY - 1 - rg.ry, rg.mh - 1);
    if (u_first > u_last || v_first > v_last) continue;
    const MemberDev md = p.members[m];
    const int cx0 = u_first / md.cw, cy0 = v_first / md.ch;
    const int ncl_x = u_last / md.cw - cx0 + 1, ncl = ncl_x * (v_last / md.ch - cy0 + 1);
    if (threadIdx.x < kLocalCells) cell_keys[threadIdx.x] = 0;
    __syncthreads();

    uint32_t sti[4] = {0, 0, 0, 0}, s1[4] = {0, 0, 0, 0}, s2[4] = {0, 0, 0, 0};
    const int chunks = md.kp / 4;
    for (int j = 0; j < md.th; ++j) {
      const uint32_t* srow = words + (ty + j) * wpr + tx;
      const uint32_t* trow = reinterpret_cast<const uint32_t*>(md.templ + j * md.kp);
      const uint32_t* mrow = reinterpret_cast<const uint32_t*>(md.mask + j * md.kp);
      uint32_t lo = srow[0];
      for (int c = 0; c < chunks; ++c) {
        const uint32_t hi = srow[c + 1];
        const uint32_t t4 = __ldg(trow + c), m4 = __ldg(mrow + c);
        if (m4 != 0) {
          const uint32_t mff = m4 * 255u;  // 1 -> 0xff per byte
#pragma unroll
          for (int s = 0; s < 4; ++s) {
            const uint32_t win = __funnelshift_r(lo, hi, 8 * s);
            sti[s] = __dp4a(win, t4, sti[s]);
            s1[s] = __dp4a(win, m4, s1[s]);
            s2[s] = __dp4a(win, win & mff, s2[s]);
          }
        }
        lo = hi;
      }
    }
    const int v = py - rg.ry;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int u = px + s - rg.rx;
      if (u < 0 || u >= rg.mw || v < 0 || v >= rg.mh) continue;
      const float score = tm::bank_ccoeff_normed(md.n, md.st, md.var_t, s1[s], s2[s], sti[s], md.masked != 0);
      if (rg.map) rg.map[static_cast<long long>(v) * rg.mw + u] = score;
      if (isnan(score)) continue;
      const int local = (v / md.ch - cy0) * ncl_x + (u / md.cw - cx0);
      atomicMax(&cell_keys[local], cell_key(score, static_cast<unsigned>(v) * rg.mw + u));
    }
    __syncthreads();
    if (threadIdx.x < ncl) {
      const unsigned long long key = cell_keys[threadIdx.x];
      const int cx = cx0 + threadIdx.x % ncl_x, cy = cy0 + threadIdx.x / ncl_x;
      if (key != 0) atomicMax(&md.keys[cy * rg.ncx + cx], key);
    }
    __syncthreads();
  }
}

// The score of one position read straight from the frame (the peaks' neighbours).
__device__ float score_at(const BankParams& p, const MemberDev& md, const MemberRegion& rg, int u, int v) {
  uint32_t sti = 0, s1 = 0, s2 = 0;
  for (int j = 0; j < md.th; ++j) {
    const uint8_t* row = p.frame + (rg.ry + v + j) * p.stride + rg.rx + u;
    for (int i = 0; i < md.tw; ++i) {
      const uint32_t px = row[i], mk = md.mask[j * md.kp + i];
      sti += px * md.templ[j * md.kp + i];
      s1 += px * mk;
      s2 += px * px * mk;
    }
  }
  return tm::bank_ccoeff_normed(md.n, md.st, md.var_t, s1, s2, sti, md.masked != 0);
}

__global__ void bank_peaks_kernel(const BankParams p) {
  const int m = blockIdx.y;
  const MemberRegion rg = p.regions[m];
  if (rg.mw == 0) return;
  const MemberDev md = p.members[m];
  const int cells = rg.ncx * rg.ncy;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < cells; i += gridDim.x * blockDim.x) {
    const unsigned long long key = md.keys[i];
    if (key == 0) continue;
    md.keys[i] = 0;
    const float score = key_score(key);
    if (!(static_cast<double>(score) >= rg.threshold)) continue;
    const unsigned position = ~static_cast<unsigned>(key);
    const int u = static_cast<int>(position % rg.mw), v = static_cast<int>(position / rg.mw);
    BankCandidate c;
    c.x = rg.rx + u;
    c.y = rg.ry + v;
    c.score = score;
    c.member = m;
    c.dx = (u > 0 && u < rg.mw - 1)
               ? tm::parabola_offset(score_at(p, md, rg, u - 1, v), score, score_at(p, md, rg, u + 1, v))
               : 0.0;
    c.dy = (v > 0 && v < rg.mh - 1)
               ? tm::parabola_offset(score_at(p, md, rg, u, v - 1), score, score_at(p, md, rg, u, v + 1))
               : 0.0;
    const unsigned slot = atomicAdd(p.out_count, 1u);
    if (slot < p.capacity) p.out[slot] = c;
  }
}

}  // namespace

struct BankMatcherCuda::Impl {
  void* stream = nullptr;
  int fw = 0, fh = 0;
  TemplateBank bank;
  std::vector<MemberStats> stats;
  std::vector<MemberDev> members;  // device pointers
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev;
  cuda::PinnedBuffer regions_host, out;  // out: a counter (16 bytes), then the candidates
  int max_kp = 0, max_th = 0, smem_needed = 0;
  std::vector<BankCandidate> candidates, selected;

  Status enqueue(const GrayView& frame, const BankSearch& search, float* map_of_member, int map_member) {
    const int count = static_cast<int>(bank.members.size());
    MemberRegion* regions = reinterpret_cast<MemberRegion*>(regions_host.data());
    int bx0 = frame.width, by0 = frame.height, bx1 = 0, by1 = 0;
    for (int m = 0; m < count; ++m) {
      MemberRegion rg{};
      const Rect& r = search.regions[m];
      if (!r.empty()) {
        CUDAPREP_RETURN_IF_ERROR(check_member_region(bank, m, frame.width, frame.height, r));
        const MemberDev& md = members[m];
        rg.rx = r.x;
        rg.ry = r.y;
        rg.mw = r.w - md.tw + 1;
        rg.mh = r.h - md.th + 1;
        rg.ncx = (rg.mw + md.cw - 1) / md.cw;
        rg.ncy = (rg.mh + md.ch - 1) / md.ch;
        rg.map = m == map_member ? map_of_member : nullptr;
        rg.threshold = search.thresholds[bank.members[m].template_index];
        bx0 = std::min(bx0, rg.rx);
        by0 = std::min(by0, rg.ry);
        bx1 = std::max(bx1, rg.rx + rg.mw);
        by1 = std::max(by1, rg.ry + rg.mh);
      }
      regions[m] = rg;
    }
    unsigned* counter = reinterpret_cast<unsigned*>(out.data());
    *counter = 0;  // the previous frame's kernels are done: match() waited for them
    candidates.clear();
    if (bx1 <= bx0 || by1 <= by0) return Status();
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(regions_dev.data(), regions, sizeof(MemberRegion) * count,
                                                         cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)),
                                         "cudaMemcpyAsync (bank regions)"));
    BankParams p;
    p.frame = frame.data;
    p.stride = frame.stride;
    p.fw = frame.width;
    p.fh = frame.height;
    p.members = reinterpret_cast<const MemberDev*>(members_dev.data());
    p.regions = reinterpret_cast<const MemberRegion*>(regions_dev.data());
    p.count = count;
    p.bx = bx0;
    p.by = by0;
    p.rows = kTileY + max_th - 1;
    p.pitch = kTileX + max_kp + 4;
    p.out = reinterpret_cast<BankCandidate*>(out.device_data() + 32);
    p.out_count = reinterpret_cast<unsigned*>(out.device_data());
    p.capacity = kMaxCandidates;
    const dim3 grid((bx1 - bx0 + kTileX - 1) / kTileX, (by1 - by0 + kTileY - 1) / kTileY);
    const size_t smem = static_cast<size_t>(p.rows) * p.pitch;
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    bank_scores_kernel<<<grid, kThreads, smem, s>>>(p);
    CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "bank_scores_kernel launch"));
    int most_cells = 0;
    for (int m = 0; m < count; ++m) most_cells = std::max(most_cells, regions[m].ncx * regions[m].ncy);
    const dim3 peaks_grid(std::min((most_cells + 255) / 256, 64), count);
    bank_peaks_kernel<<<peaks_grid, 256, 0, s>>>(p);
    return cuda_status(cudaGetLastError(), "bank_peaks_kernel launch");
  }

  Status collect() {
    CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(stream));
    const unsigned count = *reinterpret_cast<const unsigned*>(out.data());
    if (count > static_cast<unsigned>(kMaxCandidates))
      return Status::error(std::to_string(count) + " cells reach their threshold, more than the " +
                           std::to_string(kMaxCandidates) + " a frame can hold: raise the threshold");
    const BankCandidate* c = reinterpret_cast<const BankCandidate*>(out.data() + 32);
    candidates.assign(c, c + count);
    sort_bank_candidates(&candidates);  // the kernel lists them in no particular order
    return Status();
  }
};

BankMatcherCuda::BankMatcherCuda() : impl_(new Impl) {}
BankMatcherCuda::~BankMatcherCuda() { release(); }

void BankMatcherCuda::release() {
  if (impl_->stream) cuda::stream_sync(impl_->stream);
  impl_->templates.reset();
  impl_->keys.reset();
  impl_->members_dev.reset();
  impl_->regions_dev.reset();
  impl_->regions_host.reset();
  impl_->out.reset();
  impl_->bank = TemplateBank();
  impl_->members.clear();
}

const TemplateBank& BankMatcherCuda::bank() const { return impl_->bank; }
bool BankMatcherCuda::has_bank() const { return !impl_->bank.members.empty(); }
const std::vector<BankCandidate>& BankMatcherCuda::last_candidates() const { return impl_->candidates; }

Status BankMatcherCuda::configure(int frame_width, int frame_height, void* stream) {
  if (frame_width <= 0 || frame_height <= 0)
    return Status::error("invalid frame size " + std::to_string(frame_width) + "x" + std::to_string(frame_height));
  const bool resized = frame_width != impl_->fw || frame_height != impl_->fh;
  impl_->stream = stream;
  impl_->fw = frame_width;
  impl_->fh = frame_height;
  if (resized && has_bank()) {
    TemplateBank bank = impl_->bank;
    return set_bank(bank);  // the cell keys are sized for the frame
  }
  return Status();
}

Status BankMatcherCuda::set_bank(const TemplateBank& bank) {
  if (impl_->fw <= 0) return Status::error("configure() the matcher before setting a bank");
  std::vector<MemberStats> stats;
  CUDAPREP_RETURN_IF_ERROR(check_bank(bank, &stats));
  CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(impl_->stream));  // nothing of the old bank is in use after this
  const int count = static_cast<int>(bank.members.size());
  // Layout: each member's masked template, then its mask, rows padded to 4 bytes; the cells of
  // a whole-frame search per member.
  std::vector<size_t> templ_at(count), keys_at(count);
  size_t templ_bytes = 0, key_count = 0;
  int max_kp = 0, max_th = 0;
  std::vector<MemberDev> members(count);
  for (int m = 0; m < count; ++m) {
    const MaskedGray& g = bank.members[m].image;
    MemberDev& md = members[m];
    md.tw = g.width;
    md.th = g.height;
    md.kp = (g.width + 3) / 4 * 4;
    md.masked = g.masked() ? 1 : 0;
    md.n = stats[m].n;
    md.st = stats[m].st;
    md.var_t = stats[m].var_t;
    md.cw = tm::cell_side(g.width);
    md.ch = tm::cell_side(g.height);
    templ_at[m] = templ_bytes;
    templ_bytes += 2 * static_cast<size_t>(md.kp) * md.th;
    keys_at[m] = key_count;
    if (g.width <= impl_->fw && g.height <= impl_->fh)
      key_count +=
          static_cast<size_t>((impl_->fw - g.width + md.cw) / md.cw) * ((impl_->fh - g.height + md.ch) / md.ch);
    max_kp = std::max(max_kp, md.kp);
    max_th = std::max(max_th, md.th);
  }
  std::vector<uint8_t> host(templ_bytes, 0);
  for (int m = 0; m < count; ++m) {
    const MaskedGray& g = bank.members[m].image;
    uint8_t* t = host.data() + templ_at[m];
    uint8_t* k = t + static_cast<size_t>(members[m].kp) * g.height;
    for (int j = 0; j < g.height; ++j)
      for (int i = 0; i < g.width; ++i) {
        const size_t at = static_cast<size_t>(j) * g.width + i;
        const bool in = !g.masked() || g.mask[at];
        t[j * members[m].kp + i] = in ? g.pixels[at] : 0;
        k[j * members[m].kp + i] = in ? 1 : 0;
      }
  }
  Impl& d = *impl_;
  cuda::DeviceBuffer templates, keys, members_dev, regions_dev;
  cuda::PinnedBuffer regions_host, out;
  CUDAPREP_RETURN_IF_ERROR(templates.allocate(templ_bytes));
  CUDAPREP_RETURN_IF_ERROR(keys.allocate(std::max<size_t>(key_count, 1) * sizeof(unsigned long long)));
  CUDAPREP_RETURN_IF_ERROR(members_dev.allocate(sizeof(MemberDev) * count));
  CUDAPREP_RETURN_IF_ERROR(regions_dev.allocate(sizeof(MemberRegion) * count));
  CUDAPREP_RETURN_IF_ERROR(regions_host.allocate(sizeof(MemberRegion) * count));
  CUDAPREP_RETURN_IF_ERROR(out.allocate(32 + sizeof(BankCandidate) * kMaxCandidates));
  for (int m = 0; m < count; ++m) {
    members[m].templ = templates.data() + templ_at[m];
    members[m].mask = members[m].templ + static_cast<size_t>(members[m].kp) * members[m].th;
    members[m].keys = reinterpret_cast<unsigned long long*>(keys.data()) + keys_at[m];
  }
  cudaStream_t s = static_cast<cudaStream_t>(d.stream);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(templates.data(), host.data(), templ_bytes, cudaMemcpyHostToDevice, s),
                  "cudaMemcpyAsync (bank)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(
      cudaMemcpyAsync(members_dev.data(), members.data(), sizeof(MemberDev) * count, cudaMemcpyHostToDevice, s),
      "cudaMemcpyAsync (bank)"));
  CUDAPREP_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(keys.data(), 0, keys.bytes(), s), "cudaMemsetAsync (cells)"));
  const int smem = (kTileY + max_th - 1) * (kTileX + max_kp + 4);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaFuncSetAttribute(bank_scores_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                  "cudaFuncSetAttribute (bank tile)"));
  CUDAPREP_RETURN_IF_ERROR(cuda::stream_sync(d.stream));  // the host copies stay alive until here
  d.templates = std::move(templates);
  d.keys = std::move(keys);
  d.members_dev = std::move(members_dev);
  d.regions_dev = std::move(regions_dev);
  d.regions_host = std::move(regions_host);
  d.out = std::move(out);
  d.members = std::move(members);
  d.stats = std::move(stats);
  d.bank = bank;
  d.max_kp = max_kp;
  d.max_th = max_th;
  return Status();
}

Status BankMatcherCuda::match(const GrayView& device_frame, const BankSearch& search, bool suppress_across_templates,
                              std::vector<Match>* matches) {
  matches->clear();
  if (!has_bank()) return Status::error("no template bank set");
  CUDAPREP_RETURN_IF_ERROR(tm::check_gray(device_frame, "frame"));
  if (device_frame.width != impl_->fw || device_frame.height != impl_->fh)
    return Status::error("frame size differs from the configured one");
  CUDAPREP_RETURN_IF_ERROR(check_bank_search(impl_->bank, search));
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, search, nullptr, -1));
  CUDAPREP_RETURN_IF_ERROR(impl_->collect());
  impl_->selected = impl_->candidates;
  select_bank_matches(impl_->bank, search, suppress_across_templates, &impl_->selected, matches);
  return Status();
}

Status BankMatcherCuda::score_map(const GrayView& device_frame, int member, const Rect& region,
                                  std::vector<float>* scores, int* map_w, int* map_h) {
  if (!has_bank()) return Status::error("no template bank set");
  const int count = static_cast<int>(impl_->bank.members.size());
  if (member < 0 || member >= count) return Status::error("no member " + std::to_string(member) + " in the bank");
  const MemberDev& md = impl_->members[member];
  Rect r;
  CUDAPREP_RETURN_IF_ERROR(resolve_search_region(device_frame.width, device_frame.height, md.tw, md.th, region, &r));
  BankSearch one = BankSearch::over(impl_->bank, Rect{});
  one.regions[member] = r;
  const int mw = r.w - md.tw + 1, mh = r.h - md.th + 1;
  cuda::DeviceBuffer map;  // a test and diagnostics call: allocates
  CUDAPREP_RETURN_IF_ERROR(map.allocate(sizeof(float) * mw * mh));
  CUDAPREP_RETURN_IF_ERROR(impl_->enqueue(device_frame, one, reinterpret_cast<float*>(map.data()), member));
  CUDAPREP_RETURN_IF_ERROR(impl_->collect());
  scores->resize(static_cast<size_t>(mw) * mh);
  CUDAPREP_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(scores->data(), map.data(), sizeof(float) * mw * mh, cudaMemcpyDeviceToHost),
                  "cudaMemcpy (score map)"));
  *map_w = mw;
  *map_h = mh;
  return Status();
}

}  // namespace cudaprep
