/**
 * SECTION:element-cudatemplatematch
 * @title: cudatemplatematch
 *
 * Finds a template in every frame with OpenCV's TM_CCOEFF_NORMED score on luma (the Y plane of
 * NV12/I420 as is; gray as cv::cvtColor(COLOR_BGR2GRAY) computes it for RGB-like formats) and
 * reports each match three ways: a GstVideoRegionOfInterestMeta of type "template-match" (its
 * "template-match" param holds score, sub-pixel x and y), an element message "template-match"
 * on the bus, and (draw=true) a rectangle outline drawn into the frame, in CUDA memory too.
 * Frames are otherwise passed through unchanged.
 *
 * A window of the frame with no variance scores 0. A template with no variance cannot be
 * matched and is refused with an error. Several matches are kept apart by non-maximum
 * suppression: a match whose box overlaps a better one is dropped.
 *
 * On the GPU the frame is read through CUDA texture objects made once per caps (and per pool
 * buffer), the template statistics once per template, and the only synchronisation per frame
 * is the read-back of the short match list.
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
 */
#include "gstcudatemplatematch.h"

#include <gst/video/gstvideometa.h>

#include <mutex>
#include <string>
#include <vector>

#include "pixel_format.h"
#include "property_arrays.h"
#include "template_loader.h"
#include "templatematch.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_template_match_debug);
#define GST_CAT_DEFAULT gst_cuda_template_match_debug

using namespace cudaprep;

enum
{
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
};

#define DEFAULT_THRESHOLD 0.8
#define DEFAULT_MAX_MATCHES 1
#define DEFAULT_DRAW TRUE
#define DEFAULT_COLOR 0xff00ff00u
#define DEFAULT_THICKNESS 2
#define DEFAULT_POST_MESSAGES TRUE

/* Properties, behind the object lock. A template change bumps template_generation; the
 * streaming thread picks it up before the next frame. */
struct MatchSettingsProps
{
  std::string template_location;
  std::vector<int> template_rect;
  std::vector<int> search_region;
  double threshold = DEFAULT_THRESHOLD;
  int max_matches = DEFAULT_MAX_MATCHES;
  gboolean draw = DEFAULT_DRAW;
  guint color = DEFAULT_COLOR;
  int thickness = DEFAULT_THICKNESS;
  gboolean post_messages = DEFAULT_POST_MESSAGES;
  guint64 template_generation = 0;
  gboolean template_from_rect = FALSE;  /* the newest template source is template-rect */
};

/* Built per caps / per template, dropped in stop. */
struct MatchState
{
  TemplateMatcherCpu cpu;
  TemplateMatcherCuda gpu;
  guint64 template_generation = 0;    /* generation the loaded template belongs to */
  gboolean have_template = FALSE;
  gboolean warned_no_template = FALSE;
  std::vector<uint8_t> host_gray;     /* CPU path, RGB-like input */
  cuda::DeviceBuffer device_gray;     /* GPU path, RGB-like input */
  std::vector<Match> matches;
  std::vector<Rect> boxes;
};

struct _GstCudaTemplateMatch
{
  GstCudaPrepBase parent;
  MatchSettingsProps *settings;
  MatchState *state;
};

#define gst_cuda_template_match_parent_class parent_class
G_DEFINE_TYPE (GstCudaTemplateMatch, gst_cuda_template_match, GST_TYPE_CUDA_PREP_BASE);
GST_ELEMENT_REGISTER_DEFINE (cudatemplatematch, "cudatemplatematch", GST_RANK_NONE,
    GST_TYPE_CUDA_TEMPLATE_MATCH);

#define MATCH_CAPS \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES ("memory:CUDAMemory", GST_CUDA_PREP_FORMATS) "; " \
  GST_VIDEO_CAPS_MAKE (GST_CUDA_PREP_FORMATS)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (MATCH_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS (MATCH_CAPS));

static bool
gray_is_plane0 (PixelFormat f)
{
  return f == PixelFormat::NV12 || f == PixelFormat::I420 || f == PixelFormat::GRAY8;
}

