// cudaprep-regress: a full recording's digests checked against its stored bytes.
#pragma once

#include <string>

#include "regress_store.h"

namespace regress {

// For a recording that stores its tensors (store full): reads every tensor file and checks the
// frame's SHA-256 and every slot's SHA-256 against the bytes. A recording whose digests
// contradict its own files is corrupt: false with the file, frame and field at fault.
bool verify_stored_digests(const Recording& r, std::string* error);

}  // namespace regress
