// cudaprep-regress suite: results files, their merge, JUnit XML and the HTML index.
#include <glib.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <set>
#include <sstream>

#include "regress_json.h"
#include "regress_store.h"
#include "regress_suite.h"

namespace regress {

namespace {

const Verdict kVerdicts[] = {Verdict::kPass, Verdict::kRegression, Verdict::kSetupError, Verdict::kTimeout,
                             Verdict::kCrash};

std::string fmt_seconds(double s) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

// Text for XML and HTML: valid UTF-8, no control characters XML 1.0 forbids, markup escaped.
std::string xml_escape(const std::string& in) {
  gchar* valid = g_utf8_make_valid(in.c_str(), (gssize)in.size());
  std::string out;
  for (const char* p = valid; *p; p++) {
    const unsigned char c = (unsigned char)*p;
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += ' ';
        else
          out += (char)c;
    }
  }
  g_free(valid);
  return out;
}

// A link for HTML: each path component percent-escaped.
std::string url_path(const std::string& path) {
  gchar* e = g_uri_escape_string(path.c_str(), "/", FALSE);
  std::string s = e;
  g_free(e);
  return s;
}

Json clip_to_json(const ClipResult& c) {
  Json o = Json::object();
  o.set("name", Json::string(c.name));
  o.set("clip", Json::string(c.clip));
  o.set("golden", Json::string(c.golden));
  o.set("verdict", Json::string(verdict_name(c.verdict)));
  o.set("exit_status", Json::integer(c.exit_status));
  o.set("seconds", Json::number(c.seconds));
  o.set("attempts", Json::integer(c.attempts));
  o.set("flaky", Json::boolean(c.flaky));
  o.set("gpu", Json::integer(c.gpu));
  o.set("message", Json::string(c.message));
  o.set("log", Json::string(c.log));
  o.set("report", Json::string(c.report));
  o.set("html", Json::string(c.html));
  return o;
}

bool clip_from_json(const Json& o, ClipResult* c) {
  std::string v;
  int64_t exit_status = 0, attempts = 1, gpu = -1;
  const bool ok = o["name"].get_string(&c->name) && o["clip"].get_string(&c->clip) &&
                  o["golden"].get_string(&c->golden) && o["verdict"].get_string(&v) &&
                  verdict_from_name(v, &c->verdict) && o["exit_status"].get_int(&exit_status) &&
                  o["seconds"].get_double(&c->seconds) && o["attempts"].get_int(&attempts) &&
                  o["flaky"].get_bool(&c->flaky) && o["gpu"].get_int(&gpu) && o["message"].get_string(&c->message) &&
                  o["log"].get_string(&c->log) && o["report"].get_string(&c->report) && o["html"].get_string(&c->html);
  c->exit_status = (int)exit_status;
  c->attempts = (int)attempts;
  c->gpu = (int)gpu;
  return ok;
}

std::vector<const ClipResult*> by_severity(const SuiteResults& r) {
  std::vector<const ClipResult*> v;
  for (const auto& c : r.clips) v.push_back(&c);
  std::stable_sort(v.begin(), v.end(), [](const ClipResult* a, const ClipResult* b) {
    const int sa = verdict_severity(a->verdict), sb = verdict_severity(b->verdict);
    if (sa != sb) return sa > sb;
    if (a->flaky != b->flaky) return a->flaky;
    return a->name < b->name;
  });
  return v;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "pass";
    case Verdict::kRegression: return "regression";
    case Verdict::kSetupError: return "setup-error";
    case Verdict::kTimeout: return "timeout";
    case Verdict::kCrash: return "crash";
  }
  return "?";
}

bool verdict_from_name(const std::string& s, Verdict* v) {
  for (Verdict x : kVerdicts)
    if (s == verdict_name(x)) {
      *v = x;
      return true;
    }
  return false;
}

int verdict_severity(Verdict v) {
  switch (v) {
    case Verdict::kPass: return 0;
    case Verdict::kRegression: return 1;
    case Verdict::kSetupError: return 2;
    case Verdict::kTimeout: return 3;
    case Verdict::kCrash: return 4;
  }
  return 0;
}

