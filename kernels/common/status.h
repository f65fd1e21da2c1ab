// Error reporting shared by the kernels' host API: a message, empty when all is well.
#pragma once
#include <string>
#include <utility>

namespace cudaprep {

class Status {
 public:
  Status() = default;
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.failed_ = true;
    return s;
  }
  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  bool failed_ = false;
};

#define CUDAPREP_RETURN_IF_ERROR(expr) \
  do {                                 \
    ::cudaprep::Status s_ = (expr);    \
    if (!s_.ok()) return s_;           \
  } while (0)

}  // namespace cudaprep
