/**
 * SECTION:element-cudatemplatematch
 * @title: cudatemplatematch
 *
 * Finds templates in every frame with OpenCV's TM_CCOEFF_NORMED score on luma (the Y plane of
 * NV12/NV21/I420 as is, the Y bytes of YUY2/UYVY, P010's luma rounded to 8 bits; gray as
 * cv::cvtColor(COLOR_BGR2GRAY) computes it for RGB-like formats): one template (template-location,
 * template-rect) or a labelled bank of up to 64 (templates, template-bank), each with an optional
 * mask (a PNG's alpha, template-mask, or the bank file's mask: OpenCV's masked score), at the
 * scales and angles asked for, optionally tracked (track: the next frame searches a window around
 * the last matches). Each match is reported four ways: a GstVideoRegionOfInterestMeta whose type is
 * its template's label ("template-match" for template-location and template-rect; its
 * "template-match" param holds score, sub-pixel x and y, template, scale, angle and full-search);
 * with GStreamer >= 1.24, a GstAnalyticsODMtd of the label (confidence = score) in the buffer's
 * GstAnalyticsRelationMeta; an element message "template-match" on the bus; and (draw=true) a
 * rectangle outline drawn into the frame, in CUDA memory too.
 * Frames are otherwise passed through unchanged.
 *
 * A window of the frame with no variance scores 0 (under a mask: no score, never a match). A
 * template with no variance (under its mask) is refused with an error. Matches of one template
 * are kept apart by non-maximum suppression: a match whose box overlaps a better one is dropped
 * (suppress-across-templates: also across templates). Template files are loaded at start, or when
 * set while playing in the setter's thread: the streaming thread never decodes.
 *
 * On the GPU the frame is read through CUDA texture objects made once per caps (and per pool
 * buffer), the template statistics once per template, and the only synchronisation per frame
 * is the wait for the short match list (gpu-wait: blocking by default, no CPU core spinning),
 * plus, when boxes are drawn into CUDA memory that does not carry the element's stream, a wait
 * for the drawing.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! qtdemux ! h264parse ! nvh264dec ! \
 *     cudatemplatematch template-location=logo.png threshold=0.7 max-matches=4 ! \
 *     cudadownload ! videoconvert ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 -m videotestsrc ! video/x-raw,format=BGR ! \
 *     cudatemplatematch template-rect="<100,80,48,48>" ! fakesink
 * ]|
 * |[
 * gst-launch-1.0 filesrc location=clip.mp4 ! qtdemux ! h264parse ! nvh264dec ! \
 *     cudatemplatematch templates="logo.png;sign.png" scales="<0.8,1,1.25>" track=true ! fakesink
 * ]|
 */
#include "gstcudatemplatematch.h"

#include <gst/video/gstvideometa.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "analytics_matches.h"
#include "frame_phases.h"
#include "frame_lifetime.h"
#include "frame_pool.h"
#include "pixel_format.h"
#include "property_arrays.h"
#include "bank_request.h"
#include "match_engine.h"
#include "templatematch.h"
#include "versioned_settings.h"

GST_DEBUG_CATEGORY_STATIC(gst_cuda_template_match_debug);
#define GST_CAT_DEFAULT gst_cuda_template_match_debug

using namespace cudaprep;

enum {
  PROP_0,
  PROP_TEMPLATE_LOCATION,
  PROP_TEMPLATE_RECT,
  PROP_SEARCH_REGION,
  PROP_THRESHOLD,
  PROP_MAX_MATCHES,
  PROP_DRAW,
  PROP_COLOR,
  PROP_THICKNESS,
  PROP_POST_MESSAGES,
  PROP_GPU_WAIT,
  PROP_TEMPLATE_MASK,
  PROP_TEMPLATES,
  PROP_TEMPLATE_BANK,
  PROP_SCALES,
  PROP_ANGLES,
  PROP_SUPPRESS_ACROSS_TEMPLATES,
  PROP_TRACK,
  PROP_TRACK_MARGIN,
  PROP_FULL_SEARCH_INTERVAL,
};

/* Properties, behind the object lock (versioned_settings.h); their defaults here are the ones
 * the param specs declare. Setting any of the template properties asks for a new bank
 * (template_request counts the requests: re-setting the same rectangle cuts the template again);
 * the one set last says where the bank comes from. */
/* A file-based bank as loaded for one request (or why it could not be). */
struct LoadedBank {
  guint64 request = 0;
  TemplateBank bank;
  std::string error;
};

struct MatchProps {
  BankRequest bank;                         /* source, files, scales, angles (threshold and max-matches below) */
  std::shared_ptr<const LoadedBank> loaded; /* the file-based bank, loaded when set (or at start) */
  std::vector<int> template_rect;
  guint64 template_request = 0;
  std::vector<int> search_region;
  double threshold = 0.8;
  int max_matches = 1;
  gboolean draw = TRUE;
  guint color = 0xff00ff00u; /* 0xAARRGGBB: opaque green */
  int thickness = 2;
  gboolean post_messages = TRUE;
  GpuWait gpu_wait = GpuWait::Blocking; /* taken when the engine is made (start / caps) */
  gboolean suppress_across_templates = FALSE;
  gboolean track = FALSE;
  double track_margin = 2.0;
  guint full_search_interval = 30;

  bool operator==(const MatchProps &o) const {
    return bank == o.bank && loaded == o.loaded && template_rect == o.template_rect &&
           template_request == o.template_request && search_region == o.search_region && threshold == o.threshold &&
           max_matches == o.max_matches && draw == o.draw && color == o.color && thickness == o.thickness &&
           post_messages == o.post_messages && gpu_wait == o.gpu_wait &&
           suppress_across_templates == o.suppress_across_templates && track == o.track &&
           track_margin == o.track_margin && full_search_interval == o.full_search_interval;
  }
};

/* Where the search of one template goes next frame (tracking). */
struct TemplateTrack {
  gboolean found = FALSE; /* matched last frame: search around box */
  Rect box;               /* the union of its last matches */
  guint since_full = 0;   /* frames since its last full search */
  gboolean full = TRUE;   /* this frame's search of it is a full search */
};

