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
