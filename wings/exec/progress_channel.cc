// ProgressChannel: incremental reads of the progress file, tolerant of partial and foreign lines.
#include "wings/exec/progress_channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <stdexcept>

#include <fmt/format.h>

namespace sharebench {

void ProgressChannel::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot create the progress file {}", path));
  ::close(fd);
}

ProgressChannel::~ProgressChannel() {
  if (fd_ >= 0) ::close(fd_);
}

int ProgressChannel::poll() {
  if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd_ < 0) return 0;
  char buffer[16384];
  int read_lines = 0;
  for (;;) {
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    partial_.append(buffer, static_cast<std::size_t>(n));
    std::size_t begin = 0;
    for (std::size_t nl; (nl = partial_.find('\n', begin)) != std::string::npos; begin = nl + 1) {
      const std::string_view line(partial_.data() + begin, nl - begin);
      ++read_lines;
      ++lines_;
      const auto space = line.find(' ');
      long long pid = 0, step = 0;
      const bool ok = space != std::string_view::npos &&
                      std::from_chars(line.data(), line.data() + space, pid).ptr == line.data() + space &&
                      std::from_chars(line.data() + space + 1, line.data() + line.size(), step).ptr ==
                          line.data() + line.size() &&
                      pid > 0 && step >= 0;
      if (!ok) {
        ++malformed_;
        continue;
      }
      by_process_[static_cast<pid_t>(pid)] = step;
    }
    partial_.erase(0, begin);
    if (partial_.size() > 4096) partial_.clear();  // not a line of ours
  }
  return read_lines;
}

std::int64_t ProgressChannel::total() const {
  std::int64_t sum = 0;
  for (const auto& [pid, step] : by_process_) sum += step;
  return sum;
}

}  // namespace sharebench