/* Streaming state: built in start / set_caps / on template requests, dropped in stop. */
struct MatchState {
  MatchProps props; /* the snapshot the state follows */
  gint props_version = -1;
  std::unique_ptr<MatchEngine> engine;
  guint64 template_request = 0;    /* the newest request acted on (installed, cut or refused) */
  guint64 installed_request = 0;   /* the request the installed bank answers */
  TemplateBank bank;               /* the installed bank (host copy: labels, sizes, scales, angles) */
  gboolean have_bank = FALSE;      /* bank holds the templates to match */
  gboolean bank_on_engine = FALSE; /* ... and the engine has them (set_bank since its configure) */
  gboolean warned_no_template = FALSE;
  std::vector<int> search_region; /* the region last checked against the bank */
  gboolean search_region_ok = FALSE;
  Rect search;             /* the resolved search region */
  BankSearch frame_search; /* per frame: each member's region, each template's limits */
  std::vector<TemplateTrack> tracks;
  std::vector<Match> matches;
  std::vector<Rect> boxes;
  FrameLifetime lifetime; /* when the frame may leave (frame_lifetime.h) */
};

/* The element's C++ state (one object, created in init, deleted in finalize). */
struct GstCudaTemplateMatchImpl {
  VersionedSettings<MatchProps> props;
  MatchState state;
};

struct _GstCudaTemplateMatch {
  GstCudaPrepBase parent;
  GstCudaTemplateMatchImpl *impl;
};

#define gst_cuda_template_match_parent_class parent_class
G_DEFINE_TYPE(GstCudaTemplateMatch, gst_cuda_template_match, GST_TYPE_CUDA_PREP_BASE);
GST_ELEMENT_REGISTER_DEFINE(cudatemplatematch, "cudatemplatematch", GST_RANK_NONE, GST_TYPE_CUDA_TEMPLATE_MATCH);

static_assert(kMaxTemplateSide == 256, "the template-location docs state the limit");
static_assert(kMaxBankTemplates == 64 && kMaxBankMembers == 256, "the templates docs state the limits");

/* ---- caps ----------------------------------------------------------------------------- */

static GstCaps *gst_cuda_template_match_transform_caps(GstBaseTransform *trans, GstPadDirection direction,
                                                       GstCaps *caps, GstCaps *filter) {
  /* Frames pass through: the same caps on both sides, in the order the other side gave them;
   * without a GPU, CUDA memory last (gst_cuda_prep_caps_order_memory). */
  GstCaps *result;
  if (gst_cuda_prep_base_gpu_possible(GST_CUDA_PREP_BASE(trans)))
    result = gst_caps_ref(caps);
  else
    result = gst_cuda_prep_caps_order_memory(gst_caps_copy(caps), FALSE, FALSE);
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = tmp;
  }
  return result;
}

static gboolean gst_cuda_template_match_configure(GstCudaPrepBase *base, GstCaps *incaps, GstCaps *outcaps) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(base);
  MatchState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device(base);
  const GstVideoInfo *info = gst_cuda_prep_base_input(base).info();
  PixelFormat fmt = PixelFormat::GRAY8;
  gst_cuda_prep_pixel_format_from_video(GST_VIDEO_INFO_FORMAT(info), &fmt);

  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok()) return FALSE;
  if (!state.engine) {
    const GpuWait wait = self->impl->props.read(self, [](const MatchProps &p) { return p.gpu_wait; });
    state.engine = device.gpu() ? make_match_engine_cuda(device.stream(), wait) : make_match_engine_cpu();
  }
  Status st = state.engine->configure(fmt, GST_VIDEO_INFO_WIDTH(info), GST_VIDEO_INFO_HEIGHT(info));
  if (!st.ok()) {
    GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Could not set up template matching"), ("%s", st.message().c_str()));
    return FALSE;
  }
  state.matches.reserve(kMaxMatches * kMaxBankTemplates);
  state.boxes.reserve(kMaxMatches * kMaxBankTemplates);
  /* A new frame size invalidates the checks made against the old one: a template-rect is cut
   * again from the next frame, a loaded bank installed again. */
  state.search_region_ok = FALSE;
  if (state.props.bank.source == BankRequest::Source::Rect) {
    state.template_request = 0;
    state.have_bank = FALSE;
  }
  state.bank_on_engine = FALSE;
  return TRUE;
}

/* ---- templates and search region ------------------------------------------------------ */

static std::string rect_text(const std::vector<int> &r) {
  std::string out = "<";
  for (size_t i = 0; i < r.size(); i++) out += (i ? "," : "") + std::to_string(r[i]);
  return out + ">";
}

/* The search-region property as a rectangle of the frame. */
static Status resolve_region(const std::vector<int> &region, const GrayView &frame, Rect *out) {
  if (region.empty()) {
    *out = Rect{0, 0, frame.width, frame.height};
    return Status();
  }
  if (region.size() != 4)
    return Status::error("search-region needs 4 values <x, y, width, height>, got " + std::to_string(region.size()));
  const Rect r{region[0], region[1], region[2], region[3]};
  if (r.empty()) return Status::error("search-region " + rect_text(region) + ": width and height must be positive");
  if (r.x < 0 || r.y < 0 || (int64_t)r.x + r.w > frame.width || (int64_t)r.y + r.h > frame.height)
    return Status::error("search-region " + rect_text(region) + " lies outside the " + std::to_string(frame.width) +
                         "x" + std::to_string(frame.height) + " frame");
  *out = r;
  return Status();
}

/* Cuts the template-rect from the frame (wherever the engine keeps its gray image). */
static std::string cut_template(MatchEngine &engine, const std::vector<int> &rect, const GrayView &frame,
                                MaskedGray *img) {
  if (rect.size() != 4) return "template-rect needs 4 values <x, y, width, height>, got " + std::to_string(rect.size());
  const Rect r{rect[0], rect[1], rect[2], rect[3]};
  if (r.empty()) return "template-rect " + rect_text(rect) + " is empty: width and height must be positive";
  if (r.x < 0 || r.y < 0 || (int64_t)r.x + r.w > frame.width || (int64_t)r.y + r.h > frame.height)
    return "template-rect " + rect_text(rect) + " is not inside the " + std::to_string(frame.width) + "x" +
           std::to_string(frame.height) + " frame";
  img->width = r.w;
  img->height = r.h;
  img->pixels.resize((size_t)r.w * r.h);
  Status st = engine.read_gray(frame, r, img->pixels.data());
  return st.ok() ? std::string() : st.message();
}

