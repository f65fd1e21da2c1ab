// cudaprep-regress: moving a complete recording into place without ever losing one.
#pragma once

#include <string>

namespace regress {

enum class PlaceResult { kPlaced, kTargetAppeared, kFailed };

// Moves the complete recording `tmp` to `out` in one atomic step.
// Without `replace`: `out` is taken only if it does not exist or is an empty directory; a
// recording (or anything else) that appeared at `out` meanwhile is never touched:
// kTargetAppeared, `tmp` left where it is. With `replace`: an existing `out` is exchanged with
// the new recording atomically and then removed (only once the new one is in place).
// kFailed with the system's reason for other errors.
PlaceResult place_recording(const std::string& tmp, const std::string& out, bool replace, std::string* error);

}  // namespace regress
