// Example consumer of cudatensorize output, the way a detector application would use it:
// runs a pipeline ending in `appsink name=sink`, takes each tensor (the device pointer when it
// is in CUDA memory, ready to hand to TensorRT; host data otherwise), reads the transform meta
// and maps a box from tensor space back to the frame. Optionally writes the first tensor back
// as a PNG (denormalised) so a person can look at the letterbox. Takes float32, float16, uint8
// and int8 tensors of 3 channels or 1 (gray, written as a gray picture).
//
//   tensor_consumer [--preview out.png] [--mean m] [--std s] [--scale k] "PIPELINE ... ! appsink name=sink"
//   tensor_consumer --help
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "example_pipeline.h"
#include "gstcudaprepmeta.h"

// GST_MAP_CUDA from <gst/cuda/gstcudamemory.h>, spelled out so this example builds without the
// CUDA headers: maps GstCudaMemory to its device pointer instead of downloading it.
#define MAP_CUDA ((GstMapFlags)(GST_MAP_FLAG_LAST << 1))

namespace {

struct Options {
  std::string pipeline;
  std::string preview;
  // To undo the normalisation for the preview; unset: cudatensorize's default for the tensor's
  // type (pixel / 255 for floats, the pixel for uint8, pixel - 128 for int8).
  double scale = NAN, mean = NAN, std = 1.0;
};

float half_to_float(uint16_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp((float)mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp((float)(mant | 0x400), (int)exp - 25);
  return sign ? -v : v;
}

// Element i of a tensor of NNStreamer type `type` as a double.
double tensor_value(const uint8_t* data, const char* type, size_t i) {
  if (std::strcmp(type, "float16") == 0) return half_to_float(((const uint16_t*)data)[i]);
  if (std::strcmp(type, "uint8") == 0) return data[i];
  if (std::strcmp(type, "int8") == 0) return ((const int8_t*)data)[i];
  return ((const float*)data)[i];
}

// Writes an NCHW/NHWC tensor of `channels` (3, or 1: gray) as an 8-bit RGB PNG through
// GStreamer's pngenc.
bool write_preview(const std::string& path, const std::vector<float>& t, int w, int h, int channels, bool nchw,
                   const Options& o) {
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, (gsize)w * h * 3, nullptr);
  GstMapInfo map;
  gst_buffer_map(buf, &map, GST_MAP_WRITE);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) {
        const int k = channels == 1 ? 0 : c;
        size_t i = nchw ? (size_t)k * w * h + (size_t)y * w + x : ((size_t)y * w + x) * channels + k;
        double px = (t[i] * o.std + o.mean) / o.scale;
        map.data[((size_t)y * w + x) * 3 + c] = (uint8_t)std::lround(std::fmin(255.0, std::fmax(0.0, px)));
      }
  gst_buffer_unmap(buf, &map);
  std::string desc = "appsrc name=src ! videoconvert ! pngenc ! filesink location=\"" + path + "\"";
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(desc.c_str(), &err);
  if (!p) {
    std::fprintf(stderr, "preview pipeline: %s\n", err->message);
    g_error_free(err);
    gst_buffer_unref(buf);
    return false;
  }
  GstElement* src = gst_bin_get_by_name(GST_BIN(p), "src");
  std::string caps =
      "video/x-raw,format=RGB,width=" + std::to_string(w) + ",height=" + std::to_string(h) + ",framerate=1/1";
  GstCaps* c = gst_caps_from_string(caps.c_str());
  g_object_set(src, "caps", c, "format", GST_FORMAT_TIME, NULL);
  gst_caps_unref(c);
  gst_element_set_state(p, GST_STATE_PLAYING);
  gst_app_src_push_buffer(GST_APP_SRC(src), buf);
  gst_app_src_end_of_stream(GST_APP_SRC(src));
  GstMessage* msg = gst_bus_timed_pop_filtered(GST_ELEMENT_BUS(p), 10 * GST_SECOND,
                                               (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  bool ok = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
  if (msg) gst_message_unref(msg);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(p);
  return ok;
}

const char kUsage[] =
    "usage: tensor_consumer [--preview OUT.png] [--mean M] [--std S] [--scale K] \"PIPELINE ! appsink name=sink\"\n"
    "  Runs PIPELINE (gst-launch-1.0 syntax), whose appsink named sink receives tensors from\n"
    "  cudatensorize, and prints the first tensor's shape, transform and a box mapped back to the\n"
    "  frame. --preview writes the first tensor back as a PNG; --mean, --std and --scale undo\n"
    "  the normalisation for it (default: the element's defaults for the tensor's type).\n";

// The number after option `name`, or false with one line said.
bool number_arg(const char* name, const char* text, double* out) {
  char* end = nullptr;
  *out = std::strtod(text, &end);
  if (end != text && *end == '\0' && std::isfinite(*out)) return true;
  std::fprintf(stderr, "tensor_consumer: %s takes a number, not '%s'\n", name, text);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const bool takes_value = a == "--preview" || a == "--mean" || a == "--std" || a == "--scale";
    if (takes_value && i + 1 >= argc) {
      std::fprintf(stderr, "tensor_consumer: %s needs a value (--help: usage)\n", a.c_str());
      return 2;
    }
    if (a == "--preview")
      o.preview = argv[++i];
    else if (a == "--mean") {
      if (!number_arg("--mean", argv[++i], &o.mean)) return 2;
    } else if (a == "--std") {
      if (!number_arg("--std", argv[++i], &o.std)) return 2;
    } else if (a == "--scale") {
      if (!number_arg("--scale", argv[++i], &o.scale)) return 2;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "tensor_consumer: unknown option %s (--help: usage)\n", a.c_str());
      return 2;
    } else {
      o.pipeline += (o.pipeline.empty() ? "" : " ") + a;  // unquoted, as gst-launch-1.0 takes it
    }
  }
  if (o.pipeline.empty()) {
    std::fprintf(stderr, "tensor_consumer: no pipeline given (--help: usage)\n");
    return 2;
  }
  ExamplePipeline run("tensor_consumer");
  if (int rc = run.start(o.pipeline)) return rc;

