// cudaprep-regress: detections of any detector, as a detections sink (name starting with
// "detect") records them: per frame every GstVideoRegionOfInterestMeta (any roi-type, its
// parameter structures) and, where GStreamer's analytics library is there (1.24+), every
// GstAnalyticsODMtd with the classifications (GstAnalyticsClsMtd) related to it, and the
// buffer's other classifications. Their JSON form, and their comparison frame by frame: per
// source and class, boxes paired one to one by IoU, best first.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "regress_json.h"
#include "regress_math.h"

namespace regress {

struct ClassLevel {
  std::string label;
  double confidence = 0;
};

struct DetRec {
  std::string source = "roi";  // "roi" (GstVideoRegionOfInterestMeta) or "od" (GstAnalyticsODMtd)
  std::string label;           // the roi-type, or the ODMtd's object type
  double x = 0, y = 0, w = 0, h = 0;
  bool has_confidence = false;  // ODMtd: always; ROI meta: a "confidence" or "score" parameter field
  double confidence = 0;
  int64_t id = -1;                  // the meta's id (ROI meta id, analytics mtd id)
  std::vector<std::string> params;  // ROI meta parameter structures, serialised
  std::vector<ClassLevel> classes;  // classifications related to the detection (ODMtd)
};

// A classification of the whole buffer (a ClsMtd related to no detection).
struct ClsRec {
  int64_t id = -1;
  std::vector<ClassLevel> classes;
};

// One tensor of a GstTensorMeta (GStreamer 1.26) on the buffer.
struct MetaTensorRec {
  std::string id;     // the tensor's id
  std::string dtype;  // "float32", ...; a type the tool does not read is "other"
  std::vector<uint64_t> dims;
  uint64_t bytes = 0;
  std::string sha256;
  TensorStats stats;
  std::vector<uint8_t> data;  // the bytes, kept when at most kInlineTensorBytes
};
constexpr uint64_t kInlineTensorBytes = 65536;

struct DetectionsEntry {
  int64_t pts = -1, duration = -1;
  std::vector<DetRec> items;            // ROI metas first, then ODMtds, each in id order
  std::vector<ClsRec> classifications;  // in id order
  std::vector<MetaTensorRec> tensors;   // GstTensorMeta tensors, in id order
};

// The "detections" and "classifications" members of a frame's sink object.
void detections_to_json(const DetectionsEntry& e, Json* o);
bool detections_from_json(const Json& o, DetectionsEntry* e, std::string* error);

struct DetOptions {
  double iou = 0.5;            // pairs need at least this IoU (> 0, <= 1)
  double pos_tol = 0;          // the largest corner shift of a pair, px
  double conf_tol = 0;         // confidence (detections and their classes)
  uint64_t missed = 0;         // unpaired reference detections allowed per frame
  uint64_t extra = 0;          // unpaired detections of the other side allowed per frame
  TensorTolerance tensor_tol;  // GstTensorMeta tensors (--tensor-tol)
};

struct DetPair {
  size_t ref = 0, run = 0;
  double iou = 0;
  double shift = 0;  // the larger of the two corners' Euclidean shifts, px
  double dconf = 0;  // |confidence difference| (infinite when one side has none)
};

// Counts of one class (source and label) in one frame.
struct DetClassCount {
  size_t n_ref = 0, n_run = 0, missed = 0, extra = 0;
};

struct DetDiff {
  size_t n_ref = 0, n_run = 0;
  std::vector<DetPair> pairs;
  std::vector<size_t> missed, extra;  // indices into the reference's and the other side's lists
  double max_shift = 0, max_dconf = 0;
  double max_tensor_abs = 0;                     // GstTensorMeta tensors whose values were compared
  std::map<std::string, DetClassCount> classes;  // by class key (det_class_key)
  std::vector<std::string> failures;             // why the frame fails under the options
};

// "person", or "od:person" for an ODMtd's class: the key classes are counted and paired by.
std::string det_class_key(const DetRec& d);
// "person [10,20,50,80]" ("person [10,20,50,80] (ODMtd)" for an ODMtd)
std::string det_text(const DetRec& d);
double box_iou(const DetRec& a, const DetRec& b);
// The larger of the Euclidean shifts of the top-left and the bottom-right corner.
double corner_shift(const DetRec& a, const DetRec& b);

// Pairs the detections of a frame within each class (source and label): every (ref, run) pair
// with IoU >= opt.iou, best IoU first (ties by indices), one to one; the rest are missed (in the
// reference only) or extra. Then judges the pairs and counts against the options; the reasons
// name the frame's boxes ("box person [10,20,50,80] moved 3 px to [13,20,50,80] (tolerance 0)").
DetDiff diff_detections(const DetectionsEntry& ref, const DetectionsEntry& run, const DetOptions& opt,
                        const std::string& ref_label, const std::string& run_label);

}  // namespace regress
