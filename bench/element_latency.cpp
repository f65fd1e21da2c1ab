// element_latency: per-buffer latency inside named elements of a pipeline, with pad probes
// instead of GStreamer's latency tracer (which hangs every pipeline in the 1.26.2 bundle).
//
//   element_latency [--timeout=S] [--max-buffers=N] --element=NAME [--element=NAME...] PIPELINE...
//
// PIPELINE: as gst-launch-1.0 takes it (its words, as the shell split them), or one argument
// holding the whole description. NAME is an element's name, or a prefix ending in '*' that
// pools every element whose name starts with it (tz* = tz0, tz1, ...). Per buffer, as the tracer defines it: from the
// buffer entering the element's sink pad to the element pushing out of its src pad.
//
// Buffers are paired by their order, not by PTS: the elements timed here are 1-in/1-out per
// stream and never reorder, whereas PTS can be missing or repeat (a batch carries one PTS for
// several inputs, a pipeline may not timestamp at all). The k-th output of an element with
// several sink pads (an aggregator such as cudatensorbatch) is made of the k-th buffer of each
// pad, and its latency is measured from the last of them to arrive. An element whose pads saw
// different buffer counts (one dropped or added buffers) is an error: order would pair them wrong.
//
// The streaming thread's CPU time over the same span (CLOCK_THREAD_CPUTIME_ID at both probes):
// what the element cost the thread that ran it, sleeps excluded and free of the noise of the
// whole process's rusage. Only where a buffer's arrival and push ran on one thread (a transform;
// not an aggregator, whose output is pushed from its own thread): else it reads nan.
//
// Prints per NAME `NAME n=<buffers> median_us=<..> p90_us=<..> cpu_median_us=<..> cpu_p90_us=<..>`,
// and `NAME first_us=<..>` (the slowest first buffer of its elements: what the first frame pays
// once), then `rusage user_s=.. sys_s=..` (the whole process) and `wall_s=.. preroll_s=.. init_s=..
// teardown_s=..` (PLAYING to EOS, and to its first ASYNC_DONE; from main() to PLAYING: GStreamer's
// and the plugins' loading, the pipeline's parsing; the state change to NULL after EOS).
//
// --span-from=NAME --span-to=NAME (patterns as --element; --element is then optional): the
// pipeline's steady-state throughput, without what a process pays once (plugin loading, the
// decoders' set-up, the first frames' allocations, teardown): from the moment every src pad of
// the FROM elements (the decoders) has pushed its --span-warmup'th buffer (default 30) to the
// last buffer into any TO element (the sinks). Prints `span_s=<..> span_buffers=<buffers the
// FROM elements pushed after their warm-up>`.
#include <gst/gst.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// Arrival or push times of one pad (ns, monotonic), with the thread and its CPU time then;
// preallocated: the probe only stores and counts.
struct PadTimes {
  std::vector<GstClockTime> times_ns;
  std::vector<double> thread_cpu_us;
  std::vector<long> thread_ids;
  size_t count = 0;
  bool overflowed = false;
  void reserve(size_t capacity) {
    times_ns.resize(capacity);
    thread_cpu_us.resize(capacity);
    thread_ids.resize(capacity);
  }
};

struct TimedElement {
  std::string name;
  std::vector<std::unique_ptr<PadTimes>> sink_pads;
  std::vector<std::unique_ptr<PadTimes>> src_pads;
};

struct Options {
  double timeout_s = 600;
  size_t max_buffers = 1 << 18;              // 2 MB a pad; 2.4 h of 30 fps
  std::vector<const char *> pipeline_words;  // null-terminated for gst_parse_launchv
  std::vector<std::string> names;
  std::string span_from, span_to;
  guint64 span_warmup = 30;
};

GstPadProbeReturn record_time(GstPad *, GstPadProbeInfo *, gpointer user_data) {
  auto *pad = static_cast<PadTimes *>(user_data);
  if (pad->count < pad->times_ns.size()) {
    timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    pad->thread_cpu_us[pad->count] = cpu.tv_sec * 1e6 + cpu.tv_nsec / 1e3;
    pad->thread_ids[pad->count] = syscall(SYS_gettid);
    pad->times_ns[pad->count++] = gst_util_get_timestamp();
  } else {
    pad->overflowed = true;
  }
  return GST_PAD_PROBE_OK;
}

void fail(const std::string &message) {
  std::fprintf(stderr, "element_latency: %s\n", message.c_str());
  std::exit(1);
}

