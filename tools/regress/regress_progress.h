// cudaprep-regress: the --progress line (frames done, rate, time left), kept apart from the
// pipeline loop that prints it so that the arithmetic can be unit-tested.
#pragma once

#include <cstdint>
#include <string>

namespace regress {

struct ProgressSnapshot {
  std::string label;            // "check", "record"
  uint64_t frames = 0;          // frames done
  uint64_t expected = 0;        // frames expected (a golden's count); 0 = unknown
  double stream_fraction = -1;  // position / duration of the clip when known (0..1), else -1
  double elapsed_s = 0;         // wall time since the pipeline started
  std::string note;             // "2 failing"
};

// "check: frame 120/1000 (12%), 45.2 fps, 0:19 left, 2 failing". The time left comes from the
// expected count when there is one, else from the stream position; it is left out until a
// frame is done (no rate yet).
std::string progress_line(const ProgressSnapshot& s);

// Seconds as "7 s", "2:05" or "1:02:03".
std::string format_duration(double seconds);

}  // namespace regress