/* The properties' snapshot, brought up to date before a frame (versioned_settings.h). */
static const MatchProps &take_props(GstCudaTemplateMatch *self) {
  MatchState &state = self->impl->state;
  MatchProps snapshot;
  if (self->impl->props.changed_since(self, &state.props_version, state.props, &snapshot))
    state.props = std::move(snapshot);
  return state.props;
}

static std::string source_text(const MatchProps &p) {
  switch (p.bank.source) {
    case BankRequest::Source::Location: return "template-location=" + p.bank.location;
    case BankRequest::Source::Rect: return "template-rect=" + rect_text(p.template_rect);
    case BankRequest::Source::List: return "templates=" + p.bank.list;
    case BankRequest::Source::KeyFile: return "template-bank=" + p.bank.keyfile;
    default: return "no template";
  }
}

/* Makes @bank the one matched from the next frame on (its device copy included). */
static gboolean install_bank(GstCudaTemplateMatch *self, TemplateBank bank, guint64 request, const GrayView &frame,
                             const char *source) {
  MatchState &state = self->impl->state;
  Status st = check_bank(bank, nullptr);
  for (size_t m = 0; st.ok() && m < bank.members.size(); ++m)
    st = check_member_region(bank, (int)m, frame.width, frame.height, Rect{0, 0, frame.width, frame.height});
  if (st.ok()) st = state.engine->set_bank(bank);
  if (!st.ok()) {
    state.have_bank = state.bank_on_engine = FALSE;
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot use the template: %s", st.message().c_str()), ("%s", source));
    return FALSE;
  }
  state.bank = std::move(bank);
  state.installed_request = request;
  state.have_bank = TRUE;
  state.bank_on_engine = TRUE;
  state.search_region_ok = FALSE;
  state.tracks.assign(state.bank.templates.size(), TemplateTrack());
  GST_INFO_OBJECT(self, "%zu templates (%zu with their scales and angles) from %s", state.bank.templates.size(),
                  state.bank.members.size(), source);
  return TRUE;
}

static BankRequest request_of(const MatchProps &props) {
  BankRequest request = props.bank;
  request.threshold = props.threshold;
  request.max_matches = props.max_matches;
  return request;
}

static bool file_based(const MatchProps &props) {
  return props.bank.source != BankRequest::Source::None && props.bank.source != BankRequest::Source::Rect;
}

/* Loads the file-based bank the properties ask for, in the calling thread (the application's, in
 * set_property or start: never the streaming thread), unless it is loaded already; keeps the
 * result unless a newer request came meanwhile. Returns the result for the newest request. */
static std::shared_ptr<const LoadedBank> load_requested_bank(GstCudaTemplateMatch *self) {
  BankRequest request;
  guint64 id = 0;
  std::shared_ptr<const LoadedBank> have;
  bool needed = false;
  self->impl->props.read(self, [&](const MatchProps &p) {
    id = p.template_request;
    have = p.loaded;
    needed = file_based(p) && !(have && have->request == id);
    request = request_of(p);
    return 0;
  });
  if (!needed) return have;
  auto loaded = std::make_shared<LoadedBank>();
  loaded->request = id;
  loaded->error = gst_cuda_prep_load_bank(request, nullptr, &loaded->bank);
  std::shared_ptr<const LoadedBank> result = loaded;
  self->impl->props.write(self, [&](MatchProps &p) {
    if (p.template_request == id) p.loaded = loaded;
    result = p.loaded;
  });
  return result;
}

/* Acts on what a template property asked for since the last frame: installs the bank it loaded
 * (or reports why it could not), cuts a template-rect from this frame. */
static gboolean refresh_bank(GstCudaTemplateMatch *self, const MatchProps &props, const GrayView &frame) {
  MatchState &state = self->impl->state;
  if (props.template_request != state.template_request) {
    switch (props.bank.source) {
      case BankRequest::Source::None:
        state.template_request = props.template_request;
        state.have_bank = state.bank_on_engine = FALSE;
        break;
      case BankRequest::Source::Rect: {
        state.template_request = props.template_request;
        MaskedGray cut;
        TemplateBank bank;
        std::string error = cut_template(*state.engine, props.template_rect, frame, &cut);
        if (error.empty()) error = gst_cuda_prep_load_bank(request_of(props), &cut, &bank);
        if (!error.empty()) {
          GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot use the template: %s", error.c_str()),
                            ("%s", source_text(props).c_str()));
          return FALSE;
        }
        if (!install_bank(self, std::move(bank), props.template_request, frame, source_text(props).c_str()))
          return FALSE;
        break;
      }
      default:
        /* Loaded by the setter before it returned; not yet while it is still loading. */
        if (!props.loaded || props.loaded->request != props.template_request) break;
        state.template_request = props.template_request;
        if (!props.loaded->error.empty()) {
          GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot use the template: %s", props.loaded->error.c_str()),
                            ("%s", source_text(props).c_str()));
          return FALSE;
        }
        if (!install_bank(self, props.loaded->bank, props.template_request, frame, source_text(props).c_str()))
          return FALSE;
        break;
    }
  }
  /* Kept over new caps: onto the engine again. */
  if (state.have_bank && !state.bank_on_engine) {
    TemplateBank bank = std::move(state.bank);
    if (!install_bank(self, std::move(bank), state.installed_request, frame, source_text(props).c_str())) return FALSE;
  }
  return TRUE;
}

/* The window a tracked template is searched in next: its last matches' box grown by the margin
 * (in template sizes) on every side, at least a member's size, inside the search region. */
