// Example consumer of batched tensors, the way a batched detector or classifier application
// would use them: runs a pipeline ending in `appsink name=sink`, takes each batch (B slots of
// W x H x 3), and for every slot reads from the meta where it comes from (cudatensorbatch: the
// camera, i.e. sink pad; cudatensorize or cudatensorbatch with rois / roi-meta: the region's
// index and id), the frame's PTS, whether it is empty, and its transform, with which it maps a
// box found in slot i back into that frame: a region's whole crop (the box a classifier's
// result is about), else a box near the slot's top-left corner.
//
// With --detector NAME it also reads a first stage's batches from `appsink name=NAME` (a
// detector's batch of whole camera frames) beside the classifier's crops in `sink`, and counts
// how many crops come from frames of the detector's batches (same camera, same PTS).
//
//   batch_consumer "... cudatensorbatch name=b ! appsink name=sink  src0 ! b.sink_0  src1 ! b.sink_1 ..."
//   batch_consumer "... detector ! cudatensorize roi-meta=true batch-size=4 ! appsink name=sink"
//   batch_consumer --all --detector det "cudatensorbatch name=d ! appsink name=det
//       cudatensorbatch name=c batch-size=4 roi-meta=true ! appsink name=sink  src0 ! tee ... ! c.sink_0 ..."
#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "example_pipeline.h"
#include "gstcudaprepmeta.h"