Options parse_options(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char *end = nullptr;
    if (g_str_has_prefix(a, "--timeout=")) {
      o.timeout_s = std::strtod(a + 10, &end);
      if (*end || !(o.timeout_s > 0)) fail(std::string("bad ") + a + ": seconds > 0 expected");
    } else if (g_str_has_prefix(a, "--max-buffers=")) {
      o.max_buffers = std::strtoull(a + 14, &end, 10);
      if (*end || o.max_buffers == 0) fail(std::string("bad ") + a + ": a count > 0 expected");
    } else if (g_str_has_prefix(a, "--element=") && a[10]) {
      o.names.emplace_back(a + 10);
    } else if (g_str_has_prefix(a, "--span-from=") && a[12]) {
      o.span_from = a + 12;
    } else if (g_str_has_prefix(a, "--span-to=") && a[10]) {
      o.span_to = a + 10;
    } else if (g_str_has_prefix(a, "--span-warmup=")) {
      o.span_warmup = std::strtoull(a + 14, &end, 10);
      if (*end || o.span_warmup == 0) fail(std::string("bad ") + a + ": a count > 0 expected");
    } else if (g_str_has_prefix(a, "--") && o.pipeline_words.empty()) {
      fail(std::string("unknown option ") + a);
    } else {
      o.pipeline_words.push_back(a);
    }
  }
  if (o.span_from.empty() != o.span_to.empty()) fail("--span-from and --span-to go together");
  if (o.pipeline_words.empty() || (o.names.empty() && o.span_from.empty()))
    fail(
        "usage: element_latency [--timeout=S] [--max-buffers=N] [--span-from=NAME --span-to=NAME] "
        "--element=NAME [--element=NAME...] PIPELINE...");
  o.pipeline_words.push_back(nullptr);
  return o;
}

// A span's start: per FROM pad, its buffer count and the time of its warm-up'th buffer; and
// its end: the last buffer into any TO pad (atomic: the pads' streaming threads write them).
struct SpanStart {
  guint64 warmup = 0, buffers = 0;
  GstClockTime warm_at = GST_CLOCK_TIME_NONE;
};

GstPadProbeReturn record_span_start(GstPad *, GstPadProbeInfo *, gpointer user_data) {
  auto *start = static_cast<SpanStart *>(user_data);
  if (++start->buffers == start->warmup) start->warm_at = gst_util_get_timestamp();
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn record_span_end(GstPad *, GstPadProbeInfo *, gpointer user_data) {
  auto *last = static_cast<std::atomic<GstClockTime> *>(user_data);
  GstClockTime now = gst_util_get_timestamp(), seen = last->load();
  while (now > seen && !last->compare_exchange_weak(seen, now)) {
  }
  return GST_PAD_PROBE_OK;
}

// Calls @add for every pad of @element in @direction.
template <typename Add>
void for_each_pad(GstElement *element, GstPadDirection direction, Add &&add) {
  GstIterator *it =
      direction == GST_PAD_SINK ? gst_element_iterate_sink_pads(element) : gst_element_iterate_src_pads(element);
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    add(GST_PAD(g_value_get_object(&item)));
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
}

// Adds a probe to every pad of one direction, each with its own preallocated times.
void probe_pads(GstElement *element, GstPadDirection direction, size_t capacity,
                std::vector<std::unique_ptr<PadTimes>> &out) {
  for_each_pad(element, direction, [&](GstPad *pad) {
    out.push_back(std::make_unique<PadTimes>());
    out.back()->reserve(capacity);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, record_time, out.back().get(), nullptr);
  });
}

