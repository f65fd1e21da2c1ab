/* GstValueArray properties ("<1, 2, 3>") <-> std::vector, shared by the elements. */
#pragma once

#include <gst/gst.h>

#include <type_traits>
#include <vector>

template <typename T>
static inline std::vector<T> gst_cuda_prep_vector_from_array(const GValue *value) {
  static_assert(std::is_same<T, double>::value || std::is_same<T, int>::value, "double or int");
  std::vector<T> out;
  for (guint i = 0; i < gst_value_array_get_size(value); i++) {
    const GValue *item = gst_value_array_get_value(value, i);
    if constexpr (std::is_same<T, double>::value)
      out.push_back(g_value_get_double(item));
    else
      out.push_back(g_value_get_int(item));
  }
  return out;
}

template <typename T>
static inline void gst_cuda_prep_vector_to_array(const std::vector<T> &in, GValue *value) {
  for (T v : in) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, std::is_same<T, double>::value ? G_TYPE_DOUBLE : G_TYPE_INT);
    if constexpr (std::is_same<T, double>::value)
      g_value_set_double(&item, v);
    else
      g_value_set_int(&item, v);
    gst_value_array_append_and_take_value(value, &item);
  }
}

/* The element spec of the number arrays below: one number, never an array.
 *
 * GStreamer's value parser (gstvalue.c, 1.22 to 1.26 at least) parses the items of an array
 * property with the array spec's element_spec. An item that is itself an array or a list
 * ("<<1, 2, 3, 4>>" where "<1, 2, 3, 4>" is meant, "<{1, 2}, 3>") is parsed with that element
 * spec taken as a GstParamSpecArray without a check: a GParamSpecInt there is read as one and
 * the process crashes. So the element spec is a GstParamSpecArray subtype whose value type is
 * the number's (gint or gdouble): a number item parses as that number (as with
 * g_param_spec_int / g_param_spec_double, and gst-inspect shows "of type gint"), and the items
 * of a nested array or list are parsed with its own element_spec, a GstParamSpecArray without
 * element spec, under which no number parses: the parser fails and gst_parse_launch reports
 * 'could not set property "roi" in element ...' instead of crashing. Every number is valid here:
 * the elements check the values and say what is wrong with them. */
static inline void gst_cuda_prep_param_number_set_default(GParamSpec *pspec, GValue *value) { g_value_reset(value); }

static inline gint gst_cuda_prep_param_number_values_cmp(GParamSpec *pspec, const GValue *a, const GValue *b) {
  if (G_VALUE_HOLDS_DOUBLE(a)) {
    const double x = g_value_get_double(a), y = g_value_get_double(b);
    return x < y ? -1 : x > y;
  }
  const gint x = g_value_get_int(a), y = g_value_get_int(b);
  return x < y ? -1 : x > y;
}

static inline void gst_cuda_prep_param_number_class_init(gpointer klass, gpointer value_type) {
  GParamSpecClass *k = G_PARAM_SPEC_CLASS(klass);
  k->value_type = (GType)GPOINTER_TO_SIZE(value_type);
  k->value_set_default = gst_cuda_prep_param_number_set_default;
  k->value_validate = NULL;
  k->values_cmp = gst_cuda_prep_param_number_values_cmp;
}

static inline GType gst_cuda_prep_param_number_register(const gchar *name, GType value_type) {
  /* already there when another library in the process built with this header registered it */
  const GType existing = g_type_from_name(name);
  if (existing) return existing;
  const GTypeInfo info = {sizeof(GParamSpecClass),
                          NULL,
                          NULL,
                          gst_cuda_prep_param_number_class_init,
                          NULL,
                          GSIZE_TO_POINTER(value_type),
                          sizeof(GstParamSpecArray),
                          0,
                          NULL,
                          NULL};
  return g_type_register_static(GST_TYPE_PARAM_ARRAY_LIST, name, &info, (GTypeFlags)0);
}

/* inline, not static: one static per library, so every file of the plugin gets the same type */
inline GType gst_cuda_prep_param_int_item_get_type(void) {
  static const GType type = gst_cuda_prep_param_number_register("GstCudaPrepParamIntItem", G_TYPE_INT);
  return type;
}

inline GType gst_cuda_prep_param_double_item_get_type(void) {
  static const GType type = gst_cuda_prep_param_number_register("GstCudaPrepParamDoubleItem", G_TYPE_DOUBLE);
  return type;
}

/* The element spec of a number array: @item_type is one of the two types above. */
static inline GParamSpec *gst_cuda_prep_param_spec_number_item(GType item_type) {
  const GParamFlags flags = (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS);
  GParamSpec *spec = (GParamSpec *)g_param_spec_internal(item_type, "value", "Value", "One value", flags);
  GST_PARAM_SPEC_ARRAY_LIST(spec)->element_spec =
      g_param_spec_ref_sink(gst_param_spec_array("nested", "Nested", "Not a number: refused", NULL, flags));
  return spec;
}

/* A GstValueArray property of ints, e.g. a rectangle "<x, y, width, height>". */
static inline GParamSpec *gst_cuda_prep_param_spec_ints(const gchar *name, const gchar *nick, const gchar *blurb,
                                                        GParamFlags flags) {
  return gst_param_spec_array(name, nick, blurb,
                              gst_cuda_prep_param_spec_number_item(gst_cuda_prep_param_int_item_get_type()), flags);
}

/* A GstValueArray property of doubles, e.g. "<0.485, 0.456, 0.406>"; "<1, 2, 3>" gives doubles
 * too. */
static inline GParamSpec *gst_cuda_prep_param_spec_doubles(const gchar *name, const gchar *nick, const gchar *blurb,
                                                           GParamFlags flags) {
  return gst_param_spec_array(name, nick, blurb,
                              gst_cuda_prep_param_spec_number_item(gst_cuda_prep_param_double_item_get_type()), flags);
}

/* A GstValueArray of rectangles, "<<x, y, width, height>, <x, y, width, height>>" (an item is
 * an ints array, whose own items refuse a nested array as above). */
static inline GParamSpec *gst_cuda_prep_param_spec_rects(const gchar *name, const gchar *nick, const gchar *blurb,
                                                         GParamFlags flags) {
  return gst_param_spec_array(name, nick, blurb,
                              gst_cuda_prep_param_spec_ints("rect", "Rectangle", "<x, y, width, height>",
                                                            (GParamFlags)(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)),
                              flags);
}

/* Each item of a rectangles array as a vector of its ints (checked later: 4 values each). */
static inline std::vector<std::vector<int>> gst_cuda_prep_rects_from_array(const GValue *value) {
  std::vector<std::vector<int>> out;
  for (guint i = 0; i < gst_value_array_get_size(value); i++) {
    const GValue *item = gst_value_array_get_value(value, i);
    out.push_back(GST_VALUE_HOLDS_ARRAY(item) ? gst_cuda_prep_vector_from_array<int>(item) : std::vector<int>());
  }
  return out;
}

static inline void gst_cuda_prep_rects_to_array(const std::vector<std::vector<int>> &in, GValue *value) {
  for (const std::vector<int> &r : in) {
    GValue item = G_VALUE_INIT;
    gst_value_array_init(&item, (guint)r.size());
    gst_cuda_prep_vector_to_array(r, &item);
    gst_value_array_append_and_take_value(value, &item);
  }
}
