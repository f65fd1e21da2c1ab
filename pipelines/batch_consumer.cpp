// Example consumer of batched tensors, the way a batched detector or classifier application
// would use them: runs a pipeline ending in `appsink name=sink`, takes each batch (B slots of
// W x H x 3), and for every slot reads from the meta where it comes from (cudatensorbatch: the
// camera, i.e. sink pad; cudatensorize with rois / roi-meta: the region's index and id), the
// frame's PTS, whether it is empty, and its transform, with which it maps a box found in slot i
// back into that frame.
//
//   batch_consumer "... cudatensorbatch name=b ! appsink name=sink  src0 ! b.sink_0  src1 ! b.sink_1 ..."
//   batch_consumer "... detector ! cudatensorize roi-meta=true batch-size=4 ! appsink name=sink"
#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "example_pipeline.h"
#include "gstcudaprepmeta.h"

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "usage: batch_consumer \"PIPELINE ! appsink name=sink\"\n"
        "  Runs PIPELINE (gst-launch-1.0 syntax), whose appsink named sink receives batched tensors\n"
        "  (cudatensorbatch, or cudatensorize with batch-size, rois or roi-meta), and prints for each\n"
        "  slot of the first batch where it comes from and a box mapped back to its frame.\n");
    return 0;
  }
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "batch_consumer: %s (--help: usage)\n", argc < 2 ? "no pipeline given" : "unknown option");
    return 2;
  }
  std::string desc = argv[1];  // unquoted, as gst-launch-1.0 takes it, or one argument
  for (int i = 2; i < argc; i++) desc += std::string(" ") + argv[i];
  ExamplePipeline run("batch_consumer");
  if (int rc = run.start(desc)) return rc;

  int batches = 0, filled = 0, empty = 0;
  while (GstSample* sample = run.next()) {
    if (batches == 0 && !example_is_tensor("batch_consumer", sample)) {
      gst_sample_unref(sample);
      return 2;
    }
    GstBuffer* buf = gst_sample_get_buffer(sample);
    const GstStructure* s = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    const char* dims = gst_structure_get_string(s, "dimensions");
    int d[4] = {0, 0, 0, 0};
    std::sscanf(dims ? dims : "", "%d:%d:%d:%d", &d[0], &d[1], &d[2], &d[3]);
    const int slots = d[3];
    if (batches == 0)
      std::printf("batch %s %s, %zu bytes\n", dims, gst_structure_get_string(s, "types"),
                  (size_t)gst_buffer_get_size(buf));
    for (int i = 0; i < slots; i++) {
      GstCudaPrepSlotInfo info;
      GstCudaPrepTransform t;
      if (!gst_cuda_prep_buffer_get_slot_info(buf, i, &info) || !gst_cuda_prep_buffer_get_slot_transform(buf, i, &t)) {
        std::fprintf(stderr, "batch %d: no meta for slot %d\n", batches, i);
        continue;
      }
      info.empty ? empty++ : filled++;
      if (batches != 0 || info.empty) continue;
      // A detection in slot i (tensor pixels), mapped back to that camera's frame.
      double box[4] = {t.active_rect[0] + 10, t.active_rect[1] + 10, 100, 50}, out[4];
      gst_cuda_prep_transform_box_to_frame(&t, box, out);
      std::string from = info.source_pad ? info.source_pad : "";
      if (from.empty() && info.region_index >= 0)
        from = "region " + std::to_string(info.region_index) + " (id " + std::to_string(info.region_id) + ")";
      std::printf("slot %d: %s pts %" GST_TIME_FORMAT
                  " frame %dx%d: tensor box (%.1f, %.1f, %.1f x %.1f) -> "
                  "frame box (%.1f, %.1f, %.1f x %.1f)\n",
                  i, from.c_str(), GST_TIME_ARGS(info.source_pts), t.source_width, t.source_height, box[0], box[1],
                  box[2], box[3], out[0], out[1], out[2], out[3]);
    }
    batches++;
    gst_sample_unref(sample);
  }

  const int rc = run.finish();
  if (rc == 0) std::printf("%d batches received, %d slots filled, %d empty\n", batches, filled, empty);
  return rc == 0 && batches > 0 ? 0 : 1;
}