namespace {

// A camera frame: the sink pad and the PTS of the frame a slot was made from.
using FrameKey = std::pair<std::string, GstClockTime>;

// What one appsink received. A batch with more regions than slots comes as several tensors
// (the meta's tensor index of its count), all counted as that one batch.
struct Reader {
  const char* label;  // printed before its lines: "" for the sink, "detector " for the first stage
  int batches = 0, tensors = 0, filled = 0, empty = 0;
  int tensor_index = 0, tensor_count = 1;  // of the tensor being read
};

// Prints slot i of the tensor being read (`all`: every batch is printed, so each line names its
// batch) with where it comes from and a box mapped back into its frame.
void print_slot(const Reader& r, bool all, int i, const GstCudaPrepSlotInfo& info, const GstCudaPrepTransform& t) {
  double box[4], out[4];
  if (info.region_index >= 0) {
    for (int k = 0; k < 4; k++) box[k] = t.active_rect[k];
  } else {
    box[0] = t.active_rect[0] + 10;
    box[1] = t.active_rect[1] + 10;
    box[2] = 100;
    box[3] = 50;
  }
  gst_cuda_prep_transform_box_to_frame(&t, box, out);
  std::string from = info.source_pad ? info.source_pad : "";
  if (info.region_index >= 0)
    from += std::string(from.empty() ? "" : " ") + "region " + std::to_string(info.region_index) + " (id " +
            std::to_string(info.region_id) + ")";
  std::string batch = all ? "batch " + std::to_string(r.batches - 1) + " " : "";
  if (r.tensor_count > 1) batch += "tensor " + std::to_string(r.tensor_index) + " ";
  std::printf("%s%sslot %d: %s pts %" GST_TIME_FORMAT
              " frame %dx%d: tensor box (%.1f, %.1f, %.1f x %.1f) -> "
              "frame box (%.1f, %.1f, %.1f x %.1f)\n",
              r.label, batch.c_str(), i, from.c_str(), GST_TIME_ARGS(info.source_pts), t.source_width, t.source_height,
              box[0], box[1], box[2], box[3], out[0], out[1], out[2], out[3]);
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "usage: batch_consumer [--all] [--detector NAME] \"PIPELINE ! appsink name=sink\"\n"
        "  Runs PIPELINE (gst-launch-1.0 syntax), whose appsink named sink receives batched tensors\n"
        "  (cudatensorbatch, or cudatensorize with batch-size, rois or roi-meta), and prints for each\n"
        "  slot of the first batch where it comes from and a box mapped back to its frame (a region's\n"
        "  slot: its whole crop).\n"
        "  --all            print the slots of every batch\n"
        "  --detector NAME  also read the first stage's batches from 'appsink name=NAME' (its first\n"
        "                   batch printed, or every one with --all) and count the crops of sink that\n"
        "                   come from frames of its batches\n");
    return 0;
  }
  bool all = false;
  std::string detector;
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++) {
    if (std::strcmp(argv[a], "--all") == 0) {
      all = true;
    } else if (std::strcmp(argv[a], "--detector") == 0 && a + 1 < argc) {
      detector = argv[++a];
    } else {
      std::fprintf(stderr, "batch_consumer: %s '%s' (--help: usage)\n",
                   std::strcmp(argv[a], "--detector") == 0 ? "an appsink name must follow" : "unknown option", argv[a]);
      return 2;
    }
  }
  if (a >= argc) {
    std::fprintf(stderr, "batch_consumer: no pipeline given (--help: usage)\n");
    return 2;
  }
  std::string desc = argv[a];  // unquoted, as gst-launch-1.0 takes it, or one argument
  for (a++; a < argc; a++) desc += std::string(" ") + argv[a];
  ExamplePipeline run("batch_consumer");
  if (int rc = run.start(desc, detector.empty() ? std::vector<std::string>{} : std::vector<std::string>{detector}))
    return rc;

  Reader readers[2] = {{""}, {"detector "}};
  std::set<FrameKey> detector_frames;  // the camera frames in the detector's batches
  std::vector<FrameKey> crops;         // the camera frame of every region slot of sink
  size_t which = 0;
  while (GstSample* sample = run.next(&which)) {
    Reader& r = readers[which];
    if (r.tensors == 0 && !example_is_tensor("batch_consumer", sample)) {
      gst_sample_unref(sample);
      return 2;
    }
    GstBuffer* buf = gst_sample_get_buffer(sample);
    const GstStructure* s = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    const char* dims = gst_structure_get_string(s, "dimensions");
    int d[4] = {0, 0, 0, 0};
    std::sscanf(dims ? dims : "", "%d:%d:%d:%d", &d[0], &d[1], &d[2], &d[3]);
    const int slots = d[3];
    if (!gst_cuda_prep_buffer_get_tensor_count(buf, &r.tensor_index, &r.tensor_count)) r.tensor_index = 0;
    if (r.tensor_index == 0) r.batches++;
    if (r.tensors++ == 0)
      std::printf("%sbatch %s %s, %zu bytes\n", r.label, dims, gst_structure_get_string(s, "types"),
                  (size_t)gst_buffer_get_size(buf));
    for (int i = 0; i < slots; i++) {
      GstCudaPrepSlotInfo info;
      GstCudaPrepTransform t;
      if (!gst_cuda_prep_buffer_get_slot_info(buf, i, &info) || !gst_cuda_prep_buffer_get_slot_transform(buf, i, &t)) {
        std::fprintf(stderr, "%sbatch %d: no meta for slot %d\n", r.label, r.batches - 1, i);
        continue;
      }
      info.empty ? r.empty++ : r.filled++;
      if (info.empty) continue;
      const FrameKey frame{info.source_pad ? info.source_pad : "", info.source_pts};
      if (which == 1)
        detector_frames.insert(frame);
      else if (info.region_index >= 0)
        crops.push_back(frame);
      if (r.batches == 1 || all) print_slot(r, all, i, info, t);
    }
    gst_sample_unref(sample);
  }

  const int rc = run.finish();
  if (rc == 0) {
    for (const Reader& r : readers)
      if (r.label[0] == '\0' || !detector.empty())
        std::printf("%s%d batches received%s, %d slots filled, %d empty\n", r.label, r.batches,
                    r.tensors == r.batches ? "" : (" (" + std::to_string(r.tensors) + " tensors)").c_str(), r.filled,
                    r.empty);
    if (!detector.empty()) {
      size_t found = 0;
      for (const FrameKey& c : crops) found += detector_frames.count(c);
      std::printf("%zu of %zu crops from frames of the detector's batches\n", found, crops.size());
    }
  }
  return rc == 0 && readers[0].batches > 0 && (detector.empty() || readers[1].batches > 0) ? 0 : 1;
}
