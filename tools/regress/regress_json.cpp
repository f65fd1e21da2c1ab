#include "regress_json.h"

#include <glib.h>
#include <json-glib/json-glib.h>

#include <algorithm>
#include <cmath>

#include "regress_math.h"

namespace regress {

Json Json::boolean(bool b) {
  Json j;
  j.type_ = Bool;
  j.b_ = b;
  return j;
}
Json Json::integer(int64_t v) {
  Json j;
  j.type_ = Int;
  j.i_ = v;
  return j;
}
Json Json::number(double v) {
  if (!std::isfinite(v)) return string(format_double(v));
  Json j;
  j.type_ = Double;
  j.d_ = v;
  return j;
}
Json Json::string(const std::string& s) {
  Json j;
  j.type_ = String;
  j.s_ = s;
  return j;
}
Json Json::array() {
  Json j;
  j.type_ = Array;
  return j;
}
Json Json::object() {
  Json j;
  j.type_ = Object;
  return j;
}

Json& Json::set(const std::string& key, Json v) {
  for (auto& m : members_)
    if (m.first == key) {
      m.second = std::move(v);
      return *this;
    }
  members_.emplace_back(key, std::move(v));
  return *this;
}

Json& Json::push(Json v) {
  items_.push_back(std::move(v));
  return *this;
}

const Json& Json::operator[](const std::string& key) const {
  static const Json kNull;
  for (const auto& m : members_)
    if (m.first == key) return m.second;
  return kNull;
}

bool Json::has(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return true;
  return false;
}

bool Json::get_bool(bool* out) const {
  if (type_ != Bool) return false;
  *out = b_;
  return true;
}
bool Json::get_int(int64_t* out) const {
  if (type_ == Int) {
    *out = i_;
    return true;
  }
  if (type_ == Double && d_ == std::floor(d_) && std::fabs(d_) < 9.0e15) {
    *out = (int64_t)d_;
    return true;
  }
  return false;
}
bool Json::get_double(double* out) const {
  switch (type_) {
    case Int: *out = (double)i_; return true;
    case Double: *out = d_; return true;
    case String:
      if (s_ == "nan")
        *out = NAN;
      else if (s_ == "inf")
        *out = INFINITY;
      else if (s_ == "-inf")
        *out = -INFINITY;
      else
        return false;
      return true;
    default: return false;
  }
}
bool Json::get_string(std::string* out) const {
  if (type_ != String) return false;
  *out = s_;
  return true;
}

std::string json_escape(const std::string& text) {
  std::string s = text;
  if (!g_utf8_validate(text.data(), (gssize)text.size(), nullptr)) {
    gchar* valid = g_utf8_make_valid(text.data(), (gssize)text.size());
    s = valid;
    g_free(valid);
  }
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          g_snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += (char)c;
        }
    }
  }
  return out + "\"";
}

void Json::dump_to(std::string& out, bool pretty, int indent) const {
  auto newline = [&](int level) {
    if (!pretty) return;
    out += '\n';
    out.append((size_t)level * 2, ' ');
  };
  switch (type_) {
    case Null: out += "null"; break;
    case Bool: out += b_ ? "true" : "false"; break;
    case Int: out += std::to_string(i_); break;
    case Double: out += format_double(d_); break;
    case String: out += json_escape(s_); break;
    case Array: {
      // arrays of scalars stay on one line even when pretty
      bool scalars = true;
      for (const Json& j : items_)
        if (j.type_ == Array || j.type_ == Object) scalars = false;
      out += '[';
      for (size_t i = 0; i < items_.size(); i++) {
        if (i) out += scalars && pretty ? ", " : ",";
        if (!scalars) newline(indent + 1);
        items_[i].dump_to(out, pretty, indent + 1);
      }
      if (!scalars && !items_.empty()) newline(indent);
      out += ']';
      break;
    }
    case Object: {
      out += '{';
      for (size_t i = 0; i < members_.size(); i++) {
        if (i) out += ',';
        newline(indent + 1);
        out += json_escape(members_[i].first);
        out += pretty ? ": " : ":";
        members_[i].second.dump_to(out, pretty, indent + 1);
      }
      if (!members_.empty()) newline(indent);
      out += '}';
      break;
    }
  }
}

std::string Json::dump(bool pretty) const {
  std::string out;
  dump_to(out, pretty, 0);
  return out;
}

static Json from_node(JsonNode* node) {
  switch (json_node_get_node_type(node)) {
    case JSON_NODE_NULL: return Json();
    case JSON_NODE_VALUE: {
      GType t = json_node_get_value_type(node);
      if (t == G_TYPE_BOOLEAN) return Json::boolean(json_node_get_boolean(node));
      if (t == G_TYPE_INT64) return Json::integer(json_node_get_int(node));
      if (t == G_TYPE_DOUBLE) return Json::number(json_node_get_double(node));
      if (t == G_TYPE_STRING) return Json::string(json_node_get_string(node));
      return Json();
    }
    case JSON_NODE_ARRAY: {
      Json a = Json::array();
      JsonArray* arr = json_node_get_array(node);
      for (guint i = 0; i < json_array_get_length(arr); i++) a.push(from_node(json_array_get_element(arr, i)));
      return a;
    }
    case JSON_NODE_OBJECT: {
      Json o = Json::object();
      JsonObject* obj = json_node_get_object(node);
      GList* members = json_object_get_members(obj);
      for (GList* l = members; l; l = l->next) {
        const char* name = (const char*)l->data;
        o.set(name, from_node(json_object_get_member(obj, name)));
      }
      g_list_free(members);
      return o;
    }
  }
  return Json();
}

int json_nesting_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{': deepest = std::max(deepest, ++depth); break;
      case ']':
      case '}': depth--; break;
      default: break;
    }
  }
  return deepest;
}

bool Json::parse(const std::string& text, Json* out, std::string* error) {
  if (json_nesting_depth(text) > kMaxDepth) {
    *error = "arrays or objects nested more than " + std::to_string(kMaxDepth) + " levels deep";
    return false;
  }
  JsonParser* parser = json_parser_new();
  GError* err = nullptr;
  if (!json_parser_load_from_data(parser, text.data(), (gssize)text.size(), &err)) {
    *error = err ? err->message : "malformed JSON";
    g_clear_error(&err);
    g_object_unref(parser);
    return false;
  }
  JsonNode* root = json_parser_get_root(parser);
  if (!root) {
    *error = "empty JSON document";
    g_object_unref(parser);
    return false;
  }
  *out = from_node(root);
  g_object_unref(parser);
  return true;
}

}  // namespace regress
