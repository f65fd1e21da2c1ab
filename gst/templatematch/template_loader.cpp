#include "template_loader.h"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "image.h"
#include "templatematch.h"
#include "video_input.h"

/* The decoded size, seen on the caps before any pixel is decoded. */
struct DecodedSize {
  gint width = 0, height = 0;
};

static GstPadProbeReturn record_size(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
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

static void link_decoded_pad(GstElement *decodebin, GstPad *pad, gpointer convert) {
  GstPad *sink = gst_element_get_static_pad(GST_ELEMENT(convert), "sink");
  if (!gst_pad_is_linked(sink)) gst_pad_link(pad, sink);
  gst_object_unref(sink);
}

/* filesrc ! decodebin ! videoconvert ! appsink, built from elements: the location is set as a
 * property, so no file name goes through a launch string's escaping. */
static GstElement *make_decoder(const std::string &path, int max_side, GstElement **sink, DecodedSize *size) {
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
  /* videoconvert passes these formats through untouched and converts anything else; the size
   * bound makes an oversize image fail negotiation instead of being decoded. */
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

/* The decoded sample as 8-bit gray. */
static std::string to_gray(GstSample *sample, const std::string &path, GrayImage *out) {
  GstVideoInfo info;
  GstVideoFrame frame;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) ||
      !gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ))
    return "could not read the decoded template '" + path + "'";
  const int w = GST_VIDEO_INFO_WIDTH(&info), h = GST_VIDEO_INFO_HEIGHT(&info);
  out->width = w;
  out->height = h;
  out->pixels.assign((size_t)w * h, 0);
  std::string result;
  cudaprep::ImageView view;
  if (gst_cuda_prep_view_from_frame(&frame, &view)) {
    cudaprep::Status st = cudaprep::to_gray_cpu(view, out->pixels.data(), w);
    if (!st.ok()) result = st.message();
  } else {
    /* planar YUV other than I420/NV12: luma is plane 0 */
    for (int y = 0; y < h; y++)
      memcpy(
          &out->pixels[(size_t)y * w],
          (const uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0) + (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0),
          w);
  }
  gst_video_frame_unmap(&frame);
  return result;
}

std::string gst_cuda_prep_load_gray_image(const std::string &path, int max_side, GrayImage *out) {
  if (!g_file_test(path.c_str(), G_FILE_TEST_EXISTS)) return "template file '" + path + "' does not exist";
  if (!g_file_test(path.c_str(), G_FILE_TEST_IS_REGULAR)) return "template file '" + path + "' is not a regular file";

  GstElement *sink = NULL;
  DecodedSize size;
  GstElement *pipeline = make_decoder(path, max_side, &sink, &size);
  if (!pipeline)
    return "could not build the decoder for '" + path +
           "': filesrc, decodebin, videoconvert "
           "or appsink is missing";
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  /* Wait for the first decoded frame, a decoder error or EOS, at most 10 s. */
  GstSample *sample = NULL;
  GstMessage *error_msg = NULL;
  for (int waited_ms = 0; !sample && !error_msg && waited_ms < 10000; waited_ms += 20) {
    sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 20 * GST_MSECOND);
    if (!sample) {
      error_msg = gst_bus_pop_filtered(GST_ELEMENT_BUS(pipeline), GST_MESSAGE_ERROR);
      if (!error_msg && gst_app_sink_is_eos(GST_APP_SINK(sink))) break;
    }
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);

  std::string result;
  if (sample) {
    result = to_gray(sample, path, out);
    gst_sample_unref(sample);
  } else if (size.width > max_side || size.height > max_side) {
    result = "template file '" + path + "' is " + std::to_string(size.width) + "x" + std::to_string(size.height) +
             " pixels; templates can be at most " + std::to_string(max_side) + "x" + std::to_string(max_side);
  } else {
    result = "could not decode template file '" + path + "'";
    if (error_msg) {
      GError *e = NULL;
      gst_message_parse_error(error_msg, &e, NULL);
      result += std::string(": ") + e->message;
      g_error_free(e);
    }
  }
  if (error_msg) gst_message_unref(error_msg);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return result;
}