static Rect tracking_window(const Rect &box, double margin, const BankTemplate &templ, const MaskedGray &member,
                            const Rect &search) {
  if (templ.own_track_margin) margin = templ.track_margin;
  const bool pixels = templ.own_track_margin && templ.track_margin_in_pixels;
  const int mx = (int)std::ceil(pixels ? margin : margin * member.width);
  const int my = (int)std::ceil(pixels ? margin : margin * member.height);
  int x0 = box.x - mx, y0 = box.y - my, x1 = box.x + box.w + mx, y1 = box.y + box.h + my;
  x0 = std::max(x0, search.x);
  y0 = std::max(y0, search.y);
  x1 = std::min(x1, search.x + search.w);
  y1 = std::min(y1, search.y + search.h);
  /* At least the member's size: grow towards the side with room. */
  if (x1 - x0 < member.width) {
    x0 = std::max(search.x, std::min(x0, x1 - member.width));
    x1 = x0 + member.width;
  }
  if (y1 - y0 < member.height) {
    y0 = std::max(search.y, std::min(y0, y1 - member.height));
    y1 = y0 + member.height;
  }
  return Rect{x0, y0, x1 - x0, y1 - y0};
}

/* Takes the per-frame settings of the snapshot; re-checks the search region against the bank
 * when it or the bank changed, and chooses each member's region (full search or tracking). No
 * allocation unless the region or the bank changed. */
static gboolean refresh_settings(GstCudaTemplateMatch *self, const GrayView &frame, gboolean *draw, gboolean *post,
                                 BoxStyle *style) {
  MatchState &state = self->impl->state;
  const MatchProps &props = state.props;
  *draw = props.draw;
  *post = props.post_messages;
  style->r = (props.color >> 16) & 0xff;
  style->g = (props.color >> 8) & 0xff;
  style->b = props.color & 0xff;
  style->thickness = props.thickness;
  if (props.search_region != state.search_region) {
    state.search_region = props.search_region;
    state.search_region_ok = FALSE;
  }
  if (!state.bank_on_engine) return TRUE;
  const TemplateBank &bank = state.bank;
  if (!state.search_region_ok) {
    Status st = resolve_region(state.search_region, frame, &state.search);
    for (size_t m = 0; st.ok() && m < bank.members.size(); ++m)
      st = check_member_region(bank, (int)m, frame.width, frame.height, state.search);
    if (!st.ok()) {
      GST_ELEMENT_ERROR(
          self, RESOURCE, SETTINGS, ("Invalid search-region: %s", st.message().c_str()),
          ("search-region=%s, frame %dx%d", rect_text(state.search_region).c_str(), frame.width, frame.height));
      return FALSE;
    }
    state.search_region_ok = TRUE;
    state.frame_search = BankSearch::over(bank, state.search);
  }
  BankSearch &search = state.frame_search;
  for (size_t t = 0; t < bank.templates.size(); ++t) {
    const BankTemplate &bt = bank.templates[t];
    search.thresholds[t] = bt.own_threshold ? bt.threshold : props.threshold;
    search.max_matches[t] = bt.own_max_matches ? bt.max_matches : props.max_matches;
    TemplateTrack &track = state.tracks[t];
    track.full = !props.track || !track.found ||
                 (props.full_search_interval > 0 && track.since_full >= props.full_search_interval);
  }
  for (size_t m = 0; m < bank.members.size(); ++m) {
    const int t = bank.members[m].template_index;
    const TemplateTrack &track = state.tracks[t];
    search.regions[m] = track.full ? state.search
                                   : tracking_window(track.box, props.track_margin, bank.templates[t],
                                                     bank.members[m].image, state.search);
  }
  return TRUE;
}

/* After a frame: each template's next search (tracking). */
static void update_tracks(MatchState &state) {
  for (TemplateTrack &track : state.tracks) {
    track.since_full = track.full ? 1 : track.since_full + 1;
    track.found = FALSE;
  }
  for (const Match &m : state.matches) {
    TemplateTrack &track = state.tracks[state.bank.members[m.member].template_index];
    const Rect box{m.x, m.y, m.width, m.height};
    if (!track.found) {
      track.box = box;
      track.found = TRUE;
      continue;
    }
    const int x1 = std::max(track.box.x + track.box.w, box.x + box.w);
    const int y1 = std::max(track.box.y + track.box.h, box.y + box.h);
    track.box.x = std::min(track.box.x, box.x);
    track.box.y = std::min(track.box.y, box.y);
    track.box.w = x1 - track.box.x;
    track.box.h = y1 - track.box.y;
  }
}

/* ---- per frame ------------------------------------------------------------------------ */

/* Field names of the per-frame metas and messages, as quarks: no string lookup per frame. */
struct ResultQuarks {
  GQuark template_match = g_quark_from_static_string("template-match");
  GQuark match = g_quark_from_static_string("match");
  GQuark score = g_quark_from_static_string("score");
  GQuark x = g_quark_from_static_string("x"), y = g_quark_from_static_string("y");
  GQuark width = g_quark_from_static_string("width");
  GQuark height = g_quark_from_static_string("height");
  GQuark sub_x = g_quark_from_static_string("sub-x");
  GQuark sub_y = g_quark_from_static_string("sub-y");
  GQuark templ = g_quark_from_static_string("template");
  GQuark scale = g_quark_from_static_string("scale");
  GQuark angle = g_quark_from_static_string("angle");
  GQuark full_search = g_quark_from_static_string("full-search");
  GQuark timestamp = g_quark_from_static_string("timestamp");
  GQuark stream_time = g_quark_from_static_string("stream-time");
  GQuark running_time = g_quark_from_static_string("running-time");
  GQuark duration = g_quark_from_static_string("duration");
  GQuark num_matches = g_quark_from_static_string("num-matches");
  GQuark matches = g_quark_from_static_string("matches");
};

static const ResultQuarks &result_quarks(void) {
  static const ResultQuarks quarks;
  return quarks;
}