/* The search-region property as a Rect (empty = whole frame); returns how many values the
 * property holds, so callers can refuse anything but 0 or 4. No allocation: called per frame. */
static guint
read_search_region (GstCudaTemplateMatch * self, Rect * search)
{
  GST_OBJECT_LOCK (self);
  const std::vector<int> &r = self->settings->search_region;
  const guint n = (guint) r.size ();
  *search = n == 4 ? Rect {r[0], r[1], r[2], r[3]} : Rect {};
  GST_OBJECT_UNLOCK (self);
  return n;
}

/* ---- caps ----------------------------------------------------------------------------- */

static GstCaps *
gst_cuda_template_match_transform_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * filter)
{
  /* Frames pass through: the same caps on both sides. Without a GPU, CUDA memory is kept but
   * listed last: peers that can do both pick system memory, and a CUDA-only peer gets a clear
   * error from set_caps rather than a bare not-negotiated. */
  GstCaps *result;
  if (gst_cuda_prep_base_gpu_possible (GST_CUDA_PREP_BASE (trans))) {
    result = gst_caps_ref (caps);
  } else {
    GstCaps *sys = gst_caps_new_empty (), *dev = gst_caps_new_empty ();
    for (guint i = 0; i < gst_caps_get_size (caps); i++)
      gst_caps_append_structure_full (gst_cuda_prep_caps_has_cuda_feature (caps, i) ? dev : sys,
          gst_structure_copy (gst_caps_get_structure (caps, i)),
          gst_caps_features_copy (gst_caps_get_features (caps, i)));
    result = gst_caps_merge (sys, dev);
  }
  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  return result;
}

static gboolean
gst_cuda_template_match_configure (GstCudaPrepBase * base, GstCaps * incaps, GstCaps * outcaps)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (base);
  MatchState *state = self->state;
  const GstVideoInfo *info = gst_cuda_prep_base_input_info (base);
  const int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  PixelFormat fmt = PixelFormat::GRAY8;
  gst_cuda_prep_pixel_format_from_video (GST_VIDEO_INFO_FORMAT (info), &fmt);

  /* A new frame size invalidates the checks made against the old one: reload the template. */
  state->template_generation = 0;
  state->have_template = FALSE;
  state->host_gray.clear ();

  if (gst_cuda_prep_base_uses_gpu (base)) {
    if (!gst_cuda_prep_base_push_context (base))
      return FALSE;
    Status st = state->gpu.configure (w, h, gst_cuda_prep_base_stream (base));
    state->device_gray.reset ();
    if (st.ok () && !gray_is_plane0 (fmt))
      st = state->device_gray.allocate_pitched ((size_t) w, (size_t) h);
    gst_cuda_prep_base_pop_context (base);
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Could not set up CUDA template matching"),
          ("%s", st.message ().c_str ()));
      return FALSE;
    }
  } else if (!gray_is_plane0 (fmt)) {
    state->host_gray.assign ((size_t) w * h, 0);
  }
  state->matches.reserve (kMaxMatches);
  state->boxes.reserve (kMaxMatches);
  return TRUE;
}

/* ---- template ------------------------------------------------------------------------- */

static Status
set_template (GstCudaTemplateMatch * self, const GrayView & host_templ)
{
  MatchState *state = self->state;
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (self);
  const GstVideoInfo *info = gst_cuda_prep_base_input_info (base);
  Rect search;
  read_search_region (self, &search);
  Rect resolved;
  CUDAPREP_RETURN_IF_ERROR (resolve_search_region (GST_VIDEO_INFO_WIDTH (info),
          GST_VIDEO_INFO_HEIGHT (info), host_templ.width, host_templ.height, search, &resolved));

  if (gst_cuda_prep_base_uses_gpu (base))
    return state->gpu.set_template (host_templ);
  return state->cpu.set_template (host_templ);
}