int SuiteResults::exit_code() const {
  if (interrupted) return 2;
  int code = 0;
  for (const auto& c : clips) {
    if (c.verdict == Verdict::kRegression) code = std::max(code, 1);
    if (verdict_severity(c.verdict) >= 2) code = 2;
  }
  return code;
}

std::map<Verdict, int> SuiteResults::counts() const {
  std::map<Verdict, int> n;
  for (Verdict v : kVerdicts) n[v] = 0;
  for (const auto& c : clips) n[c.verdict]++;
  return n;
}

bool results_to_file(const SuiteResults& r, const std::string& path, std::string* error) {
  Json o = Json::object();
  o.set("tool", Json::string("cudaprep-regress suite"));
  o.set("suite", Json::string(r.suite));
  o.set("command", Json::string(r.command));
  o.set("parts", Json::integer(r.parts));
  Json parts = Json::array();
  for (uint32_t p : r.part_indices) parts.push(Json::integer(p));
  o.set("part_indices", parts);
  o.set("suite_clips", Json::integer(r.suite_clips));
  o.set("seconds", Json::number(r.seconds));
  o.set("exit_status", Json::integer(r.exit_code()));
  Json counts = Json::object();
  for (const auto& kv : r.counts()) counts.set(verdict_name(kv.first), Json::integer(kv.second));
  int flaky = 0;
  for (const auto& c : r.clips) flaky += c.flaky;
  counts.set("flaky", Json::integer(flaky));
  o.set("counts", counts);
  Json clips = Json::array();
  for (const auto& c : r.clips) clips.push(clip_to_json(c));
  o.set("clips", clips);
  const std::string text = o.dump(true) + "\n";
  return write_file(path, text.data(), text.size(), error);
}

bool results_from_file(const std::string& path, SuiteResults* r, std::string* error) {
  std::string text, err;
  Json o;
  if (!read_file(path, &text, &err) || !Json::parse(text, &o, &err)) {
    *error = path + ": " + err;
    return false;
  }
  int64_t parts = 0, suite_clips = 0;
  const Json& pi = o["part_indices"];
  const Json& clips = o["clips"];
  if (!o["suite"].get_string(&r->suite) || !o["command"].get_string(&r->command) || !o["parts"].get_int(&parts) ||
      parts < 1 || !o["suite_clips"].get_int(&suite_clips) || !o["seconds"].get_double(&r->seconds) || !pi.is_array() ||
      !clips.is_array()) {
    *error = path + ": not a results file of cudaprep-regress suite";
    return false;
  }
  r->parts = (uint32_t)parts;
  r->suite_clips = (uint32_t)suite_clips;
  r->part_indices.clear();
  for (size_t i = 0; i < pi.size(); i++) {
    int64_t p = 0;
    if (!pi.at(i).get_int(&p) || p < 0 || p >= parts) {
      *error = path + ": part_indices[" + std::to_string(i) + "] is not a part of " + std::to_string(parts);
      return false;
    }
    r->part_indices.push_back((uint32_t)p);
  }
  r->clips.clear();
  for (size_t i = 0; i < clips.size(); i++) {
    ClipResult c;
    if (!clip_from_json(clips.at(i), &c)) {
      *error = path + ": clips[" + std::to_string(i) + "] is malformed";
      return false;
    }
    r->clips.push_back(c);
  }
  return true;
}