static void attach_results(GstCudaTemplateMatch *self, GstBuffer *buf, const std::vector<Match> &matches,
                           gboolean post) {
  const ResultQuarks &q = result_quarks();
  const MatchState &state = self->impl->state;
  GValue list = G_VALUE_INIT;
  if (post) g_value_init(&list, GST_TYPE_LIST);

  for (const Match &m : matches) {
    const BankMember &member = state.bank.members[m.member];
    const char *label = state.bank.templates[member.template_index].label.c_str();
    const gboolean full = state.tracks[member.template_index].full;
    GstVideoRegionOfInterestMeta *roi =
        gst_buffer_add_video_region_of_interest_meta(buf, label, m.x, m.y, m.width, m.height);
    gst_video_region_of_interest_meta_add_param(
        roi, gst_structure_new_id(q.template_match, q.score, G_TYPE_DOUBLE, m.score, q.x, G_TYPE_DOUBLE, m.sub_x, q.y,
                                  G_TYPE_DOUBLE, m.sub_y, q.templ, G_TYPE_STRING, label, q.scale, G_TYPE_DOUBLE,
                                  member.scale, q.angle, G_TYPE_DOUBLE, member.angle, q.full_search, G_TYPE_BOOLEAN,
                                  full, NULL));
    if (post) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed(
          &v, gst_structure_new_id(q.match, q.x, G_TYPE_INT, m.x, q.y, G_TYPE_INT, m.y, q.width, G_TYPE_INT, m.width,
                                   q.height, G_TYPE_INT, m.height, q.score, G_TYPE_DOUBLE, m.score, q.sub_x,
                                   G_TYPE_DOUBLE, m.sub_x, q.sub_y, G_TYPE_DOUBLE, m.sub_y, q.templ, G_TYPE_STRING,
                                   label, q.scale, G_TYPE_DOUBLE, member.scale, q.angle, G_TYPE_DOUBLE, member.angle,
                                   q.full_search, G_TYPE_BOOLEAN, full, NULL));
      gst_value_list_append_and_take_value(&list, &v);
    }
  }
  std::string analytics_error;
  if (!gst_cuda_prep_add_analytics_matches(buf, matches, state.bank, &analytics_error))
    GST_ELEMENT_WARNING(self, STREAM, FAILED, ("Matches not added as analytics metadata"),
                        ("%s", analytics_error.c_str()));
  if (!post) return;
  GstSegment *segment = &GST_BASE_TRANSFORM(self)->segment;
  GstClockTime pts = GST_BUFFER_PTS(buf);
  GstStructure *s =
      gst_structure_new_id(q.template_match, q.timestamp, G_TYPE_UINT64, pts, q.stream_time, G_TYPE_UINT64,
                           gst_segment_to_stream_time(segment, GST_FORMAT_TIME, pts), q.running_time, G_TYPE_UINT64,
                           gst_segment_to_running_time(segment, GST_FORMAT_TIME, pts), q.duration, G_TYPE_UINT64,
                           GST_BUFFER_DURATION(buf), q.num_matches, G_TYPE_UINT, (guint)matches.size(), NULL);
  gst_structure_id_take_value(s, q.matches, &list);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), s));
}

/* The matches' outlines: each template's in its own colour (a bank file's color), else the
 * element's; one drawing call per colour. */
static Status draw_matches(MatchState &state, const ImageView &view, const BoxStyle &style) {
  const TemplateBank &bank = state.bank;
  /* -1: the templates without a colour of their own; then each template with one. */
  for (int t = -1; t < (int)bank.templates.size(); ++t) {
    if (t >= 0 && !bank.templates[t].own_color) continue;
    state.boxes.clear();
    for (const Match &m : state.matches) {
      const int mt = bank.members[m.member].template_index;
      if (t >= 0 ? mt == t : !bank.templates[mt].own_color) state.boxes.push_back(Rect{m.x, m.y, m.width, m.height});
    }
    if (state.boxes.empty()) continue;
    BoxStyle s = style;
    if (t >= 0) {
      s.r = (bank.templates[t].color >> 16) & 0xff;
      s.g = (bank.templates[t].color >> 8) & 0xff;
      s.b = bank.templates[t].color & 0xff;
    }
    CUDAPREP_RETURN_IF_ERROR(state.engine->draw(view, state.boxes.data(), (int)state.boxes.size(), s));
  }
  return Status();
}

static GstFlowReturn gst_cuda_template_match_transform_ip(GstBaseTransform *trans, GstBuffer *buf) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE(trans);
  MatchState &state = self->impl->state;
  CudaPrepDevice &device = gst_cuda_prep_base_device(base);
  CudaPrepVideoInput &input = gst_cuda_prep_base_input(base);

  FramePhases phases(GST_CAT_DEFAULT, GST_OBJECT(self));
  CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
  if (!ctx.ok()) return GST_FLOW_ERROR;
  GstVideoFrame frame;
  ImageView view;
  /* Read-only: a frame is mapped for writing only when a box is drawn (remap_writable). */
  if (!input.map(GST_ELEMENT(self), device, buf, FALSE, &frame, &view)) return GST_FLOW_ERROR;
  phases.mark("map");

  GrayView gray;
  gboolean draw = FALSE, post = FALSE, modified = FALSE;
  BoxStyle style;
  GstFlowReturn ret = GST_FLOW_OK;
  state.matches.clear();
  Status st = state.engine->gray_of(view, &gray);
  if (!st.ok()) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Gray conversion failed"), ("%s", st.message().c_str()));
    ret = GST_FLOW_ERROR;
  } else if (!refresh_bank(self, take_props(self), gray) || !refresh_settings(self, gray, &draw, &post, &style)) {
    ret = GST_FLOW_ERROR;
  } else if (state.bank_on_engine) {
    phases.mark("gray+settings");
    st = state.engine->match(gray, state.frame_search, state.props.suppress_across_templates, &state.matches);
    phases.mark("match");
    if (!st.ok()) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Template matching failed: %s", st.message().c_str()), (NULL));
      ret = GST_FLOW_ERROR;
    } else if (draw && !state.matches.empty()) {
      if (!input.remap_writable(GST_ELEMENT(self), &frame, &view)) {
        ret = GST_FLOW_ERROR;
      } else if (!(st = draw_matches(state, view, style)).ok()) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("Drawing failed"), ("%s", st.message().c_str()));
        ret = GST_FLOW_ERROR;
      } else {
        modified = TRUE;
      }
    }
  } else if (!state.warned_no_template) {
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                        ("No template set (template-location, template-rect, templates or template-bank): frames "
                         "pass through unmatched"),
                        (NULL));
    state.warned_no_template = TRUE;
  }

  /* The GPU is done with the frame (and its drawing) before the buffer moves on, unless later
   * work on it is ordered after ours anyway; the frame goes on downstream itself, so it is never
   * held (frame_lifetime.h). */
  state.lifetime.begin_output(FALSE);
  state.lifetime.add_input(buf, input.stream_ordered(device, &frame));
  if (ret == GST_FLOW_OK && !state.lifetime.inputs_may_stay() && !(st = device.sync()).ok()) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("CUDA error"), ("%s", st.message().c_str()));
    ret = GST_FLOW_ERROR;
  }
  phases.mark("draw+sync");
  if (!input.unmap(GST_ELEMENT(self), device, &frame, modified)) ret = GST_FLOW_ERROR;
  phases.mark("unmap");
  if (ret == GST_FLOW_OK && state.bank_on_engine) {
    attach_results(self, buf, state.matches, post);
    update_tracks(state);
  }
  phases.mark("results");
  return ret;
}

