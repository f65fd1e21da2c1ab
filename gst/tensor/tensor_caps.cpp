/* Building tensor caps, and the one explanation of a refusal (tensor_caps.h). */
#include "tensor_caps.h"

#include <cstring>

#include "dtypes.h"

GST_DEBUG_CATEGORY_STATIC(cudaprep_tensor_caps_debug);
#define GST_CAT_DEFAULT cudaprep_tensor_caps_debug

static void init_debug(void) {
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    GST_DEBUG_CATEGORY_INIT(cudaprep_tensor_caps_debug, "cudapreptensorcaps", 0, "cudaprep tensor caps");
    g_once_init_leave(&once, 1);
  }
}

const gchar *gst_cuda_prep_tensor_type_name(cudaprep::DType dtype) { return cudaprep::dtype_name(dtype); }

gboolean gst_cuda_prep_tensor_parse_type(const gchar *name, cudaprep::DType *dtype) {
  for (const cudaprep::DTypeInfo &t : cudaprep::kDTypes) {
    if (g_strcmp0(name, t.name) == 0) {
      *dtype = t.dtype;
      return TRUE;
    }
  }
  return FALSE;
}

gchar *gst_cuda_prep_tensor_dimensions(const TensorShape &s) {
  if (s.layout == cudaprep::Layout::NCHW) return g_strdup_printf("%d:%d:%d:%d", s.width, s.height, s.channels, s.batch);
  return g_strdup_printf("%d:%d:%d:%d", s.channels, s.width, s.height, s.batch);
}