/* Loads the template if a property changed it since the last frame. */
static gboolean
refresh_template (GstCudaTemplateMatch * self, const GrayView & frame_gray, gboolean frame_on_gpu)
{
  MatchState *state = self->state;
  std::string location;
  std::vector<int> rect;
  gboolean from_rect;
  guint64 generation;

  GST_OBJECT_LOCK (self);
  generation = self->settings->template_generation;
  location = self->settings->template_location;
  rect = self->settings->template_rect;
  from_rect = self->settings->template_from_rect;
  GST_OBJECT_UNLOCK (self);

  if (generation == state->template_generation)
    return TRUE;
  state->template_generation = generation;
  state->have_template = FALSE;

  GrayImage img;
  std::string error;
  if (from_rect) {
    if (rect.size () != 4) {
      error = "template-rect needs 4 values <x, y, width, height>, got " + std::to_string (rect.size ());
    } else if (rect[2] <= 0 || rect[3] <= 0 || rect[0] < 0 || rect[1] < 0 ||
        rect[0] + rect[2] > frame_gray.width || rect[1] + rect[3] > frame_gray.height) {
      error = "template-rect <" + std::to_string (rect[0]) + "," + std::to_string (rect[1]) + "," +
          std::to_string (rect[2]) + "," + std::to_string (rect[3]) + "> is not inside the " +
          std::to_string (frame_gray.width) + "x" + std::to_string (frame_gray.height) + " frame";
    } else {
      img.width = rect[2];
      img.height = rect[3];
      img.pixels.resize ((size_t) img.width * img.height);
      const uint8_t *src = frame_gray.data + (int64_t) rect[1] * frame_gray.stride + rect[0];
      if (frame_on_gpu) {
        Status st = cuda::copy_2d_async (img.pixels.data (), img.width, src, frame_gray.stride,
            img.width, img.height, cuda::CopyKind::DeviceToHost,
            gst_cuda_prep_base_stream (GST_CUDA_PREP_BASE (self)));
        if (st.ok ())
          st = cuda::stream_sync (gst_cuda_prep_base_stream (GST_CUDA_PREP_BASE (self)));
        if (!st.ok ())
          error = st.message ();
      } else {
        for (int y = 0; y < img.height; y++)
          memcpy (&img.pixels[(size_t) y * img.width], src + (int64_t) y * frame_gray.stride, img.width);
      }
    }
  } else if (!location.empty ()) {
    error = gst_cuda_prep_load_gray_image (location, &img);
  } else {
    return TRUE;                /* no template (yet): frames pass through */
  }

  if (error.empty ()) {
    GrayView view;
    view.data = img.pixels.data ();
    view.stride = img.width;
    view.width = img.width;
    view.height = img.height;
    Status st = set_template (self, view);
    if (!st.ok ())
      error = st.message ();
  }
  if (!error.empty ()) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS, ("Cannot use the template: %s", error.c_str ()),
        ("template-%s", from_rect ? "rect" : ("location=" + location).c_str ()));
    return FALSE;
  }
  state->have_template = TRUE;
  GST_INFO_OBJECT (self, "template %dx%d from %s", img.width, img.height,
      from_rect ? "template-rect" : location.c_str ());
  return TRUE;
}

/* ---- per frame ------------------------------------------------------------------------ */