static gboolean gst_cuda_template_match_propose_allocation(GstBaseTransform *trans, GstQuery *decide_query,
                                                           GstQuery *query) {
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
  gst_query_add_allocation_meta(query, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE, NULL);
  /* In place: the frames go on downstream, whose pool comes first. Without one, ours: upstream
   * then writes each frame on our stream (1.24+), so we neither wait for it nor sync after. */
  GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query);
  if (gst_query_get_n_allocation_pools(query) > 0) return TRUE;
  return gst_cuda_prep_propose_frame_pool(gst_cuda_prep_base_device(GST_CUDA_PREP_BASE(trans)), query, 0);
}

/* A file-based bank is loaded before the first frame: a bad template file fails the start,
 * naming the file. */
static gboolean gst_cuda_template_match_start(GstBaseTransform *trans) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(trans);
  MatchState &state = self->impl->state;
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans)) return FALSE;
  const std::shared_ptr<const LoadedBank> loaded = load_requested_bank(self);
  const MatchProps &props = take_props(self);
  state.template_request = 0; /* the first frame installs the bank (or cuts the template-rect) */
  if (loaded && loaded->request == props.template_request && !loaded->error.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Cannot use the template: %s", loaded->error.c_str()),
                      ("%s", source_text(props).c_str()));
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_cuda_template_match_stop(GstBaseTransform *trans) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(trans);
  CudaPrepDevice &device = gst_cuda_prep_base_device(GST_CUDA_PREP_BASE(trans));
  MatchState &state = self->impl->state;
  {
    CudaPrepScopedContext ctx(device, GST_ELEMENT(self));
    device.sync();
    if (state.engine) GST_INFO_OBJECT(self, "%s", state.engine->cache_summary().c_str());
    state.engine.reset(); /* frees device memory: context current */
  }
  state.have_bank = state.bank_on_engine = FALSE;
  state.bank = TemplateBank();
  state.template_request = state.installed_request = 0;
  state.warned_no_template = FALSE;
  state.search_region.clear();
  state.search_region_ok = FALSE;
  state.tracks.clear();
  return GST_BASE_TRANSFORM_CLASS(parent_class)->stop(trans);
}

/* ---- properties ----------------------------------------------------------------------- */