bool merge_results(const std::vector<SuiteResults>& parts, SuiteResults* out, std::string* error) {
  if (parts.empty()) {
    *error = "no results to merge";
    return false;
  }
  *out = SuiteResults();
  out->suite = parts[0].suite;
  out->command = parts[0].command;
  out->parts = parts[0].parts;
  out->suite_clips = parts[0].suite_clips;
  std::set<uint32_t> seen_parts;
  std::set<std::string> seen_clips;
  for (size_t k = 0; k < parts.size(); k++) {
    const SuiteResults& p = parts[k];
    const std::string which = "results " + std::to_string(k + 1);
    if (p.suite != out->suite || p.command != out->command || p.parts != out->parts ||
        p.suite_clips != out->suite_clips) {
      *error = which + " (suite " + p.suite + ", " + p.command + ", " + std::to_string(p.parts) +
               " parts) are not of the same suite run as the first (suite " + out->suite + ", " + out->command + ", " +
               std::to_string(out->parts) + " parts)";
      return false;
    }
    for (uint32_t i : p.part_indices) {
      if (!seen_parts.insert(i).second) {
        *error = which + ": part " + std::to_string(i) + " is given twice";
        return false;
      }
      out->part_indices.push_back(i);
    }
    for (const auto& c : p.clips) {
      if (!seen_clips.insert(c.name).second) {
        *error = which + ": clip " + c.name + " is given twice";
        return false;
      }
      out->clips.push_back(c);
    }
    out->seconds = std::max(out->seconds, p.seconds);
  }
  std::sort(out->part_indices.begin(), out->part_indices.end());
  std::sort(out->clips.begin(), out->clips.end(),
            [](const ClipResult& a, const ClipResult& b) { return a.name < b.name; });
  return true;
}