std::vector<GstElement *> find_elements(GstBin *bin, const std::string &name) {
  std::vector<GstElement *> found;
  bool is_prefix = !name.empty() && name.back() == '*';
  std::string prefix = is_prefix ? name.substr(0, name.size() - 1) : name;
  GstIterator *it = gst_bin_iterate_recurse(bin);
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    auto *element = GST_ELEMENT(g_value_get_object(&item));
    gchar *element_name = gst_element_get_name(element);
    if (is_prefix ? g_str_has_prefix(element_name, prefix.c_str()) : prefix == element_name) found.push_back(element);
    g_free(element_name);
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

// Latencies of one element's buffers (us), appended to `out`, and the thread CPU of each to
// `cpu` (us); *cpu_known turns false where a buffer left on another thread than it came on.
// Fails where order cannot pair them.
void collect_latencies(const TimedElement &e, std::vector<double> &out, std::vector<double> &cpu, bool *cpu_known,
                       double *first_us) {
  const std::vector<std::unique_ptr<PadTimes>> *sides[] = {&e.sink_pads, &e.src_pads};
  for (const auto *side : sides)
    for (const auto &pad : *side)
      if (pad->overflowed)
        fail(e.name + ": more buffers than --max-buffers (" + std::to_string(pad->times_ns.size()) + ")");
  if (e.src_pads.size() != 1)
    fail(e.name + ": has " + std::to_string(e.src_pads.size()) + " src pads; only one is supported");
  const PadTimes &pushed = *e.src_pads[0];
  for (const auto &in : e.sink_pads)
    if (in->count != pushed.count)
      fail(e.name + ": " + std::to_string(in->count) + " buffers on a sink pad but " + std::to_string(pushed.count) +
           " pushed: it dropped or added buffers, so order cannot pair them");
  for (size_t k = 0; k < pushed.count; k++) {
    GstClockTime last_arrival = 0;
    const PadTimes *last = nullptr;
    for (const auto &in : e.sink_pads)
      if (!last || in->times_ns[k] >= last_arrival) {
        last_arrival = in->times_ns[k];
        last = in.get();
      }
    out.push_back(double(GstClockTimeDiff(pushed.times_ns[k] - last_arrival)) / 1000.0);
    if (k == 0) *first_us = std::max(*first_us, out.back());
    if (e.sink_pads.size() == 1 && last->thread_ids[k] == pushed.thread_ids[k])
      cpu.push_back(pushed.thread_cpu_us[k] - last->thread_cpu_us[k]);
    else
      *cpu_known = false;
  }
}

// statistics.median and pipeline_bench.py's p90, so both latency paths report alike.
double median(const std::vector<double> &sorted) {
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double p90(const std::vector<double> &sorted) {
  return sorted[std::min(sorted.size() - 1, size_t(0.9 * sorted.size()))];
}

// Runs to EOS; fails on an ERROR message or when no EOS comes in time. Returns seconds, and in
// @preroll_s those until the pipeline prerolled (its first ASYNC_DONE: every sink has a buffer).
double run_to_eos(GstElement *pipeline, double timeout_s, double *preroll_s) {
  GstClockTime start = gst_util_get_timestamp();
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    fail("the pipeline could not be set to PLAYING (see the GStreamer warnings above)");
  GstBus *bus = gst_element_get_bus(pipeline);
  const GstClockTime deadline = start + GstClockTime(timeout_s * GST_SECOND);
  GstMessage *msg = nullptr;
  *preroll_s = -1;
  for (;;) {
    const GstClockTime now = gst_util_get_timestamp();
    msg = gst_bus_timed_pop_filtered(bus, now < deadline ? deadline - now : 0,
                                     GstMessageType(GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ASYNC_DONE));
    if (!msg || GST_MESSAGE_TYPE(msg) != GST_MESSAGE_ASYNC_DONE) break;
    if (*preroll_s < 0) *preroll_s = double(gst_util_get_timestamp() - start) / GST_SECOND;
    gst_message_unref(msg);
  }
  double wall_s = double(gst_util_get_timestamp() - start) / GST_SECOND;
  gst_object_unref(bus);
  if (!msg) {
    std::fprintf(stderr, "element_latency: no EOS within %g s: the pipeline hangs (see --timeout)\n", timeout_s);
    // A hung streaming thread would block the state change to NULL as well: leave at once.
    std::_Exit(124);
  }
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError *error = nullptr;
    gchar *debug = nullptr;
    gst_message_parse_error(msg, &error, &debug);
    std::string text = std::string("ERROR from ") + GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)) + ": " + error->message +
                       (debug ? std::string(" (") + debug + ")" : "");
    fail(text);
  }
  gst_message_unref(msg);
  return wall_s;
}

}  // namespace

