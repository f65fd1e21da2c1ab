#include "template_loader.h"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "image.h"
#include "pixel_format.h"
#include "templatematch.h"

namespace {

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

/* ---- Sizes from file headers ---------------------------------------------------------------- */

struct File {
  FILE *f = nullptr;
  ~File() {
    if (f) fclose(f);
  }
};

/* Reads exactly n bytes; false at the end of the file. */
bool read_bytes(FILE *f, uint8_t *dst, size_t n) { return fread(dst, 1, n, f) == n; }

uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
uint32_t le16(const uint8_t *p) { return (uint32_t)p[1] << 8 | p[0]; }
uint32_t le32(const uint8_t *p) { return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]; }

/* Clamps a header's 32-bit size to int (a size over INT_MAX is reported as INT_MAX: refused anyway). */
int side(uint32_t v) { return v > 0x7fffffffu ? 0x7fffffff : (int)v; }

/* JPEG: markers from SOI to the first frame header (SOF0..SOF15 but DHT, JPG and DAC). */
std::string jpeg_size(FILE *f, int *w, int *h) {
  uint8_t b[8];
  for (;;) {
    int c;
    do c = fgetc(f);
    while (c != EOF && c != 0xff);
    do c = fgetc(f);
    while (c == 0xff);
    if (c == EOF) return "no frame header before the end of the file";
    if (c == 0xd8 || c == 0x01 || (c >= 0xd0 && c <= 0xd7)) continue; /* markers without a length */
    if (c == 0xd9 || c == 0xda) return "no frame header before the image data";
    if (!read_bytes(f, b, 2)) return "truncated marker segment";
    const uint32_t len = be16(b);
    if (len < 2) return "bad marker segment length";
    if (c >= 0xc0 && c <= 0xcf && c != 0xc4 && c != 0xc8 && c != 0xcc) {
      if (len < 7 || !read_bytes(f, b, 5)) return "truncated frame header";
      *h = (int)be16(b + 1);
      *w = (int)be16(b + 3);
      return "";
    }
    if (fseek(f, (long)len - 2, SEEK_CUR) != 0) return "truncated marker segment";
  }
}

/* PNM (P1..P6): magic, then width and height as decimal text, with # comments. */
std::string pnm_size(FILE *f, int *w, int *h) {
  int values[2];
  for (int &v : values) {
    int c = fgetc(f);
    for (;;) { /* whitespace and comments */
      if (c == '#')
        while (c != EOF && c != '\n' && c != '\r') c = fgetc(f);
      else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
        c = fgetc(f);
      else
        break;
    }
    if (c < '0' || c > '9') return "no size in its header";
    long long n = 0;
    for (; c >= '0' && c <= '9'; c = fgetc(f)) n = std::min(n * 10 + (c - '0'), (long long)0x7fffffff);
    v = (int)n;
  }
  *w = values[0];
  *h = values[1];
  return "";
}

}  // namespace

std::string gst_cuda_prep_image_file_size(const std::string &path, int *width, int *height, std::string *format) {
  *width = *height = 0;
  format->clear();
  File file;
  file.f = fopen(path.c_str(), "rb");
  if (!file.f) return "'" + path + "' cannot be read: " + strerror(errno);
  FILE *f = file.f;
  uint8_t b[32];
  const size_t got = fread(b, 1, sizeof b, f);
  if (ferror(f)) return "'" + path + "' cannot be read: " + strerror(errno);
  std::string broken;
  static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (got >= 8 && memcmp(b, kPng, 8) == 0) {
    *format = "PNG";
    if (got < 24 || memcmp(b + 12, "IHDR", 4) != 0)
      broken = "no IHDR header";
    else
      *width = side(be32(b + 16)), *height = side(be32(b + 20));
  } else if (got >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) {
    *format = "JPEG";
    fseek(f, 2, SEEK_SET);
    broken = jpeg_size(f, width, height);
  } else if (got >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' && strchr(" \t\r\n#", (char)b[2]) != nullptr &&
             b[2] != 0) {
    *format = "PNM";
    fseek(f, 2, SEEK_SET);
    broken = pnm_size(f, width, height);
  } else if (got >= 2 && b[0] == 'B' && b[1] == 'M') {
    *format = "BMP";
    if (got < 26)
      broken = "truncated header";
    else if (le32(b + 14) == 12) /* OS/2 core header: 16-bit sizes */
      *width = (int)le16(b + 18), *height = (int)le16(b + 20);
    else {
      const int32_t w = (int32_t)le32(b + 18), h = (int32_t)le32(b + 22); /* height < 0: top-down */
      *width = w == INT32_MIN ? 0x7fffffff : std::abs(w);
      *height = h == INT32_MIN ? 0x7fffffff : std::abs(h);
    }
  } else if (got >= 10 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)) {
    *format = "GIF";
    *width = (int)le16(b + 6), *height = (int)le16(b + 8);
  }
  if (!broken.empty()) {
    *width = *height = 0;
    return "'" + path + "' is not a valid " + *format + " file: " + broken;
  }
  return "";
}

