// ProgressChannel: the runner's end of `sharebench exec`'s progress file. Every process of the
// program appends lines "PID STEP" (its own count of work done so far) to one file, with one
// write each (O_APPEND keeps lines whole across processes); the supervisor reads what is new and
// sums each process's latest count. Any language can write it: the Python module
// sharebench_progress, the C header <sharebench/progress.h>, `echo "$$ $step" >> "$SHAREBENCH_PROGRESS"`.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

namespace sharebench {

class ProgressChannel {
 public:
  // Creates (truncates) the file, mode 0600.
  static void create(const std::string& path);
  explicit ProgressChannel(std::string path) : path_(std::move(path)) {}
  ~ProgressChannel();
  ProgressChannel(const ProgressChannel&) = delete;
  ProgressChannel& operator=(const ProgressChannel&) = delete;

  // Reads every complete line appended since the last call; returns how many were read. A line
  // that is not "PID STEP" (two whole numbers) is counted in malformed() and skipped.
  int poll();
  std::int64_t total() const;  // the sum of every process's latest step
  std::int64_t lines() const { return lines_; }
  std::int64_t malformed() const { return malformed_; }
  const std::map<pid_t, std::int64_t>& by_process() const { return by_process_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::string partial_;
  std::map<pid_t, std::int64_t> by_process_;
  std::int64_t lines_ = 0, malformed_ = 0;
};

}  // namespace sharebench
