// cudaprep-regress: a small ordered JSON value. Written by hand (stable key order, doubles in
// their shortest round-trip form, non-finite numbers as the strings "nan", "inf", "-inf"),
// read with json-glib.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace regress {

class Json {
 public:
  enum Type { Null, Bool, Int, Double, String, Array, Object };

  Json() = default;
  static Json null() { return Json(); }
  static Json boolean(bool b);
  static Json integer(int64_t v);
  static Json number(double v);  // non-finite -> string
  static Json string(const std::string& s);
  static Json array();
  static Json object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Null; }
  bool is_object() const { return type_ == Object; }
  bool is_array() const { return type_ == Array; }

  // Building (objects keep insertion order; set() replaces an existing key in place).
  Json& set(const std::string& key, Json v);
  Json& push(Json v);

  // Reading. Missing keys give a Null value.
  const Json& operator[](const std::string& key) const;
  const Json& at(size_t i) const { return items_[i]; }
  size_t size() const { return type_ == Object ? members_.size() : items_.size(); }
  bool has(const std::string& key) const;
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  // Typed getters: false when the type does not fit. as_double accepts ints and the strings
  // "nan", "inf", "-inf".
  bool get_bool(bool* out) const;
  bool get_int(int64_t* out) const;
  bool get_double(double* out) const;
  bool get_string(std::string* out) const;

  // pretty: 2-space indent, one member per line; otherwise compact (one line).
  std::string dump(bool pretty) const;

  // Parses with json-glib. Returns false and sets error on malformed text, and on arrays and
  // objects nested deeper than kMaxDepth (checked before json-glib sees the text: it recurses
  // once per level and a deep enough value overflows the stack).
  static bool parse(const std::string& text, Json* out, std::string* error);
  static constexpr int kMaxDepth = 64;

 private:
  void dump_to(std::string& out, bool pretty, int indent) const;

  Type type_ = Null;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// A JSON string literal. Text that is not valid UTF-8 (a file name in another encoding, say)
// has its invalid bytes replaced by U+FFFD, so that what is written always reads back.
std::string json_escape(const std::string& s);
// How deeply arrays and objects nest in JSON text (brackets inside strings do not count).
int json_nesting_depth(const std::string& text);

}  // namespace regress
