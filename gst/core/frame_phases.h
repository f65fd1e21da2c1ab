/* Where a frame's time goes inside an element, in its debug log: at LOG level each frame logs
 * "frame phases (us): NAME T, ..., total T, thread cpu C" (dev/gpu/phases.sh reads it; C: the
 * streaming thread's CPU time in the frame, sleeping waits excluded); below LOG nothing is timed. Header-only: one per
 * frame, on the stack. */
#pragma once

#include <gst/gst.h>

#include <time.h>

#include <chrono>

class FramePhases {
 public:
  FramePhases(GstDebugCategory *category, GstObject *object)
      : category_(category), object_(object), on_(gst_debug_category_get_threshold(category) >= GST_LEVEL_LOG) {
    if (on_) {
      start_ = last_ = std::chrono::steady_clock::now();
      cpu_start_ = thread_cpu_us();
    }
  }
  FramePhases(const FramePhases &) = delete;
  FramePhases &operator=(const FramePhases &) = delete;

  /* Ends phase @name (a string literal) here. */
  void mark(const char *name) {
    if (!on_ || n_ == kMax) return;
    const auto now = std::chrono::steady_clock::now();
    names_[n_] = name;
    us_[n_++] = std::chrono::duration<double, std::micro>(now - last_).count();
    last_ = now;
  }

  ~FramePhases() {
    if (!on_) return;
    char line[384] = "";
    gsize len = 0;
    for (int i = 0; i < n_ && len < sizeof(line); i++)
      len += g_snprintf(line + len, sizeof(line) - len, "%s %.1f, ", names_[i], us_[i]);
    GST_CAT_LOG_OBJECT(category_, object_, "frame phases (us): %stotal %.1f, thread cpu %.1f", line,
                       std::chrono::duration<double, std::micro>(last_ - start_).count(), thread_cpu_us() - cpu_start_);
  }

 private:
  /* CPU time of the calling thread: what the frame cost the streaming thread, sleeps excluded. */
  static double thread_cpu_us() {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
  }

  static constexpr int kMax = 10;
  GstDebugCategory *category_;
  GstObject *object_;
  const bool on_;
  std::chrono::steady_clock::time_point start_, last_;
  double cpu_start_ = 0;
  const char *names_[kMax]{};
  double us_[kMax]{};
  int n_ = 0;
};
