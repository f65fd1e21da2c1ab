// .modelinfo files for the model-info tests (test_model_info.cpp, and test_model_info_upstream.cpp,
// which reads the same files with GStreamer 1.28's gst_analytics_modelinfo_load): written into a
// temporary folder, each with what our reader must make of it or the error it must give.
#pragma once

#include <glib.h>
#include <glib/gstdio.h>

#include <string>
#include <vector>

namespace test {

struct ModelInfoFile {
  const char* name;
  const char* text;
};

// Files that describe a usable input tensor.
inline const std::vector<ModelInfoFile>& good_model_infos() {
  static const std::vector<ModelInfoFile> files = {
      // A detector: NCHW float32, [0, 1] (the float defaults), an output tensor too.
      {"yolo.modelinfo",
       "[modelinfo]\nversion=1.0\ngroup-id=yolo-v8\n\n"
       "[images]\nid=yolo-v8-input\ntype=float32\ndims=1,3,32,48\ndir=input\nranges=0.0,1.0\n\n"
       "[output0]\nid=yolo-v8-output\ntype=float32\ndims=1,84,-1\ndir=output\n"},
      // NHWC uint8 written innermost first (col-major): 3,48,32,1 is 1,32,48,3; the pixel itself.
      {"mobilenet.modelinfo",
       "[modelinfo]\nversion=1.0\ngroup-id=mobilenet\n\n"
       "[input]\nid=mobilenet-input\ntype=uint8\ndims=3,48,32,1\ndims-order=col-major\ndir=input\n"
       "ranges=0,255\n"},
      // float16, any batch (-1), a range per channel.
      {"signed.modelinfo",
       "[modelinfo]\nversion=1.0\ngroup-id=signed\n\n"
       "[pixel_values]\nid=signed-input\ntype=float16\ndims=-1,3,40,40\ndir=input\nranges=-1,1;0,1;-2,2\n"},
      // Gray (one channel), no ranges (the dtype's default normalisation), width open (-1).
      {"gray.modelinfo",
       "[modelinfo]\nversion=1.0\n\n"
       "[x]\ntype=float32\ndims=1,1,24,-1\ndir=input\n"},
      // Two inputs: model-input picks one.
      {"two_inputs.modelinfo",
       "[modelinfo]\nversion=1.0\ngroup-id=two\n\n"
       "[image]\nid=img\ntype=float32\ndims=1,3,32,32\ndir=input\nranges=0,1\n\n"
       "[mask]\nid=msk\ntype=uint8\ndims=1,1,16,16\ndir=input\n"},
  };
  return files;
}

// Files that are refused, and the error after "model-info PATH: " (PATH: the file's path).
struct BadModelInfo {
  const char* name;
  const char* text;
  const char* error;
  bool upstream_refuses;  // gst_analytics_modelinfo_load refuses it too (1.28)
};

inline const std::vector<BadModelInfo>& bad_model_infos() {
  static const std::vector<BadModelInfo> files = {
      {"no_section.modelinfo", "[images]\ntype=float32\ndims=1,3,32,32\ndir=input\n",
       "no [modelinfo] section (expected [modelinfo] with version=1.x, then one section per tensor)", true},
      {"bad_version.modelinfo", "[modelinfo]\nversion=2.0\n\n[images]\ntype=float32\ndims=1,3,32,32\ndir=input\n",
       "[modelinfo] version: expected 1.x, got \"2.0\"", true},
      {"bad_dims.modelinfo", "[modelinfo]\nversion=1.0\n\n[images]\ntype=float32\ndims=1,3,abc,640\ndir=input\n",
       "[images] dims: expected 4 comma-separated integers (batch, channels, height, width as NCHW or batch, height, "
       "width, channels as NHWC; 3 without the batch), each -1 (any) or positive, got \"1,3,abc,640\"",
       false},
      {"no_channels.modelinfo", "[modelinfo]\nversion=1.0\n\n[images]\ntype=float32\ndims=1,4,32,32\ndir=input\n",
       "[images] dims: found no channel dimension of 1 (gray) or 3 (colour) next to the batch (NCHW) or last (NHWC) "
       "in \"1,4,32,32\"",
       false},
      {"unknown_type.modelinfo", "[modelinfo]\nversion=1.0\n\n[images]\ntype=int32\ndims=1,3,32,32\ndir=input\n",
       "[images] type: expected float32, float16, uint8 or int8, got \"int32\"", false},
      {"ranges_count.modelinfo",
       "[modelinfo]\nversion=1.0\n\n[images]\ntype=float32\ndims=1,3,32,32\ndir=input\nranges=0,1;0,1\n",
       "[images] ranges: expected min,max for every channel (1 pair, or 3 separated by ';', e.g. 0,1 or "
       "-1,1;-1,1;-1,1), got \"0,1;0,1\"",
       false},
      {"empty_range.modelinfo",
       "[modelinfo]\nversion=1.0\n\n[images]\ntype=float32\ndims=1,3,32,32\ndir=input\nranges=1,1\n",
       "[images] ranges: channel 0: min and max are both 1 (expected a range: min != max)", false},
      {"no_input.modelinfo", "[modelinfo]\nversion=1.0\n\n[output0]\ntype=float32\ndims=1,84,8400\ndir=output\n",
       "no tensor section with dir=input (expected one, [name] with dir=input)", false},
      {"no_dims.modelinfo", "[modelinfo]\nversion=1.0\n\n[images]\ntype=float32\ndir=input\n",
       "[images] dims: missing (expected 4 comma-separated integers (batch, channels, height, width as NCHW or batch, "
       "height, width, channels as NHWC; 3 without the batch), each -1 (any) or positive)",
       false},
  };
  return files;
}

// A temporary folder holding every file above; removed with the object.
class ModelInfoDir {
 public:
  ModelInfoDir() {
    gchar* d = g_dir_make_tmp("cudaprep-modelinfo-XXXXXX", nullptr);
    dir_ = d ? d : "";
    g_free(d);
    for (const auto& f : good_model_infos()) write(f.name, f.text);
    for (const auto& f : bad_model_infos()) write(f.name, f.text);
  }
  ~ModelInfoDir() {
    for (const auto& p : written_) g_remove(p.c_str());
    g_rmdir(dir_.c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Writes another file into the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    g_file_set_contents(p.c_str(), text.c_str(), (gssize)text.size(), nullptr);
    written_.push_back(p);
    return p;
  }

 private:
  std::string dir_;
  std::vector<std::string> written_;
};

}  // namespace test
