#include "template_loader.h"

#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "image.h"
#include "pixel_format.h"
#include "templatematch.h"

std::string
gst_cuda_prep_load_gray_image (const std::string & path, GrayImage * out)
{
  if (!g_file_test (path.c_str (), G_FILE_TEST_EXISTS))
    return "template file '" + path + "' does not exist";
  if (!g_file_test (path.c_str (), G_FILE_TEST_IS_REGULAR))
    return "template file '" + path + "' is not a regular file";

  /* videoconvert passes the listed formats through untouched and converts anything else */
  gchar *escaped = g_strescape (path.c_str (), NULL);
  std::string desc = std::string ("filesrc location=\"") + escaped + "\" ! decodebin ! videoconvert ! "
      "appsink name=sink sync=false caps=\"video/x-raw,format={GRAY8,I420,NV12,Y42B,Y444,BGR,RGB,BGRx,RGBx,BGRA,RGBA}\"";
  g_free (escaped);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc.c_str (), &err);
  if (!pipeline) {
    std::string msg = std::string ("could not build the decoder for '") + path + "': " + err->message;
    g_error_free (err);
    return msg;
  }
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  /* Wait for the first decoded frame, a decoder error or EOS, at most 10 s. */
  GstSample *sample = NULL;
  GstMessage *error_msg = NULL;
  for (int waited_ms = 0; !sample && !error_msg && waited_ms < 10000; waited_ms += 20) {
    sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 20 * GST_MSECOND);
    if (!sample) {
      error_msg = gst_bus_pop_filtered (GST_ELEMENT_BUS (pipeline), GST_MESSAGE_ERROR);
      if (!error_msg && gst_app_sink_is_eos (GST_APP_SINK (sink)))
        break;
    }
  }
  std::string result;

  if (!sample) {
    result = "could not decode template file '" + path + "'";
    if (error_msg) {
      GError *e = NULL;
      gst_message_parse_error (error_msg, &e, NULL);
      result += std::string (": ") + e->message;
      g_error_free (e);
    }
  } else {
    GstVideoInfo info;
    GstVideoFrame frame;
    cudaprep::PixelFormat fmt = cudaprep::PixelFormat::GRAY8;
    if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample)) ||
        !gst_video_frame_map (&frame, &info, gst_sample_get_buffer (sample), GST_MAP_READ)) {
      result = "could not read the decoded template '" + path + "'";
    } else {
      const int w = GST_VIDEO_INFO_WIDTH (&info), h = GST_VIDEO_INFO_HEIGHT (&info);
      out->width = w;
      out->height = h;
      out->pixels.assign ((size_t) w * h, 0);
      if (!gst_cuda_prep_pixel_format_from_video (GST_VIDEO_INFO_FORMAT (&info), &fmt)) {
        /* planar YUV other than I420/NV12: luma is plane 0 */
        for (int y = 0; y < h; y++)
          memcpy (&out->pixels[(size_t) y * w],
              (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0) + (size_t) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0), w);
      } else {
        cudaprep::ImageView view;
        view.format = fmt;
        view.width = w;
        view.height = h;
        for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame) && p < 3; p++) {
          view.planes[p].data = (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
          view.planes[p].stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
        }
        cudaprep::Status st = cudaprep::to_gray_cpu (view, out->pixels.data (), w);
        if (!st.ok ())
          result = st.message ();
      }
      gst_video_frame_unmap (&frame);
    }
    gst_sample_unref (sample);
  }
  if (error_msg)
    gst_message_unref (error_msg);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  return result;
}
