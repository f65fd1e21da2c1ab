/* What every cudaprep element shares whatever its GStreamer base class (GstBaseTransform for
 * cudatensorize and cudatemplatematch through GstCudaPrepBase, GstAggregator for
 * cudatensorbatch): the "device-id" and "backend" properties, the CudaPrepDevice opened in
 * start and closed in stop, GstContext sharing with the neighbours, and the rule for CUDA
 * memory caps where no GPU is usable. Owned by composition; the element forwards to it. */
#pragma once

#include <gst/gst.h>

#include <string>

#include "cudaprep_device.h"
#include "versioned_settings.h"

/* Property ids relative to the first_id an element installs them at. */
enum CudaPrepCoreProperty {
  CORE_PROP_DEVICE_ID,
  CORE_PROP_BACKEND,
  CORE_PROP_COUNT,
};

class CudaPrepElementCore {
 public:
  /* Installs "device-id" and "backend" (NULL / READY only) at first_id + CudaPrepCoreProperty. */
  static void install_properties(GObjectClass *klass, guint first_id);
  /* @prop relative to first_id; FALSE when it is none of these. A change past READY is
   * refused with a warning on the bus (it could not take effect). */
  gboolean set_property(GObject *object, guint prop, const GValue *value, GParamSpec *pspec);
  gboolean get_property(GObject *object, guint prop, GValue *value);

  /* start: opens the device from a snapshot of the properties (posts its own errors). */
  gboolean start(GstElement *element);
  /* stop: waits for the stream and closes the device. */
  void stop();

  /* GstElement::set_context, and context queries on any pad (TRUE: answered). */
  void set_context(GstElement *element, GstContext *context);
  gboolean answer_context_query(GstElement *element, GstQuery *query);

  /* Whether frames will go through the GPU: decided in start; before that, whether the backend
   * allows it and a device is present. For caps queries. */
  gboolean gpu_possible(GstElement *element) const;
  /* Caps in CUDA memory need a GPU: FALSE, with one error naming @what (a pad, "input"), when
   * @caps are and none is usable. */
  gboolean check_memory(GstElement *element, GstCaps *caps, const gchar *what) const;

  /* An ACCEPT_CAPS query on a video sink pad for a frame larger than the elements take
   * (kMaxSourceSide a side) would only be answered no, and the source would report a bare
   * not-negotiated: TRUE, with the query answered no and one error naming the limit. */
  gboolean refuse_oversized_frame(GstElement *element, GstQuery *query);

  CudaPrepDevice &device() { return device_; }

 private:
  VersionedSettings<CudaPrepDeviceSettings> settings_;
  CudaPrepDevice device_;
  std::string posted_size_error_; /* the frame size last refused, so it is posted once */
};

/* Whether structure @idx of @caps has the CUDA memory feature. */
gboolean gst_cuda_prep_caps_has_cuda_feature(GstCaps *caps, guint idx);

/* The one rule for caps in both memories (takes @caps, returns them reordered): with a GPU,
 * CUDA memory first when @cuda_first (the same memory as the other side: no copy), else system
 * memory first; without one, CUDA memory is still offered but last, so that peers that can do
 * both pick system memory and a CUDA-only peer gets check_memory()'s error rather than a bare
 * not-negotiated. */
GstCaps *gst_cuda_prep_caps_order_memory(GstCaps *caps, gboolean gpu, gboolean cuda_first);

/* For properties that take effect in start (GST_PARAM_MUTABLE_READY): FALSE, with a warning on
 * the bus, when the element is past READY and a change could not take effect. */
gboolean gst_cuda_prep_ready_property_changeable(GObject *object, GParamSpec *pspec);