static void gst_cuda_template_match_set_property(GObject *object, guint prop_id, const GValue *value,
                                                 GParamSpec *pspec) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(object);
  if (prop_id == PROP_GPU_WAIT && !gst_cuda_prep_ready_property_changeable(object, pspec))
    return; /* taken when the engine is made */
  gboolean known = TRUE;
  self->impl->props.write(self, [&](MatchProps &s) {
    switch (prop_id) {
      case PROP_TEMPLATE_LOCATION:
        s.bank.location = g_value_get_string(value) ? g_value_get_string(value) : "";
        s.bank.source = s.bank.location.empty() ? BankRequest::Source::None : BankRequest::Source::Location;
        s.template_request++;
        break;
      case PROP_TEMPLATE_RECT:
        s.template_rect = gst_cuda_prep_vector_from_array<int>(value);
        s.bank.source = s.template_rect.empty() ? BankRequest::Source::None : BankRequest::Source::Rect;
        s.template_request++;
        break;
      case PROP_TEMPLATES:
        s.bank.list = g_value_get_string(value) ? g_value_get_string(value) : "";
        s.bank.source = s.bank.list.empty() ? BankRequest::Source::None : BankRequest::Source::List;
        s.template_request++;
        break;
      case PROP_TEMPLATE_BANK:
        s.bank.keyfile = g_value_get_string(value) ? g_value_get_string(value) : "";
        s.bank.source = s.bank.keyfile.empty() ? BankRequest::Source::None : BankRequest::Source::KeyFile;
        s.template_request++;
        break;
      case PROP_TEMPLATE_MASK:
        s.bank.mask = g_value_get_string(value) ? g_value_get_string(value) : "";
        if (s.bank.source != BankRequest::Source::None) s.template_request++;
        break;
      case PROP_SCALES:
        s.bank.scales = gst_cuda_prep_vector_from_array<double>(value);
        if (s.bank.source != BankRequest::Source::None) s.template_request++;
        break;
      case PROP_ANGLES:
        s.bank.angles = gst_cuda_prep_vector_from_array<double>(value);
        if (s.bank.source != BankRequest::Source::None) s.template_request++;
        break;
      case PROP_SUPPRESS_ACROSS_TEMPLATES: s.suppress_across_templates = g_value_get_boolean(value); break;
      case PROP_TRACK: s.track = g_value_get_boolean(value); break;
      case PROP_TRACK_MARGIN: s.track_margin = g_value_get_double(value); break;
      case PROP_FULL_SEARCH_INTERVAL: s.full_search_interval = g_value_get_uint(value); break;
      case PROP_SEARCH_REGION: s.search_region = gst_cuda_prep_vector_from_array<int>(value); break;
      case PROP_THRESHOLD: s.threshold = g_value_get_double(value); break;
      case PROP_MAX_MATCHES: s.max_matches = g_value_get_uint(value); break;
      case PROP_DRAW: s.draw = g_value_get_boolean(value); break;
      case PROP_COLOR: s.color = g_value_get_uint(value); break;
      case PROP_THICKNESS: s.thickness = g_value_get_uint(value); break;
      case PROP_POST_MESSAGES: s.post_messages = g_value_get_boolean(value); break;
      case PROP_GPU_WAIT: s.gpu_wait = (GpuWait)g_value_get_enum(value); break;
      default: known = FALSE; break;
    }
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  /* While streaming, a new file-based bank is loaded here, in the caller's thread, so the next
   * frame uses it and the streaming thread never decodes; before, start loads it. */
  const bool template_property = prop_id == PROP_TEMPLATE_LOCATION || prop_id == PROP_TEMPLATES ||
                                 prop_id == PROP_TEMPLATE_BANK || prop_id == PROP_TEMPLATE_MASK ||
                                 prop_id == PROP_SCALES || prop_id == PROP_ANGLES;
  if (template_property && GST_STATE(self) >= GST_STATE_PAUSED) load_requested_bank(self);
}

static void gst_cuda_template_match_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH(object);
  const gboolean known = self->impl->props.read(self, [&](const MatchProps &s) -> gboolean {
    switch (prop_id) {
      case PROP_TEMPLATE_LOCATION: g_value_set_string(value, s.bank.location.c_str()); break;
      case PROP_TEMPLATE_RECT: gst_cuda_prep_vector_to_array(s.template_rect, value); break;
      case PROP_TEMPLATES: g_value_set_string(value, s.bank.list.c_str()); break;
      case PROP_TEMPLATE_BANK: g_value_set_string(value, s.bank.keyfile.c_str()); break;
      case PROP_TEMPLATE_MASK: g_value_set_string(value, s.bank.mask.c_str()); break;
      case PROP_SCALES: gst_cuda_prep_vector_to_array(s.bank.scales, value); break;
      case PROP_ANGLES: gst_cuda_prep_vector_to_array(s.bank.angles, value); break;
      case PROP_SUPPRESS_ACROSS_TEMPLATES: g_value_set_boolean(value, s.suppress_across_templates); break;
      case PROP_TRACK: g_value_set_boolean(value, s.track); break;
      case PROP_TRACK_MARGIN: g_value_set_double(value, s.track_margin); break;
      case PROP_FULL_SEARCH_INTERVAL: g_value_set_uint(value, s.full_search_interval); break;
      case PROP_SEARCH_REGION: gst_cuda_prep_vector_to_array(s.search_region, value); break;
      case PROP_THRESHOLD: g_value_set_double(value, s.threshold); break;
      case PROP_MAX_MATCHES: g_value_set_uint(value, s.max_matches); break;
      case PROP_DRAW: g_value_set_boolean(value, s.draw); break;
      case PROP_COLOR: g_value_set_uint(value, s.color); break;
      case PROP_THICKNESS: g_value_set_uint(value, s.thickness); break;
      case PROP_POST_MESSAGES: g_value_set_boolean(value, s.post_messages); break;
      case PROP_GPU_WAIT: g_value_set_enum(value, (gint)s.gpu_wait); break;
      default: return FALSE;
    }
    return TRUE;
  });
  if (!known) G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
}

