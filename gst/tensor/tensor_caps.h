/* The tensor caps of cudatensorize and cudatensorbatch, in one place: other/tensors in
 * NNStreamer's convention (innermost dimension first), how the elements build them, fixate them
 * from downstream's, read the shape back, and explain a downstream that takes none of them.
 *
 * The shape (width, height, layout, dtype, channels) lies between the element's properties and
 * downstream's caps: what the user set wins; what the user left unset is taken from downstream
 * (a model element whose sink caps say dimensions=3:640:640:1,types=float16), and from the
 * properties' defaults where downstream leaves it open too. The batch is never open: downstream
 * must agree with the element's. Both elements follow the same rules with the same messages. */
#pragma once

#include <gst/gst.h>

#include <mutex>
#include <string>

#include "status.h"
#include "tensorize.h"

struct TensorShape {
  int width = cudaprep::TensorOutputSpec().dst_width;
  int height = cudaprep::TensorOutputSpec().dst_height;
  cudaprep::Layout layout = cudaprep::TensorOutputSpec().layout;
  cudaprep::DType dtype = cudaprep::TensorOutputSpec().dtype;
  int channels = cudaprep::TensorOutputSpec().channels; /* 3 (colour) or 1 (gray) */
  int batch = 1;                                        /* never open: downstream must agree with it */
};

/* The properties' values, and which of them the user set (a property never set is open). */
struct TensorShapeSettings {
  TensorShape value;
  bool width_set = false, height_set = false, layout_set = false, dtype_set = false;
  bool channels_set = false;
  /* Where the batch comes from, for messages: a property the user set, its default, or (with
   * cudatensorbatch's batch-size=0) the number of sink pads. */
  bool batch_set = false;
  bool batch_from_pads = false;
};

/* ---- building ---------------------------------------------------------------------------- */

/* Pad template caps: any other/tensors, in CUDA memory then in system memory (what is made is
 * negotiated; a downstream that takes none of it gets TensorRefusal's error). */
GstCaps *gst_cuda_prep_tensor_template_caps(void);
/* other/tensors of any shape and every dtype, with @framerate (NULL: any): in CUDA memory and
 * in system memory, CUDA first when @cuda_first; system memory only when !@with_cuda. */
GstCaps *gst_cuda_prep_tensor_open_caps(const GValue *framerate, gboolean with_cuda, gboolean cuda_first);
/* A batch whose size changes from buffer to buffer (cudatensorbatch batch-mode=dynamic), in
 * NNStreamer's flexible tensors: the caps are other/tensors,format=flexible with a framerate and
 * no dimensions nor types, and each buffer's one memory is NNStreamer's GstTensorMetaInfo header
 * (version 1, kFlexibleHeaderBytes bytes: magic, version, element type, dimension[16] innermost
 * first and 0 past the rank, format=flexible, media type=tensor) followed by the tensor, as
 * tensor_filter and the other elements that take flexible tensors read it. In CUDA memory and
 * in system memory as gst_cuda_prep_tensor_open_caps. */
constexpr gsize kFlexibleHeaderBytes = 128;
GstCaps *gst_cuda_prep_tensor_flexible_caps(const GValue *framerate, gboolean with_cuda, gboolean cuda_first);
/* Whether the first structure of @caps is other/tensors,format=flexible. */
gboolean gst_cuda_prep_tensor_caps_flexible(GstCaps *caps);
/* The header of a flexible tensor of @shape (its batch: the slots it holds, at least 1). */
void gst_cuda_prep_tensor_flexible_header(const TensorShape &shape, guint8 header[kFlexibleHeaderBytes]);

/* "W:H:C:B" for NCHW, "C:W:H:B" for NHWC. */
gchar *gst_cuda_prep_tensor_dimensions(const TensorShape &shape);
/* The caps' name of a dtype (kDTypes), and back; FALSE for a name no row has. */
const gchar *gst_cuda_prep_tensor_type_name(cudaprep::DType dtype);
gboolean gst_cuda_prep_tensor_parse_type(const gchar *name, cudaprep::DType *dtype);

/* ---- negotiation ------------------------------------------------------------------------- */

/* Parses NNStreamer dimensions of a batch of image tensors of C = 3 or 1 (gray) channels:
 * "W:H:C[:B]" (nchw) or "C:W:H[:B]" (nhwc), B 1 when left out. Where several readings fit
 * ("3:64:3", "1:64:3"), the one with @preferred's channels and layout wins, then the one with its
 * channels, then its layout. */
gboolean gst_cuda_prep_tensor_parse_dimensions(const gchar *dims, const TensorShape &preferred, TensorShape *shape);

/* Fixates "dimensions" and "types" of @s (other/tensors, after intersecting with downstream):
 * a field downstream left open takes the settings' value; of a list, the first entry that agrees
 * with what the user set is taken. */
void gst_cuda_prep_tensor_fixate_shape(GstStructure *s, const TensorShapeSettings &settings);

/* The shape in negotiated tensor caps. An error names both sides when a property the user set
 * differs from what downstream takes, or says why the caps are no tensor the element makes;
 * @element: the factory name the messages give. */
cudaprep::Status gst_cuda_prep_tensor_shape_from_caps(GstCaps *caps, const TensorShapeSettings &settings,
                                                      const char *element, TensorShape *shape);

/* The one error of a downstream that takes no tensor the element makes, posted once until
 * forget() (new input caps, stop): GstBaseTransform and GstAggregator retry a failed
 * negotiation with every buffer. */
class TensorRefusal {
 public:
  /* Downstream (@downstream, the peer's caps) accepts nothing of @produced: says what the
   * element makes, which properties set it, and what downstream asked for. */
  void post_no_intersection(GstElement *element, GstCaps *produced, GstCaps *downstream);
  /* Downstream's fixed caps contradict a property or are no tensor the element makes
   * (@why: gst_cuda_prep_tensor_shape_from_caps's error). */
  void post_contradiction(GstElement *element, const cudaprep::Status &why, GstCaps *downstream);
  /* A dynamic batch was asked for (@property: the setting that asks) and downstream takes no
   * flexible tensor (@produced) but only static ones. */
  void post_no_flexible(GstElement *element, const char *property, GstCaps *produced, GstCaps *downstream);
  void forget();

 private:
  void post(GstElement *element, const std::string &summary, const std::string &details);
  std::mutex lock_;  // caps queries (any thread) and the streaming thread both post
  std::string posted_;
};