static void set_framerate(GstStructure *s, const GValue *framerate) {
  if (framerate)
    gst_structure_set_value(s, "framerate", framerate);
  else
    gst_structure_set(s, "framerate", GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
}

/* @s in system memory, and in CUDA memory when @with_cuda (first when @cuda_first). Takes @s. */
static GstCaps *in_memories(GstStructure *s, gboolean with_cuda, gboolean cuda_first) {
  GstCaps *sys = gst_caps_new_full(gst_structure_copy(s), NULL);
  if (!with_cuda) {
    gst_structure_free(s);
    return sys;
  }
  GstCaps *dev = gst_caps_new_full(s, NULL);
  gst_caps_set_features(dev, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
  return cuda_first ? gst_caps_merge(dev, sys) : gst_caps_merge(sys, dev);
}

/* other/tensors, format=static, num_tensors=1, types={ every row of kDTypes }, framerate. */
static GstStructure *open_structure(const GValue *framerate) {
  GstStructure *s =
      gst_structure_new("other/tensors", "format", G_TYPE_STRING, "static", "num_tensors", G_TYPE_INT, 1, NULL);
  GValue types = G_VALUE_INIT;
  gst_value_list_init(&types, cudaprep::kDTypeCount);
  for (const cudaprep::DTypeInfo &t : cudaprep::kDTypes) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_static_string(&v, t.name);
    gst_value_list_append_and_take_value(&types, &v);
  }
  gst_structure_take_value(s, "types", &types);
  set_framerate(s, framerate);
  return s;
}

GstCaps *gst_cuda_prep_tensor_open_caps(const GValue *framerate, gboolean with_cuda, gboolean cuda_first) {
  return in_memories(open_structure(framerate), with_cuda, cuda_first);
}

/* ---- flexible tensors -------------------------------------------------------------------- */

GstCaps *gst_cuda_prep_tensor_flexible_caps(const GValue *framerate, gboolean with_cuda, gboolean cuda_first) {
  GstStructure *s = gst_structure_new("other/tensors", "format", G_TYPE_STRING, "flexible", NULL);
  set_framerate(s, framerate);
  return in_memories(s, with_cuda, cuda_first);
}

gboolean gst_cuda_prep_tensor_caps_flexible(GstCaps *caps) {
  if (!caps || gst_caps_get_size(caps) == 0) return FALSE;
  const GstStructure *s = gst_caps_get_structure(caps, 0);
  return gst_structure_has_name(s, "other/tensors") &&
         g_strcmp0(gst_structure_get_string(s, "format"), "flexible") == 0;
}

/* NNStreamer's values (tensor_typedef.h: tensor_type, tensor_format, media_type; the magic and
 * version 1.0 of GstTensorMetaInfo). */
static guint32 nns_type(cudaprep::DType dtype) {
  switch (dtype) {
    case cudaprep::DType::Float32: return 7;
    case cudaprep::DType::Float16: return 10;
    case cudaprep::DType::UInt8: return 5;
    case cudaprep::DType::Int8: return 4;
  }
  return 11; /* _NNS_END: invalid */
}

void gst_cuda_prep_tensor_flexible_header(const TensorShape &shape, guint8 header[kFlexibleHeaderBytes]) {
  constexpr guint32 kMagic = 0xfeedcced, kVersion1 = 0xDE000000u | (1u << 12), kFormatFlexible = 1, kMediaTensor = 4;
  const bool nchw = shape.layout == cudaprep::Layout::NCHW;
  const guint32 dims[4] = {(guint32)(nchw ? shape.width : shape.channels), (guint32)(nchw ? shape.height : shape.width),
                           (guint32)(nchw ? shape.channels : shape.height), (guint32)shape.batch};
  guint32 words[kFlexibleHeaderBytes / 4] = {};
  words[0] = kMagic;
  words[1] = kVersion1;
  words[2] = nns_type(shape.dtype);
  for (int i = 0; i < 4; i++) words[3 + i] = dims[i]; /* dimension[4..15] = 0: rank 4 */
  words[19] = kFormatFlexible;
  words[20] = kMediaTensor;
  memcpy(header, words, kFlexibleHeaderBytes); /* host order, as NNStreamer copies the structure */
}

GstCaps *gst_cuda_prep_tensor_template_caps(void) {
  /* Any other/tensors: a downstream that takes none the element makes (types=float64,
   * num_tensors=2) then links, and negotiation says why it fails (TensorRefusal) instead of a
   * launch line's bare "could not link". transform_caps / update_src_caps offer what is made. */
  return gst_caps_from_string("other/tensors(memory:CUDAMemory); other/tensors");
}

/* ---- refusals ---------------------------------------------------------------------------- */

static std::string factory_name(GstElement *element) {
  GstElementFactory *factory = gst_element_get_factory(element);
  return factory ? GST_OBJECT_NAME(factory) : GST_ELEMENT_NAME(element);
}

static std::string caps_text(GstCaps *caps) {
  gchar *t = caps ? gst_caps_to_string(caps) : g_strdup("(none)");
  std::string out = t;
  g_free(t);
  return out;
}

/* Whether a message @element posts now reaches a bus someone can watch: the outermost bin's. */
static gboolean reaches_a_bus(GstElement *element) {
  GstObject *top = GST_OBJECT(gst_object_ref(element));
  while (GstObject *parent = gst_object_get_parent(top)) {
    gst_object_unref(top);
    top = parent;
  }
  GstBus *bus = GST_IS_ELEMENT(top) ? gst_element_get_bus(GST_ELEMENT(top)) : NULL;
  gst_object_unref(top);
  if (!bus) return FALSE;
  gst_object_unref(bus);
  return TRUE;
}

void TensorRefusal::post(GstElement *element, const std::string &summary, const std::string &details) {
  init_debug();
  {
    std::lock_guard<std::mutex> hold(lock_);
    if (posted_ == summary) {
      GST_DEBUG_OBJECT(element, "refusal already posted: %s", summary.c_str());
      return;
    }
    /* Posted means delivered: where the outermost bin has no bus yet (negotiation before the
     * application watches) the message is dropped, and the next refusal posts it. */
    if (reaches_a_bus(element)) posted_ = summary;
  }
  GST_ELEMENT_ERROR(element, CORE, NEGOTIATION, ("%s", summary.c_str()), ("%s", details.c_str()));
}

void TensorRefusal::forget() {
  std::lock_guard<std::mutex> hold(lock_);
  posted_.clear();
}

void TensorRefusal::post_no_intersection(GstElement *element, GstCaps *produced, GstCaps *downstream) {
  const std::string name = factory_name(element);
  post(element,
       "Downstream does not accept the tensor " + name + " produces: it takes " + caps_text(downstream) +
           "; set width, height, layout, dtype, channels or batch-size to "
           "a tensor it takes",
       name + " produces " + caps_text(produced) +
           " (properties width, height, layout, dtype, "
           "channels, batch-size)");
}

void TensorRefusal::post_no_flexible(GstElement *element, const char *property, GstCaps *produced,
                                     GstCaps *downstream) {
  const std::string name = factory_name(element);
  post(element,
       std::string("Downstream does not accept a dynamic batch: ") + property + " makes " +
           "other/tensors,format=flexible (each tensor's batch is its slots, its shape in a header of each "
           "buffer) and downstream takes only " +
           caps_text(downstream) +
           "; link an element that takes flexible tensors, or set batch-mode=fixed for static caps",
       name + " produces " + caps_text(produced));
}

void TensorRefusal::post_contradiction(GstElement *element, const cudaprep::Status &why, GstCaps *downstream) {
  post(element,
       "Downstream does not accept the tensor " + factory_name(element) + " is set to produce: " + why.message(),
       "downstream caps " + caps_text(downstream));
}
