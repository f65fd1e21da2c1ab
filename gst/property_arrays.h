/* GstValueArray properties ("<1, 2, 3>") <-> std::vector, shared by the elements. */
#pragma once

#include <gst/gst.h>

#include <type_traits>
#include <vector>

template <typename T>
static inline std::vector<T>
gst_cuda_prep_vector_from_array (const GValue * value)
{
  static_assert (std::is_same<T, double>::value || std::is_same<T, int>::value, "double or int");
  std::vector<T> out;
  for (guint i = 0; i < gst_value_array_get_size (value); i++) {
    const GValue *item = gst_value_array_get_value (value, i);
    if constexpr (std::is_same<T, double>::value)
      out.push_back (g_value_get_double (item));
    else
      out.push_back (g_value_get_int (item));
  }
  return out;
}

template <typename T>
static inline void
gst_cuda_prep_vector_to_array (const std::vector<T> &in, GValue * value)
{
  for (T v : in) {
    GValue item = G_VALUE_INIT;
    g_value_init (&item, std::is_same<T, double>::value ? G_TYPE_DOUBLE : G_TYPE_INT);
    if constexpr (std::is_same<T, double>::value)
      g_value_set_double (&item, v);
    else
      g_value_set_int (&item, v);
    gst_value_array_append_and_take_value (value, &item);
  }
}

/* A GstValueArray property of ints, e.g. a rectangle "<x, y, width, height>". */
static inline GParamSpec *
gst_cuda_prep_param_spec_ints (const gchar * name, const gchar * nick, const gchar * blurb,
    GParamFlags flags)
{
  return gst_param_spec_array (name, nick, blurb, g_param_spec_int ("value", "Value", "One value",
          G_MININT, G_MAXINT, 0, (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), flags);
}

/* A GstValueArray property of doubles, e.g. "<0.485, 0.456, 0.406>". */
static inline GParamSpec *
gst_cuda_prep_param_spec_doubles (const gchar * name, const gchar * nick, const gchar * blurb,
    GParamFlags flags)
{
  return gst_param_spec_array (name, nick, blurb, g_param_spec_double ("value", "Value",
          "One value", -G_MAXDOUBLE, G_MAXDOUBLE, 0,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), flags);
}

/* A GstValueArray of rectangles, "<<x, y, width, height>, <x, y, width, height>>". */
static inline GParamSpec *
gst_cuda_prep_param_spec_rects (const gchar * name, const gchar * nick, const gchar * blurb,
    GParamFlags flags)
{
  return gst_param_spec_array (name, nick, blurb, gst_cuda_prep_param_spec_ints ("rect", "Rectangle",
          "<x, y, width, height>", (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), flags);
}

/* Each item of a rectangles array as a vector of its ints (checked later: 4 values each). */
static inline std::vector<std::vector<int>>
gst_cuda_prep_rects_from_array (const GValue * value)
{
  std::vector<std::vector<int>> out;
  for (guint i = 0; i < gst_value_array_get_size (value); i++) {
    const GValue *item = gst_value_array_get_value (value, i);
    out.push_back (GST_VALUE_HOLDS_ARRAY (item) ? gst_cuda_prep_vector_from_array<int> (item) :
        std::vector<int> ());
  }
  return out;
}

static inline void
gst_cuda_prep_rects_to_array (const std::vector<std::vector<int>> &in, GValue * value)
{
  for (const std::vector<int> &r : in) {
    GValue item = G_VALUE_INIT;
    gst_value_array_init (&item, (guint) r.size ());
    gst_cuda_prep_vector_to_array (r, &item);
    gst_value_array_append_and_take_value (value, &item);
  }
}