namespace {

/* ---- Decoding --------------------------------------------------------------------------------- */

/* The decoded size, seen on the caps before any pixel is decoded. */
struct DecodedSize {
  gint width = 0, height = 0;
};

GstPadProbeReturn record_size(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
  GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
  if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
    GstCaps *caps;
    gst_event_parse_caps(event, &caps);
    const GstStructure *s = gst_caps_get_structure(caps, 0);
    DecodedSize *size = (DecodedSize *)user_data;
    gst_structure_get_int(s, "width", &size->width);
    gst_structure_get_int(s, "height", &size->height);
  }
  return GST_PAD_PROBE_OK;
}

void link_decoded_pad(GstElement *decodebin, GstPad *pad, gpointer convert) {
  GstPad *sink = gst_element_get_static_pad(GST_ELEMENT(convert), "sink");
  if (!gst_pad_is_linked(sink)) gst_pad_link(pad, sink);
  gst_object_unref(sink);
}

/* filesrc ! decodebin ! videoconvert ! appsink, built from elements: the location is set as a
 * property, so no file name goes through a launch string's escaping. */
GstElement *make_decoder(const std::string &path, int max_side, GstElement **sink, DecodedSize *size) {
  GstElement *pipeline = gst_pipeline_new("cudaprep-template-loader");
  GstElement *src = gst_element_factory_make("filesrc", NULL);
  GstElement *decode = gst_element_factory_make("decodebin", NULL);
  GstElement *convert = gst_element_factory_make("videoconvert", NULL);
  *sink = gst_element_factory_make("appsink", NULL);
  if (!src || !decode || !convert || !*sink) {
    for (GstElement *e : {src, decode, convert, *sink})
      if (e) gst_object_unref(e);
    gst_object_unref(pipeline);
    return NULL;
  }
  g_object_set(src, "location", path.c_str(), NULL);
  /* videoconvert passes these formats through untouched and converts anything else (keeping an
   * alpha channel where the decoder has one); the size bound makes an oversize image fail
   * negotiation instead of being converted. */
  gchar *caps_str = g_strdup_printf(
      "video/x-raw, format = (string) { GRAY8, I420, NV12, Y42B, "
      "Y444, BGR, RGB, BGRx, RGBx, BGRA, RGBA }, width = (int) [ 1, %d ], height = (int) [ 1, %d ]",
      max_side, max_side);
  GstCaps *caps = gst_caps_from_string(caps_str);
  g_free(caps_str);
  g_object_set(*sink, "caps", caps, "sync", FALSE, NULL);
  gst_caps_unref(caps);
  gst_bin_add_many(GST_BIN(pipeline), src, decode, convert, *sink, NULL);
  gst_element_link(src, decode);
  gst_element_link(convert, *sink);
  g_signal_connect(decode, "pad-added", G_CALLBACK(link_decoded_pad), convert);
  GstPad *pad = gst_element_get_static_pad(convert, "sink");
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, record_size, size, NULL);
  gst_object_unref(pad);
  gst_object_ref(*sink);
  return pipeline;
}

/* The decoded sample as 8-bit gray, and its alpha (if @alpha and the decode has one). */
std::string to_gray(GstSample *sample, const std::string &what, GrayImage *out, std::vector<uint8_t> *alpha) {
  GstVideoInfo info;
  GstVideoFrame frame;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) ||
      !gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ))
    return "could not read the decoded " + what;
  const int w = GST_VIDEO_INFO_WIDTH(&info), h = GST_VIDEO_INFO_HEIGHT(&info);
  out->width = w;
  out->height = h;
  out->pixels.assign((size_t)w * h, 0);
  if (alpha) alpha->clear();
  std::string result;
  cudaprep::PixelFormat format;
  const uint8_t *plane0 = (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0);
  const int64_t stride0 = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  if (gst_cuda_prep_pixel_format_from_video(GST_VIDEO_FRAME_FORMAT(&frame), &format)) {
    cudaprep::ImageView view;
    view.format = format;
    view.width = w;
    view.height = h;
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&frame) && p < (guint)cudaprep::kMaxPlanes; p++) {
      view.planes[p].data = (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&frame, p);
      view.planes[p].stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, p);
    }
    cudaprep::Status st = cudaprep::to_gray_cpu(view, out->pixels.data(), w);
    if (!st.ok()) result = st.message();
    const int a = cudaprep::pixel_format_info(format).alpha;
    if (alpha && a >= 0 && GST_VIDEO_INFO_HAS_ALPHA(&info)) {
      const int step = cudaprep::packed_bytes_per_pixel(format);
      alpha->resize((size_t)w * h);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) (*alpha)[(size_t)y * w + x] = plane0[y * stride0 + (int64_t)x * step + a];
    }
  } else {
    /* planar YUV other than I420/NV12: luma is plane 0 */
    for (int y = 0; y < h; y++) memcpy(&out->pixels[(size_t)y * w], plane0 + y * stride0, w);
  }
  gst_video_frame_unmap(&frame);
  return result;
}