int main(int argc, char **argv) {
  const GstClockTime started = g_get_monotonic_time() * GST_USECOND;
  gst_init(&argc, &argv);
  Options o = parse_options(argc, argv);

  GError *error = nullptr;
  // One argument is the description itself; several are gst-launch's words (launchv escapes
  // the spaces inside each word, so a whole description in one word would not parse).
  GstElement *pipeline = o.pipeline_words.size() == 2 ? gst_parse_launch(o.pipeline_words[0], &error)
                                                      : gst_parse_launchv(o.pipeline_words.data(), &error);
  if (error) fail(std::string("cannot build the pipeline: ") + error->message);
  if (!GST_IS_BIN(pipeline)) fail("the description is a single element, not a pipeline");

  // One group per NAME; each element in it keeps its own pads' times.
  std::vector<std::vector<TimedElement>> groups(o.names.size());
  for (size_t g = 0; g < o.names.size(); g++) {
    for (GstElement *element : find_elements(GST_BIN(pipeline), o.names[g])) {
      groups[g].emplace_back();
      TimedElement &e = groups[g].back();
      gchar *name = gst_element_get_name(element);
      e.name = name;
      g_free(name);
      probe_pads(element, GST_PAD_SINK, o.max_buffers, e.sink_pads);
      probe_pads(element, GST_PAD_SRC, o.max_buffers, e.src_pads);
      if (e.sink_pads.empty()) fail(e.name + ": has no sink pad to time buffers from");
    }
    if (groups[g].empty()) fail("no element named " + o.names[g] + " in the pipeline");
  }

  std::vector<std::unique_ptr<SpanStart>> span_starts;
  std::atomic<GstClockTime> span_end{0};
  if (!o.span_from.empty()) {
    std::vector<GstElement *> from = find_elements(GST_BIN(pipeline), o.span_from);
    std::vector<GstElement *> to = find_elements(GST_BIN(pipeline), o.span_to);
    if (from.empty() || to.empty()) fail("no element named " + (from.empty() ? o.span_from : o.span_to));
    for (GstElement *element : from)
      for_each_pad(element, GST_PAD_SRC, [&](GstPad *pad) {
        span_starts.push_back(std::make_unique<SpanStart>());
        span_starts.back()->warmup = o.span_warmup;
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, record_span_start, span_starts.back().get(), nullptr);
      });
    for (GstElement *element : to)
      for_each_pad(element, GST_PAD_SINK, [&](GstPad *pad) {
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, record_span_end, &span_end, nullptr);
      });
  }

  double preroll_s = -1;
  const double init_s = double(g_get_monotonic_time() * GST_USECOND - started) / GST_SECOND;
  double wall_s = run_to_eos(pipeline, o.timeout_s, &preroll_s);
  const GstClockTime eos_at = g_get_monotonic_time() * GST_USECOND;
  gst_element_set_state(pipeline, GST_STATE_NULL);  // joins the streaming threads
  const double teardown_s = double(g_get_monotonic_time() * GST_USECOND - eos_at) / GST_SECOND;

  for (size_t g = 0; g < o.names.size(); g++) {
    std::vector<double> latencies_us, cpu_us;
    bool cpu_known = true;
    double first_us = 0;
    for (const TimedElement &e : groups[g]) collect_latencies(e, latencies_us, cpu_us, &cpu_known, &first_us);
    std::sort(latencies_us.begin(), latencies_us.end());
    std::sort(cpu_us.begin(), cpu_us.end());
    if (latencies_us.empty())
      std::printf("%s n=0 median_us=nan p90_us=nan cpu_median_us=nan cpu_p90_us=nan\n", o.names[g].c_str());
    else if (!cpu_known)
      std::printf("%s n=%zu median_us=%.1f p90_us=%.1f cpu_median_us=nan cpu_p90_us=nan\n", o.names[g].c_str(),
                  latencies_us.size(), median(latencies_us), p90(latencies_us));
    else
      std::printf("%s n=%zu median_us=%.1f p90_us=%.1f cpu_median_us=%.1f cpu_p90_us=%.1f\n", o.names[g].c_str(),
                  latencies_us.size(), median(latencies_us), p90(latencies_us), median(cpu_us), p90(cpu_us));
    if (!latencies_us.empty()) std::printf("%s first_us=%.1f\n", o.names[g].c_str(), first_us);
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("rusage user_s=%.3f sys_s=%.3f\n", usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6,
              usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6);
  std::printf("wall_s=%.3f preroll_s=%.3f init_s=%.3f teardown_s=%.3f\n", wall_s, preroll_s, init_s, teardown_s);
  if (!o.span_from.empty()) {
    GstClockTime start = 0;
    guint64 buffers = 0;
    for (const auto &pad : span_starts) {
      if (!GST_CLOCK_TIME_IS_VALID(pad->warm_at))
        fail("a pad of " + o.span_from + " pushed " + std::to_string(pad->buffers) +
             " buffers, not more than --span-warmup");
      start = std::max(start, pad->warm_at);
      buffers += pad->buffers - pad->warmup;
    }
    if (span_end.load() <= start) fail("no buffer reached " + o.span_to + " after the warm-up");
    std::printf("span_s=%.4f span_buffers=%llu\n", double(span_end.load() - start) / GST_SECOND,
                (unsigned long long)buffers);
  }
  gst_object_unref(pipeline);
  return 0;
}