static void gst_cuda_template_match_finalize(GObject *object) {
  delete GST_CUDA_TEMPLATE_MATCH(object)->impl;
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_cuda_template_match_class_init(GstCudaTemplateMatchClass *klass) {
  GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstCudaPrepBaseClass *base_class = GST_CUDA_PREP_BASE_CLASS(klass);
  const GParamFlags rw = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const MatchProps d;

  gobject_class->set_property = gst_cuda_template_match_set_property;
  gobject_class->get_property = gst_cuda_template_match_get_property;
  gobject_class->finalize = gst_cuda_template_match_finalize;

  g_object_class_install_property(
      gobject_class, PROP_TEMPLATE_LOCATION,
      g_param_spec_string("template-location", "Template location",
                          "Image file with the template (PNG, JPEG, PGM, ...; colour is reduced to gray), at most "
                          "256x256 pixels. Changing it while playing takes effect at the next frame",
                          NULL, rw));
  g_object_class_install_property(
      gobject_class, PROP_TEMPLATE_RECT,
      gst_cuda_prep_param_spec_ints("template-rect", "Template rectangle",
                                    "\"<x, y, width, height>\": cut the template from the next frame (wins over "
                                    "template-location when set last)",
                                    rw));
  g_object_class_install_property(
      gobject_class, PROP_TEMPLATE_MASK,
      g_param_spec_string("template-mask", "Template mask",
                          "Gray image of template-location's size: the score counts only the template's pixels where "
                          "the mask is not 0 (OpenCV's masked TM_CCOEFF_NORMED). A PNG template's alpha channel is "
                          "its mask without this property",
                          NULL, rw));
  g_object_class_install_property(
      gobject_class, PROP_TEMPLATES,
      g_param_spec_string("templates", "Templates",
                          "Several template files matched together, separated by ';' (\"logo.png;sign.png\"), at "
                          "most 64: each match's label is its file's name without the extension. Each is matched at "
                          "every scale and angle of the scales and angles properties. Wins over the other template "
                          "properties when set last",
                          NULL, rw));
  g_object_class_install_property(
      gobject_class, PROP_TEMPLATE_BANK,
      g_param_spec_string("template-bank", "Template bank",
                          "Key file describing the templates: one group per template, named by its label, with its "
                          "file, and optionally its mask, threshold, max-matches, scales, angles and tracking margin "
                          "(docs/template-bank.md). Wins over the other template properties when set last",
                          NULL, rw));
  g_object_class_install_property(
      gobject_class, PROP_SCALES,
      gst_cuda_prep_param_spec_doubles("scales", "Scales",
                                       "\"<0.8, 1, 1.25>\": the scales every template of template-location, "
                                       "templates or template-rect is also matched at (resized once when it loads); "
                                       "empty (default) = 1 only",
                                       rw));
  g_object_class_install_property(
      gobject_class, PROP_ANGLES,
      gst_cuda_prep_param_spec_doubles("angles", "Angles",
                                       "\"<-10, 0, 10>\": the angles in degrees, counter-clockwise, every template is "
                                       "also matched at (rotated once when it loads; the corners a rotation uncovers "
                                       "are masked out); empty (default) = 0 only",
                                       rw));
  g_object_class_install_property(
      gobject_class, PROP_SUPPRESS_ACROSS_TEMPLATES,
      g_param_spec_boolean("suppress-across-templates", "Suppress across templates",
                           "Drop a match whose box overlaps a better match of another template (matches of one "
                           "template, at any scale or angle, always suppress each other)",
                           d.suppress_across_templates, rw));
  g_object_class_install_property(
      gobject_class, PROP_TRACK,
      g_param_spec_boolean("track", "Track",
                           "After a template matched, search only a window around its matches in the next frame "
                           "(track-margin); search the whole region again when it is lost and every "
                           "full-search-interval frames. The metas' full-search field says which search found a match",
                           d.track, rw));
  g_object_class_install_property(
      gobject_class, PROP_TRACK_MARGIN,
      g_param_spec_double("track-margin", "Tracking margin",
                          "With track=true: how far around its last matches a template is searched, in template "
                          "sizes (its width to the left and right, its height above and below)",
                          0.0, 64.0, d.track_margin, rw));
  g_object_class_install_property(
      gobject_class, PROP_FULL_SEARCH_INTERVAL,
      g_param_spec_uint("full-search-interval", "Full search interval",
                        "With track=true: search the whole region at least every this many frames (0: only when "
                        "the target is lost)",
                        0, G_MAXUINT, d.full_search_interval, rw));
  g_object_class_install_property(
      gobject_class, PROP_SEARCH_REGION,
      gst_cuda_prep_param_spec_ints("search-region", "Search region",
                                    "\"<x, y, width, height>\" of the frame to search (inside the frame, at least the "
                                    "template's size); empty (default) = whole frame. Changing it keeps the template",
                                    rw));
  g_object_class_install_property(gobject_class, PROP_THRESHOLD,
                                  g_param_spec_double("threshold", "Threshold",
                                                      "Minimum TM_CCOEFF_NORMED score (-1..1) of a reported match (of "
                                                      "each template without a threshold of its own)",
                                                      -1.0, 1.0, d.threshold, rw));
  g_object_class_install_property(
      gobject_class, PROP_MAX_MATCHES,
      g_param_spec_uint("max-matches", "Maximum matches",
                        "Most matches reported per frame and template (without a max-matches of its own), best first, "
                        "none overlapping another of the same template",
                        1, kMaxMatches, (guint)d.max_matches, rw));
  g_object_class_install_property(
      gobject_class, PROP_DRAW,
      g_param_spec_boolean("draw", "Draw", "Draw rectangle outlines around matches into the frame", d.draw, rw));
  g_object_class_install_property(gobject_class, PROP_COLOR,
                                  g_param_spec_uint("color", "Color",
                                                    "Outline colour as 0xAARRGGBB (alpha ignored; gst-inspect "
                                                    "prints it in decimal): default 0xff00ff00 = 4278255360, green",
                                                    0, G_MAXUINT32, d.color, rw));
  g_object_class_install_property(
      gobject_class, PROP_THICKNESS,
      g_param_spec_uint("thickness", "Thickness", "Outline thickness in pixels, drawn inside the box", 1, 64,
                        (guint)d.thickness, rw));
  g_object_class_install_property(
      gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean("post-messages", "Post messages",
                           "Post a \"template-match\" element message per frame listing every match. Each one wakes "
                           "the application's bus reader: tens of microseconds of the streaming thread's CPU a "
                           "frame on some hosts. Off, the ROI metas (and the analytics metas on GStreamer 1.24+) still "
                           "carry every match",
                           d.post_messages, rw));

  g_object_class_install_property(
      gobject_class, PROP_GPU_WAIT,
      g_param_spec_enum("gpu-wait", "GPU wait",
                        "How the streaming thread waits for the GPU's matches: blocking (default: the thread "
                        "sleeps until the kernel ends, the least CPU; the wake-up can come late), poll (sleeps "
                        "through most of the kernel's usual time, then checks the flag the kernel writes into "
                        "pinned memory every few microseconds: lower latency for some CPU), spin on that flag "
                        "(lowest latency, a CPU core busy for the whole kernel time) or cudaStreamSynchronize "
                        "(honours a context made with blocking synchronisation). Taken at start; NULL/READY only",
                        GST_TYPE_CUDA_PREP_GPU_WAIT, (gint)d.gpu_wait,
                        (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY)));

  gst_element_class_set_static_metadata(
      element_class, "CUDA template match", "Filter/Analyzer/Video/Hardware",
      "Finds templates in each frame (normalized cross-correlation, TM_CCOEFF_NORMED; one, or a "
      "labelled bank with masks, scales and angles, optionally tracked) and reports matches as ROI "
      "meta, bus messages and drawn boxes (CPU fallback)",
      "gst-cudaprep developers");
  for (GstPadDirection dir : {GST_PAD_SINK, GST_PAD_SRC})
    gst_element_class_add_pad_template(element_class,
                                       gst_pad_template_new(dir == GST_PAD_SINK ? "sink" : "src", dir, GST_PAD_ALWAYS,
                                                            gst_cuda_prep_video_template_caps()));

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_cuda_template_match_transform_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR(gst_cuda_template_match_transform_ip);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_cuda_template_match_propose_allocation);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_cuda_template_match_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_cuda_template_match_stop);
  base_class->configure = GST_DEBUG_FUNCPTR(gst_cuda_template_match_configure);

  GST_DEBUG_CATEGORY_INIT(gst_cuda_template_match_debug, "cudatemplatematch", 0, "cudatemplatematch element");
}

static void gst_cuda_template_match_init(GstCudaTemplateMatch *self) { self->impl = new GstCudaTemplateMatchImpl(); }