  int frames = 0;
  while (GstSample* sample = run.next()) {
    if (frames == 0 && !example_is_tensor("tensor_consumer", sample)) {
      gst_sample_unref(sample);
      return 2;
    }
    GstBuffer* buf = gst_sample_get_buffer(sample);
    GstCaps* caps = gst_sample_get_caps(sample);
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    const char* dims = gst_structure_get_string(s, "dimensions");
    const char* type = gst_structure_get_string(s, "types");
    bool in_cuda = gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory");
    int d[4] = {0, 0, 0, 0};
    std::sscanf(dims ? dims : "", "%d:%d:%d:%d", &d[0], &d[1], &d[2], &d[3]);
    // W:H:C:B (nchw) or C:W:H:B (nhwc), C = 3 or 1 (gray)
    const bool nchw = d[2] == 3 || d[2] == 1;
    const int channels = nchw ? d[2] : d[0];
    int w = nchw ? d[0] : d[1], h = nchw ? d[1] : d[2];

    GstCudaPrepTransform t;
    bool have_meta = gst_cuda_prep_buffer_get_transform(buf, &t);
    if (frames == 0) {
      std::printf("tensor %s %s, %d channel%s, in %s memory (%zu bytes)\n", dims, type, channels,
                  channels == 1 ? " (gray)" : "s", in_cuda ? "CUDA" : "system", (size_t)gst_buffer_get_size(buf));
      // In CUDA memory the tensor is handed to the detector without a copy: map with
      // GST_MAP_READ | GST_MAP_CUDA and pass map.data (a CUdeviceptr, contiguous tensor) to
      // TensorRT's enqueue, keeping the mapping until the inference has consumed it. With
      // GStreamer 1.24+ the tensor may still be in flight on the stream its memory carries
      // (gst_cuda_memory_get_stream): enqueue on that stream (or make yours wait on it), or call
      // gst_cuda_memory_sync first. Before 1.24 it is complete when pushed.
      GstMapInfo dmap;
      if (in_cuda && gst_buffer_map(buf, &dmap, (GstMapFlags)(GST_MAP_READ | MAP_CUDA))) {
        std::printf("device pointer %p, %zu bytes, ready for TensorRT\n", (void*)dmap.data, (size_t)dmap.size);
        gst_buffer_unmap(buf, &dmap);
      }
      if (have_meta) {
        std::printf("frame %dx%d -> tensor %dx%d, active rect (%.1f, %.1f, %.1f x %.1f)\n", t.source_width,
                    t.source_height, t.tensor_width, t.tensor_height, t.active_rect[0], t.active_rect[1],
                    t.active_rect[2], t.active_rect[3]);
        double box[4] = {t.active_rect[0] + 10, t.active_rect[1] + 10, 100, 50}, out[4];
        gst_cuda_prep_transform_box_to_frame(&t, box, out);
        std::printf("tensor box (%.1f, %.1f, %.1f x %.1f) -> frame box (%.1f, %.1f, %.1f x %.1f)\n", box[0], box[1],
                    box[2], box[3], out[0], out[1], out[2], out[3]);
      } else {
        std::printf("no transform meta on the buffer\n");
      }
      if (!o.preview.empty()) {
        GstMapInfo map;  // plain READ: CUDA memory is downloaded for us
        if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
          std::vector<float> v((size_t)w * h * channels);
          for (size_t i = 0; i < v.size(); i++) v[i] = (float)tensor_value(map.data, type ? type : "float32", i);
          gst_buffer_unmap(buf, &map);
          Options shown = o;
          const bool integer = type && (std::strcmp(type, "uint8") == 0 || std::strcmp(type, "int8") == 0);
          if (std::isnan(shown.scale)) shown.scale = integer ? 1.0 : 1.0 / 255.0;
          if (std::isnan(shown.mean)) shown.mean = type && std::strcmp(type, "int8") == 0 ? 128.0 : 0.0;
          if (write_preview(o.preview, v, w, h, channels, nchw, shown))
            std::printf("preview written to %s\n", o.preview.c_str());
          else
            std::printf("could not write the preview\n");
        }
      }
    }
    frames++;
    gst_sample_unref(sample);
  }

  const int rc = run.finish();
  if (rc == 0) std::printf("%d tensors received\n", frames);
  return rc == 0 && frames > 0 ? 0 : 1;
}