std::string junit_xml(const SuiteResults& r, const std::string& link_base) {
  const auto n = r.counts();
  const int failures = n.at(Verdict::kRegression);
  const int errors = n.at(Verdict::kSetupError) + n.at(Verdict::kTimeout) + n.at(Verdict::kCrash);
  double total = 0;
  for (const auto& c : r.clips) total += c.seconds;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"cudaprep-regress\" tests=\"" << r.clips.size() << "\" failures=\"" << failures
    << "\" errors=\"" << errors << "\" skipped=\"0\" time=\"" << fmt_seconds(r.seconds) << "\">\n";
  o << "  <testsuite name=\"" << xml_escape(r.suite) << "\" tests=\"" << r.clips.size() << "\" failures=\"" << failures
    << "\" errors=\"" << errors << "\" skipped=\"0\" time=\"" << fmt_seconds(total) << "\">\n";
  for (const auto& c : r.clips) {
    o << "    <testcase classname=\"" << xml_escape(r.suite) << "\" name=\"" << xml_escape(c.name) << "\" time=\""
      << fmt_seconds(c.seconds) << "\"";
    std::string links;
    if (!c.html.empty()) links += "report: " + link_base + c.html + "\n";
    if (!c.report.empty()) links += "text report: " + link_base + c.report + "\n";
    if (!c.log.empty()) links += "log: " + link_base + c.log + "\n";
    std::string out_text = "clip: " + c.clip + "\ngolden: " + c.golden + "\n";
    if (c.attempts > 1) out_text += "attempts: " + std::to_string(c.attempts) + "\n";
    if (c.flaky) out_text += c.message + "\n";
    out_text += links;
    if (c.verdict == Verdict::kPass) {
      o << ">\n";
    } else {
      const char* tag = c.verdict == Verdict::kRegression ? "failure" : "error";
      const std::string msg = std::string(verdict_name(c.verdict)) + ": " + c.message;
      o << ">\n      <" << tag << " type=\"" << verdict_name(c.verdict) << "\" message=\"" << xml_escape(msg) << "\">"
        << xml_escape(msg + "\n" + links) << "</" << tag << ">\n";
    }
    o << "      <system-out>" << xml_escape(out_text) << "</system-out>\n";
    o << "    </testcase>\n";
  }
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

std::string html_index(const SuiteResults& r) {
  const auto n = r.counts();
  std::ostringstream o;
  const char* band = r.exit_code() == 0 ? "#2e7d32" : r.exit_code() == 1 ? "#c62828" : "#8d6e63";
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cudaprep-regress suite "
    << xml_escape(r.suite) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
       ".pass{background:#e8f5e9}.regression{background:#ffebee}.setup-error{background:#efebe9}"
       ".timeout{background:#fff3e0}.crash{background:#f3e5f5}.band{color:#fff;padding:.5em}\n"
    << "</style>\n</head>\n<body>\n";
  o << "<h1>Suite " << xml_escape(r.suite) << " (" << xml_escape(r.command) << ")</h1>\n";
  o << "<p class=\"band\" style=\"background:" << band << "\">" << r.clips.size() << " clips: ";
  const char* sep = "";
  for (const auto& kv : n) {
    o << sep << kv.second << " " << verdict_name(kv.first);
    sep = ", ";
  }
  int flaky = 0;
  for (const auto& c : r.clips) flaky += c.flaky;
  if (flaky) o << " (" << flaky << " flaky)";
  o << " (exit " << r.exit_code() << ")</p>\n";
  if (r.parts > 1) {
    o << "<p>parts ";
    for (size_t i = 0; i < r.part_indices.size(); i++) o << (i ? ", " : "") << r.part_indices[i];
    o << " of " << r.parts << " (" << r.suite_clips << " clips in the whole suite)</p>\n";
  }
  o << "<table id=\"clips\">\n<thead><tr><th>result</th><th>clip</th><th>time (s)</th><th>attempts</th>"
       "<th>GPU</th><th>why</th><th>reports</th></tr></thead>\n<tbody>\n";
  for (const ClipResult* c : by_severity(r)) {
    o << "<tr class=\"" << verdict_name(c->verdict) << "\" data-verdict=\"" << verdict_name(c->verdict)
      << "\" data-clip=\"" << xml_escape(c->name) << "\"><td>" << verdict_name(c->verdict)
      << (c->flaky ? " (flaky)" : "") << "</td><td>";
    if (!c->html.empty())
      o << "<a href=\"" << xml_escape(url_path(c->html)) << "\">" << xml_escape(c->name) << "</a>";
    else
      o << xml_escape(c->name);
    o << "</td><td>" << fmt_seconds(c->seconds) << "</td><td>" << c->attempts << "</td><td>"
      << (c->gpu >= 0 ? std::to_string(c->gpu) : "") << "</td><td>" << xml_escape(c->message) << "</td><td>";
    sep = "";
    for (const auto& [label, path] :
         {std::make_pair("HTML", c->html), std::make_pair("text", c->report), std::make_pair("log", c->log)}) {
      if (path.empty()) continue;
      o << sep << "<a href=\"" << xml_escape(url_path(path)) << "\">" << label << "</a>";
      sep = " ";
    }
    o << "</td></tr>\n";
  }
  o << "</tbody>\n</table>\n</body>\n</html>\n";
  return o.str();
}

std::string results_summary(const SuiteResults& r) {
  std::ostringstream o;
  const auto n = r.counts();
  int flaky = 0;
  for (const auto& c : r.clips) flaky += c.flaky;
  for (const ClipResult* c : by_severity(r)) {
    if (c->verdict == Verdict::kPass && !c->flaky) continue;
    o << "  " << verdict_name(c->verdict) << (c->flaky ? " (flaky)" : "") << "  " << c->name;
    if (!c->message.empty()) o << ": " << c->message;
    o << "\n";
  }
  o << "SUITE " << r.suite << " (" << r.command << "): " << r.clips.size() << " clips";
  if (r.parts > 1) o << " (" << r.part_indices.size() << " of " << r.parts << " parts)";
  o << ": " << n.at(Verdict::kPass) << " pass";
  if (flaky) o << " (" << flaky << " flaky)";
  o << ", " << n.at(Verdict::kRegression) << " regression, " << n.at(Verdict::kSetupError) << " setup error, "
    << n.at(Verdict::kTimeout) << " timeout, " << n.at(Verdict::kCrash) << " crash";
  char buf[64];
  g_snprintf(buf, sizeof buf, " in %.1f s", r.seconds);
  o << buf;
  if (r.interrupted) o << ", interrupted by " << (r.interrupted == SIGINT ? "SIGINT" : "SIGTERM");
  o << " (exit " << r.exit_code() << ")\n";
  return o.str();
}

}  // namespace regress