static void
attach_results (GstCudaTemplateMatch * self, GstBuffer * buf, const std::vector<Match> & matches,
    gboolean post)
{
  GValue list = G_VALUE_INIT;
  if (post)
    g_value_init (&list, GST_TYPE_LIST);

  for (const Match & m : matches) {
    GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta (buf,
        "template-match", m.x, m.y, m.width, m.height);
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("template-match",
            "score", G_TYPE_DOUBLE, m.score, "x", G_TYPE_DOUBLE, m.sub_x, "y", G_TYPE_DOUBLE,
            m.sub_y, NULL));
    if (post) {
      GValue v = G_VALUE_INIT;
      g_value_init (&v, GST_TYPE_STRUCTURE);
      g_value_take_boxed (&v, gst_structure_new ("match", "x", G_TYPE_INT, m.x, "y", G_TYPE_INT, m.y,
              "width", G_TYPE_INT, m.width, "height", G_TYPE_INT, m.height,
              "score", G_TYPE_DOUBLE, m.score, "sub-x", G_TYPE_DOUBLE, m.sub_x,
              "sub-y", G_TYPE_DOUBLE, m.sub_y, NULL));
      gst_value_list_append_and_take_value (&list, &v);
    }
  }
  if (!post)
    return;
  GstSegment *segment = &GST_BASE_TRANSFORM (self)->segment;
  GstClockTime pts = GST_BUFFER_PTS (buf);
  GstStructure *s = gst_structure_new ("template-match",
      "timestamp", G_TYPE_UINT64, pts,
      "stream-time", G_TYPE_UINT64, gst_segment_to_stream_time (segment, GST_FORMAT_TIME, pts),
      "running-time", G_TYPE_UINT64, gst_segment_to_running_time (segment, GST_FORMAT_TIME, pts),
      "duration", G_TYPE_UINT64, GST_BUFFER_DURATION (buf),
      "num-matches", G_TYPE_UINT, (guint) matches.size (), NULL);
  gst_structure_take_value (s, "matches", &list);
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

static GstFlowReturn
gst_cuda_template_match_transform_ip (GstBaseTransform * trans, GstBuffer * buf)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  MatchState *state = self->state;
  const gboolean gpu = gst_cuda_prep_base_uses_gpu (base);
  MatchSettings settings;
  gboolean draw, post;
  BoxStyle style;

  GST_OBJECT_LOCK (self);
  settings.threshold = self->settings->threshold;
  settings.max_matches = self->settings->max_matches;
  draw = self->settings->draw;
  post = self->settings->post_messages;
  style.r = (self->settings->color >> 16) & 0xff;
  style.g = (self->settings->color >> 8) & 0xff;
  style.b = self->settings->color & 0xff;
  style.thickness = self->settings->thickness;
  GST_OBJECT_UNLOCK (self);
  const guint region_values = read_search_region (self, &settings.search);
  if (region_values != 0 && region_values != 4) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("search-region needs 4 values <x, y, width, height>, got %u",
            region_values), (NULL));
    return GST_FLOW_ERROR;
  }

  GstVideoFrame frame;
  ImageView view;
  if (!gst_cuda_prep_base_push_context (base))
    return GST_FLOW_ERROR;
  if (!gst_cuda_prep_base_map_input (base, buf, draw, &frame, &view)) {
    gst_cuda_prep_base_pop_context (base);
    return GST_FLOW_ERROR;
  }

  /* luma / gray view of the frame, where the matcher reads it (host or device) */
  GrayView gray;
  gray.width = view.width;
  gray.height = view.height;
  Status st;
  if (gray_is_plane0 (view.format)) {
    gray.data = view.planes[0].data;
    gray.stride = view.planes[0].stride;
  } else if (gpu) {
    gray.data = state->device_gray.data ();
    gray.stride = (int64_t) state->device_gray.pitch ();
    st = to_gray_cuda (view, state->device_gray.data (), gray.stride, gst_cuda_prep_base_stream (base));
  } else {
    gray.data = state->host_gray.data ();
    gray.stride = view.width;
    st = to_gray_cpu (view, state->host_gray.data (), gray.stride);
  }

  GstFlowReturn ret = GST_FLOW_OK;
  gboolean modified = FALSE;
  state->matches.clear ();
  if (!st.ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Gray conversion failed"), ("%s", st.message ().c_str ()));
    ret = GST_FLOW_ERROR;
  } else if (!refresh_template (self, gray, gpu)) {
    ret = GST_FLOW_ERROR;
  } else if (state->have_template) {
    st = gpu ? state->gpu.match (gray, settings, &state->matches)
        : state->cpu.match (gray, settings, &state->matches);
    if (!st.ok ()) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Template matching failed: %s", st.message ().c_str ()), (NULL));
      ret = GST_FLOW_ERROR;
    } else if (draw && !state->matches.empty ()) {
      state->boxes.clear ();
      for (const Match & m : state->matches)
        state->boxes.push_back (Rect {m.x, m.y, m.width, m.height});
      if (gpu)
        st = draw_boxes_cuda (view, state->boxes.data (), (int) state->boxes.size (), style,
            gst_cuda_prep_base_stream (base));
      else
        draw_boxes_cpu (view, state->boxes.data (), (int) state->boxes.size (), style);
      modified = st.ok ();
      if (!st.ok ()) {
        GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Drawing failed"), ("%s", st.message ().c_str ()));
        ret = GST_FLOW_ERROR;
      }
    }
  } else if (!state->warned_no_template) {
    GST_WARNING_OBJECT (self, "no template set (template-location or template-rect): passing frames through");
    state->warned_no_template = TRUE;
  }

  if (!gst_cuda_prep_base_unmap_input (base, &frame, modified))
    ret = GST_FLOW_ERROR;
  gst_cuda_prep_base_pop_context (base);
  if (ret == GST_FLOW_OK && state->have_template)
    attach_results (self, buf, state->matches, post);
  return ret;
}