constexpr int kDecodeTimeoutMs = 10000;

/* Decodes @path (@role: "template file", "mask file") with its size checked from the header first. */
std::string decode_file(const std::string &path, const char *role, int max_side, GrayImage *out,
                        std::vector<uint8_t> *alpha) {
  const std::string what = std::string(role) + " '" + path + "'";
  if (!g_file_test(path.c_str(), G_FILE_TEST_EXISTS)) return what + " does not exist";
  if (!g_file_test(path.c_str(), G_FILE_TEST_IS_REGULAR)) return what + " is not a regular file";

  int hw = 0, hh = 0;
  std::string format;
  std::string error = gst_cuda_prep_image_file_size(path, &hw, &hh, &format);
  if (!error.empty()) return std::string(role) + " " + error;
  const std::string limit = "; templates can be at most " + size_text(max_side, max_side);
  if (!format.empty() && (hw > max_side || hh > max_side)) return what + " is " + size_text(hw, hh) + " pixels" + limit;
  if (!format.empty() && (hw == 0 || hh == 0) && format != "JPEG") /* JPEG: height 0 = set later (DNL) */
    return what + " is " + size_text(hw, hh) + " pixels: an empty image";

  GstElement *sink = NULL;
  DecodedSize size;
  GstElement *pipeline = make_decoder(path, max_side, &sink, &size);
  if (!pipeline)
    return "could not build the decoder for " + what + ": filesrc, decodebin, videoconvert or appsink is missing";
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  /* Wait for the first decoded frame, a decoder error or EOS. */
  GstSample *sample = NULL;
  GstMessage *error_msg = NULL;
  bool eos = false;
  gint64 deadline = g_get_monotonic_time() + (gint64)kDecodeTimeoutMs * 1000;
  while (!sample && !error_msg && !eos && g_get_monotonic_time() < deadline) {
    sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND);
    if (!sample) {
      error_msg = gst_bus_pop_filtered(GST_ELEMENT_BUS(pipeline), GST_MESSAGE_ERROR);
      eos = !error_msg && gst_app_sink_is_eos(GST_APP_SINK(sink));
    }
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);

  std::string result;
  if (sample) {
    result = to_gray(sample, what, out, alpha);
    gst_sample_unref(sample);
  } else if (size.width > max_side || size.height > max_side) {
    result = what + " is " + size_text(size.width, size.height) + " pixels" + limit;
  } else {
    result = "could not decode " + what;
    if (error_msg) {
      GError *e = NULL;
      gst_message_parse_error(error_msg, &e, NULL);
      result += std::string(": ") + e->message;
      g_error_free(e);
    } else if (!eos) {
      result += ": no image after " + std::to_string(kDecodeTimeoutMs / 1000) + " s";
    } else {
      result += ": the file holds no image";
    }
  }
  if (error_msg) gst_message_unref(error_msg);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return result;
}

}  // namespace

std::string gst_cuda_prep_load_gray_image(const std::string &path, int max_side, GrayImage *out) {
  return decode_file(path, "template file", max_side, out, nullptr);
}

std::string gst_cuda_prep_load_masked_template(const std::string &path, const std::string &mask_path, int max_side,
                                               cudaprep::MaskedGray *out) {
  GrayImage img;
  std::vector<uint8_t> alpha;
  std::string error = decode_file(path, "template file", max_side, &img, mask_path.empty() ? &alpha : nullptr);
  if (!error.empty()) return error;
  std::vector<uint8_t> mask;
  if (!mask_path.empty()) {
    GrayImage m;
    error = decode_file(mask_path, "mask file", max_side, &m, nullptr);
    if (!error.empty()) return error;
    if (m.width != img.width || m.height != img.height)
      return "mask file '" + mask_path + "' is " + size_text(m.width, m.height) + " pixels, its template '" + path +
             "' " + size_text(img.width, img.height) + ": a mask must have its template's size";
    mask = std::move(m.pixels);
  } else {
    mask = std::move(alpha);
  }
  for (auto &v : mask) v = v != 0;
  if (std::all_of(mask.begin(), mask.end(), [](uint8_t v) { return v != 0; })) mask.clear();
  out->width = img.width;
  out->height = img.height;
  out->pixels = std::move(img.pixels);
  out->mask = std::move(mask);
  return "";
}
