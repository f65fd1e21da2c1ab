#include "regress_html.h"

#include <glib/gstdio.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "regress_html_parts.h"
#include "regress_pipeline.h"

namespace regress {

namespace {

const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 24px 40px; color: #1d1d1f; max-width: 1180px; }
h1 { font-size: 22px; margin: 0; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
header.result { padding: 14px 18px; margin: 16px 0 8px; border-radius: 6px; color: #fff; }
header.pass { background: #1e7e34; } header.regression { background: #b02a37; } header.error { background: #8a4b08; }
header .line { font: 15px/1.4 ui-monospace, monospace; margin-top: 6px; white-space: pre-wrap; }
nav a { margin-right: 14px; }
pre { background: #f5f5f7; padding: 10px 12px; overflow-x: auto; font: 12.5px/1.4 ui-monospace, monospace; }
pre { white-space: pre-wrap; }
table { border-collapse: collapse; margin: 6px 0; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f7; } td.diff { background: #fff3cd; } table.slots tr.fail td { background: #ffd6d6; }
.note { color: #6b4e00; background: #fff8e1; padding: 6px 10px; border-left: 3px solid #e0a800; }
.error { color: #842029; }
svg.plot { display: block; max-width: 100%; height: auto; margin: 4px 0 10px; font: 11px sans-serif; }
svg.plot .area { fill: #fafafa; stroke: #ccc; } svg.plot .grid { stroke: #e4e4e4; }
svg.plot .ytick { text-anchor: end; fill: #555; } svg.plot .xtick { text-anchor: middle; fill: #555; }
svg.plot .xlabel { text-anchor: end; fill: #555; } svg.plot .ylabel { fill: #222; font-weight: bold; }
svg.plot .bandlabel { fill: #777; } svg.plot .tollabel { text-anchor: end; fill: #c1121f; }
svg.plot .line { fill: none; stroke: #1f5fbf; stroke-width: 1.3; }
svg.plot .pt { fill: #1f5fbf; } svg.plot .pt.fail { fill: #d00000; } svg.plot .pt.nonfinite { fill: #8c8c8c; }
svg.plot .refline { fill: none; stroke: #00a352; stroke-width: 1.3; stroke-dasharray: 4 3; }
svg.plot .refpt { fill: #00a352; }
svg.plot .tolerance { stroke: #c1121f; stroke-width: 1.3; stroke-dasharray: 6 4; }
svg.plot .failband { fill: #ffd6d6; }
.legend .key { display: inline-block; width: 22px; height: 0; vertical-align: middle; margin-right: 4px; }
.legend .key.line { border-top: 2px solid #1f5fbf; } .legend .key.tol { border-top: 2px dashed #c1121f; }
.legend .key.fail { width: 12px; height: 12px; background: #ffd6d6; border: 0; }
.row { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
figure { margin: 0; } figcaption { font-size: 12.5px; color: #333; max-width: 380px; margin-top: 4px; }
.pic { position: relative; overflow: hidden; background: #222; outline: 1px solid #888; }
.pic img { position: absolute; image-rendering: pixelated; max-width: none; }
.pic svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; overflow: visible; }
.pic .worst { fill: none; stroke: #00e5ff; stroke-width: 2px; vector-effect: non-scaling-stroke; }
.pic .mref { fill: none; stroke: #00d26a; stroke-width: 4px; vector-effect: non-scaling-stroke; }
.pic .mrun { fill: none; stroke: #ff2bd6; stroke-width: 1.5px; stroke-dasharray: 6 3; vector-effect: non-scaling-stroke; }
.kref { color: #00d26a; } .krun { color: #ff2bd6; }
.scale { display: inline-block; width: 140px; height: 10px; vertical-align: middle; border: 1px solid #999; }
table.matches th.ref { color: #007a3d; } table.matches th.run { color: #b0009a; } table.templates tr.fail td { background: #ffd6d6; }
)";

std::string esc(const std::string& s) { return markup_escape(s); }

// A row of the two sides; "-" for what a side does not record (check stopped before playing).
std::string row(const std::string& key, const std::string& a, const std::string& b) {
  const char* mark = (!a.empty() && !b.empty() && a != b) ? " class=\"diff\"" : "";
  return "<tr><th>" + esc(key) + "</th><td" + mark + ">" + esc(a.empty() ? "-" : a) + "</td><td" + mark + ">" +
         esc(b.empty() ? "-" : b) + "</td></tr>\n";
}

std::string cudaprep_version(const Manifest& m) {
  for (const auto& e : m.elements)
    if (e.plugin == "cudaprep") return e.plugin_version;
  return "";
}

std::string cudaprep_elements(const Manifest& m) {
  std::string s;
  for (const auto& e : m.elements)
    if (e.plugin == "cudaprep")
      s += (s.empty() ? "" : ", ") + e.name + " (" + e.factory + (e.device.empty() ? "" : " on " + e.device) + ")";
  return s;
}

// Devices, drivers and versions of both sides, side by side; differing cells marked.
std::string sides_html(const HtmlReportInput& in) {
  const Manifest& a = *in.ref;
  const Manifest& b = *in.run;
  std::string o = "<table class=\"sides\"><tr><th></th><th>" + esc(in.cmp->ref_label()) + "</th><th>" +
                  esc(in.cmp->run_label()) + "</th></tr>\n";
  o += row("from", in.ref_where, in.run_where);
  o += row("recorded", a.date, b.date);
  o += row("clip", a.clip, b.clip);
  auto device = [&](const Manifest& m) {
    return in.played || &m == in.ref ? m.device.kind + (m.device.name.empty() ? "" : ": " + m.device.name) : "";
  };
  o += row("device", device(a), device(b));
  o += row("driver", a.device.driver, b.device.driver);
  o += row("CUDA runtime", a.device.runtime, b.device.runtime);
  o += row("architecture", a.device.arch, b.device.arch);
  o += row("GStreamer", a.gstreamer_version, b.gstreamer_version);
  o += row("cudaprep plugin", cudaprep_version(a), cudaprep_version(b));
  o += row("cudaprep elements", cudaprep_elements(a), cudaprep_elements(b));
  o += row("tool", a.tool_version, b.tool_version);
  o += row("store", a.store, b.store);
  o += row("frames", std::to_string(a.frames), in.played ? std::to_string(b.frames) : "");
  o += "</table>\n";
  // every element with its plugin and version, for the decoders and converters around cudaprep
  auto plugin = [](const ElementInfo* e) {
    return e ? e->factory + " (" + e->plugin + " " + e->plugin_version + ")" : std::string();
  };
  std::set<std::string> names;
  for (const auto& e : a.elements) names.insert(e.name);
  for (const auto& e : b.elements) names.insert(e.name);
  o += "<details><summary>every element and its plugin version</summary><table class=\"sides\"><tr><th>element</th>"
       "<th>" +
       esc(in.cmp->ref_label()) + "</th><th>" + esc(in.cmp->run_label()) + "</th></tr>\n";
  for (const auto& n : names) o += row(n, plugin(a.element(n)), plugin(b.element(n)));
  return o + "</table></details>\n";
}

// Every setting that differs: caps of the sinks, element properties, elements on one side.
std::string settings_html(const HtmlReportInput& in) {
  const Manifest& a = *in.ref;
  const Manifest& b = *in.run;
  std::string rows;
  auto add = [&](const std::string& what, const std::string& setting, const std::string& va, const std::string& vb,
                 const std::string& remark) {
    rows += "<tr><td>" + esc(what) + "</td><td>" + esc(setting) + "</td><td class=\"diff\">" + esc(va) +
            "</td><td class=\"diff\">" + esc(vb) + "</td><td>" + esc(remark) + "</td></tr>\n";
  };
  for (const auto& s : a.sinks) {
    const SinkInfo* o = b.sink(s.name);
    if (o && !o->caps.empty() && s.caps != o->caps) add("sink '" + s.name + "'", "caps", s.caps, o->caps, "");
    if (o && !o->memory.empty() && s.memory != o->memory)
      add("sink '" + s.name + "'", "memory", s.memory, o->memory, "where it ran");
  }
  std::set<std::string> names;
  for (const auto& e : a.elements) names.insert(e.name);
  for (const auto& e : b.elements) names.insert(e.name);
  for (const auto& n : names) {
    const ElementInfo* ea = a.element(n);
    const ElementInfo* eb = b.element(n);
    if (!ea || !eb || ea->factory != eb->factory) {
      add(n, "element", ea ? ea->factory : "(absent)", eb ? eb->factory : "(absent)", "");
      continue;
    }
    std::map<std::string, std::string> pa(ea->properties.begin(), ea->properties.end());
    std::map<std::string, std::string> pb(eb->properties.begin(), eb->properties.end());
    std::set<std::string> props;
    for (auto& kv : pa) props.insert(kv.first);
    for (auto& kv : pb) props.insert(kv.first);
    for (const auto& p : props) {
      const std::string va = pa.count(p) ? pa[p] : "(default)", vb = pb.count(p) ? pb[p] : "(default)";
      if (va == vb) continue;
      const bool where = ea->plugin == "cudaprep" && (p == "backend" || p == "device-id");
      add(n + " (" + ea->factory + ")", p, va, vb, where ? "where it runs: not compared" : "");
    }
  }
  std::string o;
  if (rows.empty()) {
    o = "<p>The two sides were recorded with the same settings.</p>\n";
  } else {
    o = "<table class=\"settings\"><tr><th>what</th><th>setting</th><th>" + esc(in.cmp->ref_label()) + "</th><th>" +
        esc(in.cmp->run_label()) + "</th><th>note</th></tr>\n" + rows + "</table>\n";
  }
  if (normalize_description(a.pipeline) != normalize_description(b.pipeline))
    o += "<p>Pipelines:</p><pre>" + esc(in.cmp->ref_label()) + ": " + esc(a.pipeline) + "\n" +
         esc(in.cmp->run_label()) + ": " + esc(b.pipeline) + "</pre>\n";
  return o;
}

std::string list_html(const std::vector<std::string>& items, const char* cls) {
  if (items.empty()) return "";
  std::string o = std::string("<ul class=\"") + cls + "\">\n";
  for (const auto& i : items) o += "<li>" + esc(i) + "</li>\n";
  return o + "</ul>\n";
}

std::vector<std::string> dir_entries(const std::string& dir) {
  std::vector<std::string> entries;
  GDir* d = g_dir_open(dir.c_str(), 0, nullptr);
  for (const gchar* n = d ? g_dir_read_name(d) : nullptr; n; n = g_dir_read_name(d)) entries.push_back(n);
  if (d) g_dir_close(d);
  return entries;
}

// Creates DIR, or removes an earlier report's files from it (never anything else).
bool prepare_dir(const std::string& dir, std::string* error) {
  if (!html_dir_usable(dir, error)) return false;
  if (g_file_test(dir.c_str(), G_FILE_TEST_EXISTS)) {
    for (const auto& n : dir_entries(dir))
      if (n == "index.html" || (g_str_has_prefix(n.c_str(), "frame-") && g_str_has_suffix(n.c_str(), ".png")))
        g_remove((dir + "/" + n).c_str());
  } else if (g_mkdir_with_parents(dir.c_str(), 0755) != 0) {
    *error = "cannot create --html " + dir + ": " + g_strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

bool html_dir_usable(const std::string& dir, std::string* error) {
  if (dir.empty()) {
    *error = "--html needs a directory";
    return false;
  }
  if (g_file_test(dir.c_str(), G_FILE_TEST_EXISTS)) {
    if (!g_file_test(dir.c_str(), G_FILE_TEST_IS_DIR)) {
      *error = "--html " + dir + " exists and is not a directory";
      return false;
    }
    if (!dir_entries(dir).empty() && !g_file_test((dir + "/index.html").c_str(), G_FILE_TEST_EXISTS)) {
      *error = "--html " + dir + " is not empty and holds no earlier report (index.html): refusing to overwrite it";
      return false;
    }
    return true;
  }
  // it will be created: its nearest existing ancestor must be a directory
  gchar* parent = g_path_get_dirname(dir.c_str());
  while (!g_file_test(parent, G_FILE_TEST_EXISTS)) {
    gchar* up = g_path_get_dirname(parent);
    g_free(parent);
    parent = up;
  }
  const bool ok = g_file_test(parent, G_FILE_TEST_IS_DIR);
  if (!ok) *error = std::string("cannot create --html ") + dir + ": " + parent + " is not a directory";
  g_free(parent);
  return ok;
}

bool write_html_report(const std::string& dir, const HtmlReportInput& in, std::string* error) {
  error->clear();
  if (!prepare_dir(dir, error)) return false;
  const int code = in.cmp->exit_code();
  const char* state = code == 0 ? "pass" : code == 1 ? "regression" : "error";
  const std::string summary = in.cmp->render_summary();
  std::string result_line;
  const size_t at = summary.rfind("RESULT:");
  if (at != std::string::npos) result_line = summary.substr(at, summary.find('\n', at) - at);

  const std::vector<FrameResult> frames = in.cmp->frame_results();
  std::vector<std::pair<std::string, std::string>> nav = {{"#summary", "summary"}, {"#settings", "settings"}};
  std::string body;
  body += "<section id=\"summary\"><h2>Summary</h2>\n<table class=\"headers\">";
  for (const auto& h : in.cmp->headers())
    body += "<tr><th>" + esc(h.first) + "</th><td>" + esc(h.second) + "</td></tr>";
  body += "</table>\n<pre class=\"summary\">" + esc(summary) + "</pre>\n";
  body += list_html(in.cmp->errors(), "error");
  for (const auto& h : in.cmp->hints()) body += "<p>" + esc(h) + "</p>\n";
  body += list_html(in.cmp->notes(), "notes");
  body += "</section>\n<section id=\"settings\"><h2>Settings</h2>\n" + settings_html(in) + "</section>\n";
  if (!in.played) {
    body +=
        "<p class=\"note\">The clip was not played: the settings differ (see above), so there is nothing to plot "
        "or picture. --allow-setting-changes compares the frames anyway.</p>\n";
  } else {
    nav.emplace_back("#plots", "plots");
    body += "<section id=\"plots\"><h2>Over the frames</h2>\n" +
            plots_html(report_plots(frames, in), in.cmp->ref_label(), in.cmp->run_label()) + "</section>\n";
    const std::vector<FramePick> picks = pick_frames(frames);
    if (frames.empty())
      body += "<p class=\"note\">No frame was compared: no pictures.</p>\n";
    else if (picks.empty())
      body += "<p>No frame differs: no pictures.</p>\n";
    body += frame_sections_html(picks, frames, in, dir, &nav, error);
    if (!error->empty()) return false;
  }
  // what changed first, then where each side ran
  nav.emplace_back("#sides", "devices and versions");
  body += "<section id=\"sides\"><h2>Devices and versions</h2>\n" + sides_html(in) + "</section>\n";
  nav.emplace_back("#text", "text report");
  body +=
      "<section id=\"text\"><h2>Text report</h2>\n<details><summary>the full text report (as --report writes "
      "it)</summary><pre>" +
      esc(in.text_report) + "</pre></details></section>\n";

  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" "
      "content=\"width=device-width\">\n<title>cudaprep-regress " +
      esc(in.cmp->command()) + ": " + state + "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
  page += std::string("<header class=\"result ") + state + "\"><h1>cudaprep-regress " + esc(in.cmp->command()) +
          "</h1><div class=\"line\">" + esc(result_line) + "</div></header>\n<nav>";
  for (const auto& n : nav) page += "<a href=\"" + n.first + "\">" + esc(n.second) + "</a>";
  page += "</nav>\n" + body + "</body></html>\n";
  return write_file(dir + "/index.html", page.data(), page.size(), error);
}

}  // namespace regress