static gboolean
gst_cuda_template_match_propose_allocation (GstBaseTransform * trans, GstQuery * decide_query,
    GstQuery * query)
{
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  gst_query_add_allocation_meta (query, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE, NULL);
  return GST_BASE_TRANSFORM_CLASS (parent_class)->propose_allocation (trans, decide_query, query);
}

static gboolean
gst_cuda_template_match_stop (GstBaseTransform * trans)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (trans);
  GstCudaPrepBase *base = GST_CUDA_PREP_BASE (trans);
  MatchState *state = self->state;
  if (gst_cuda_prep_base_uses_gpu (base) && gst_cuda_prep_base_push_context (base)) {
    state->gpu.release ();
    state->device_gray.reset ();
    gst_cuda_prep_base_pop_context (base);
  }
  state->have_template = FALSE;
  state->template_generation = 0;
  state->host_gray.clear ();
  return GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
}

/* ---- properties ----------------------------------------------------------------------- */

static void
gst_cuda_template_match_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (object);
  MatchSettingsProps &s = *self->settings;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TEMPLATE_LOCATION:
      s.template_location = g_value_get_string (value) ? g_value_get_string (value) : "";
      s.template_from_rect = FALSE;
      s.template_generation++;
      break;
    case PROP_TEMPLATE_RECT:
      s.template_rect = gst_cuda_prep_vector_from_array<int> (value);
      s.template_from_rect = !s.template_rect.empty ();
      s.template_generation++;
      break;
    case PROP_SEARCH_REGION:
      s.search_region = gst_cuda_prep_vector_from_array<int> (value);
      s.template_generation++;  /* re-check that the template fits the new region */
      break;
    case PROP_THRESHOLD: s.threshold = g_value_get_double (value); break;
    case PROP_MAX_MATCHES: s.max_matches = g_value_get_uint (value); break;
    case PROP_DRAW: s.draw = g_value_get_boolean (value); break;
    case PROP_COLOR: s.color = g_value_get_uint (value); break;
    case PROP_THICKNESS: s.thickness = g_value_get_uint (value); break;
    case PROP_POST_MESSAGES: s.post_messages = g_value_get_boolean (value); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_template_match_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (object);
  const MatchSettingsProps &s = *self->settings;

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TEMPLATE_LOCATION: g_value_set_string (value, s.template_location.c_str ()); break;
    case PROP_TEMPLATE_RECT: gst_cuda_prep_vector_to_array (s.template_rect, value); break;
    case PROP_SEARCH_REGION: gst_cuda_prep_vector_to_array (s.search_region, value); break;
    case PROP_THRESHOLD: g_value_set_double (value, s.threshold); break;
    case PROP_MAX_MATCHES: g_value_set_uint (value, s.max_matches); break;
    case PROP_DRAW: g_value_set_boolean (value, s.draw); break;
    case PROP_COLOR: g_value_set_uint (value, s.color); break;
    case PROP_THICKNESS: g_value_set_uint (value, s.thickness); break;
    case PROP_POST_MESSAGES: g_value_set_boolean (value, s.post_messages); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_template_match_finalize (GObject * object)
{
  GstCudaTemplateMatch *self = GST_CUDA_TEMPLATE_MATCH (object);
  delete self->settings;
  delete self->state;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_cuda_template_match_class_init (GstCudaTemplateMatchClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaPrepBaseClass *base_class = GST_CUDA_PREP_BASE_CLASS (klass);
  const GParamFlags rw = (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_template_match_set_property;
  gobject_class->get_property = gst_cuda_template_match_get_property;
  gobject_class->finalize = gst_cuda_template_match_finalize;

  g_object_class_install_property (gobject_class, PROP_TEMPLATE_LOCATION,
      g_param_spec_string ("template-location", "Template location",
          "Image file with the template (PNG, JPEG, PGM, ...; colour is reduced to gray). "
          "Changing it while playing takes effect at the next frame", NULL, rw));
  g_object_class_install_property (gobject_class, PROP_TEMPLATE_RECT,
      gst_param_spec_array ("template-rect", "Template rectangle",
          "\"<x, y, width, height>\": cut the template from the next frame (wins over "
          "template-location when set last)",
          g_param_spec_int ("template-rect-value", "Value", "One coordinate", G_MININT, G_MAXINT, 0,
              (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), rw));
  g_object_class_install_property (gobject_class, PROP_SEARCH_REGION,
      gst_param_spec_array ("search-region", "Search region",
          "\"<x, y, width, height>\" of the frame to search; empty (default) = whole frame",
          g_param_spec_int ("search-region-value", "Value", "One coordinate", G_MININT, G_MAXINT, 0,
              (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), rw));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_double ("threshold", "Threshold",
          "Minimum TM_CCOEFF_NORMED score (-1..1) of a reported match", -1.0, 1.0,
          DEFAULT_THRESHOLD, rw));
  g_object_class_install_property (gobject_class, PROP_MAX_MATCHES,
      g_param_spec_uint ("max-matches", "Maximum matches",
          "Most matches reported per frame, best first, none overlapping another", 1, kMaxMatches,
          DEFAULT_MAX_MATCHES, rw));
  g_object_class_install_property (gobject_class, PROP_DRAW,
      g_param_spec_boolean ("draw", "Draw", "Draw rectangle outlines around matches into the frame",
          DEFAULT_DRAW, rw));
  g_object_class_install_property (gobject_class, PROP_COLOR,
      g_param_spec_uint ("color", "Color", "Outline colour as 0xAARRGGBB (alpha ignored)", 0,
          G_MAXUINT32, DEFAULT_COLOR, rw));
  g_object_class_install_property (gobject_class, PROP_THICKNESS,
      g_param_spec_uint ("thickness", "Thickness", "Outline thickness in pixels, drawn inside the box",
          1, 64, DEFAULT_THICKNESS, rw));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post a \"template-match\" element message per frame listing every match",
          DEFAULT_POST_MESSAGES, rw));

  gst_element_class_set_static_metadata (element_class, "CUDA template match",
      "Filter/Analyzer/Video/Hardware",
      "Finds a template in each frame (normalized cross-correlation, TM_CCOEFF_NORMED) and "
      "reports matches as ROI meta, bus messages and drawn boxes (CPU fallback)",
      "gst-cudaprep developers");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_template_match_transform_caps);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cuda_template_match_transform_ip);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_template_match_propose_allocation);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_template_match_stop);
  base_class->configure = GST_DEBUG_FUNCPTR (gst_cuda_template_match_configure);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_template_match_debug, "cudatemplatematch", 0,
      "cudatemplatematch element");
}

static void
gst_cuda_template_match_init (GstCudaTemplateMatch * self)
{
  self->settings = new MatchSettingsProps ();
  self->state = new MatchState ();
}
