#include "regress_image.h"

#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <algorithm>
#include <cstring>

#include "regress_store.h"

namespace regress {

namespace {

// Builds a GstSample of an RGB frame (GStreamer's RGB rows are padded to 4 bytes).
GstSample* rgb_sample(const RgbImage& image) {
  GstVideoInfo info;
  gst_video_info_set_format(&info, GST_VIDEO_FORMAT_RGB, image.width, image.height);
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, info.size, nullptr);
  GstMapInfo map;
  gst_buffer_map(buf, &map, GST_MAP_WRITE);
  const size_t row = (size_t)image.width * 3;
  for (int y = 0; y < image.height; y++) memcpy(map.data + (size_t)y * info.stride[0], image.rgb.data() + y * row, row);
  gst_buffer_unmap(buf, &map);
  GstCaps* caps = gst_video_info_to_caps(&info);
  GstSample* sample = gst_sample_new(buf, caps, nullptr, nullptr);
  gst_caps_unref(caps);
  gst_buffer_unref(buf);
  return sample;
}

// Copies an RGB video sample into a packed image.
bool image_from_sample(GstSample* sample, RgbImage* out) {
  GstVideoInfo info;
  GstCaps* caps = gst_sample_get_caps(sample);
  if (!caps || !gst_video_info_from_caps(&info, caps) || GST_VIDEO_INFO_FORMAT(&info) != GST_VIDEO_FORMAT_RGB)
    return false;
  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ)) return false;
  *out = RgbImage(GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info));
  const uint8_t* src = (const uint8_t*)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0);
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  for (int y = 0; y < out->height; y++) memcpy(out->at(0, y), src + (size_t)y * stride, (size_t)out->width * 3);
  gst_video_frame_unmap(&frame);
  return true;
}

}  // namespace

bool encode_png(const RgbImage& image, std::vector<uint8_t>* png, std::string* error) {
  if (image.width <= 0 || image.height <= 0) {
    *error = "cannot encode an empty image";
    return false;
  }
  GstSample* in = rgb_sample(image);
  GstCaps* to = gst_caps_new_empty_simple("image/png");
  GError* err = nullptr;
  GstSample* out = gst_video_convert_sample(in, to, 30 * GST_SECOND, &err);
  gst_caps_unref(to);
  gst_sample_unref(in);
  if (!out) {
    *error = std::string("PNG encoding failed (is GStreamer's pngenc, gst-plugins-good, installed?): ") +
             (err ? err->message : "no output");
    g_clear_error(&err);
    return false;
  }
  GstMapInfo map;
  GstBuffer* buf = gst_sample_get_buffer(out);
  const bool ok = buf && gst_buffer_map(buf, &map, GST_MAP_READ);
  if (ok) {
    png->assign(map.data, map.data + map.size);
    gst_buffer_unmap(buf, &map);
  } else {
    *error = "PNG encoding gave no data";
  }
  gst_sample_unref(out);
  return ok;
}

bool write_png(const std::string& path, const RgbImage& image, std::string* error) {
  std::vector<uint8_t> png;
  if (!encode_png(image, &png, error)) return false;
  return write_file(path, png.data(), png.size(), error);
}

bool decode_frames(const std::string& clip, const std::vector<FrameWanted>& wanted, std::map<uint64_t, RgbImage>* out,
                   std::string* error) {
  if (wanted.empty()) return true;
  GError* err = nullptr;
  GstElement* pipeline = gst_parse_launch(
      "filesrc name=src ! decodebin ! videoconvert ! video/x-raw,format=RGB ! appsink name=out sync=false", &err);
  if (!pipeline) {
    *error = std::string("cannot build the decoding pipeline: ") + (err ? err->message : "?");
    g_clear_error(&err);
    return false;
  }
  g_clear_error(&err);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
  g_object_set(src, "location", clip.c_str(), NULL);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);

  uint64_t last = 0;
  for (const auto& w : wanted) last = std::max(last, w.index);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* failure = nullptr;
  uint64_t index = 0;
  size_t found = 0;
  gint64 stalled_since = g_get_monotonic_time();
  // frames come in PTS order from a decoder: past the last index wanted, nothing more will come
  while (found < wanted.size() && index <= last + 16) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (!s) {
      // nothing yet: the end of the clip, an error, or a decoder that stopped
      if (gst_app_sink_is_eos(GST_APP_SINK(sink))) break;
      if ((failure = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR))) break;
      if (g_get_monotonic_time() - stalled_since > 20 * G_USEC_PER_SEC) break;
      continue;
    }
    stalled_since = g_get_monotonic_time();
    const GstBuffer* buf = gst_sample_get_buffer(s);
    const int64_t pts = buf && GST_BUFFER_PTS_IS_VALID(buf) ? (int64_t)GST_BUFFER_PTS(buf) : -1;
    for (const auto& w : wanted) {
      const bool hit = w.pts >= 0 ? w.pts == pts : w.index == index;
      RgbImage image;
      if (hit && !out->count(w.index) && image_from_sample(s, &image)) {
        (*out)[w.index] = std::move(image);
        found++;
      }
    }
    gst_sample_unref(s);
    index++;
  }
  if (found < wanted.size()) {
    if (failure) {
      gst_message_parse_error(failure, &err, nullptr);
      *error = "the clip " + clip + " does not decode: " + (err ? err->message : "?");
      g_clear_error(&err);
    } else {
      *error = "frames not found in " + clip + " (" + std::to_string(index) + " frames decoded)";
    }
  }
  if (failure) gst_message_unref(failure);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return found == wanted.size();
}

}  // namespace regress
