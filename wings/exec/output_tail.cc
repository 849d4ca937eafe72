// output_tail: the program's output file kept to its tail, and a full disk named (output_tail.h).
#include "wings/exec/output_tail.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <climits>
#include <filesystem>

#include <fmt/format.h>

namespace sharebench {

namespace {
constexpr std::int64_t kBlock = 4096;
constexpr std::int64_t kFullBelowBytes = 1 << 20;

std::string path_of(int fd) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(fmt::format("/proc/self/fd/{}", fd).c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}
}  // namespace

std::int64_t keep_only_tail(int fd, std::int64_t keep) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  const std::int64_t allocated = static_cast<std::int64_t>(st.st_blocks) * 512;
  if (allocated <= 2 * keep) return 0;  // punched only once it holds twice the tail: one call per mebibyte at most
  const std::int64_t end = (static_cast<std::int64_t>(st.st_size) - keep) / kBlock * kBlock;
  if (end <= 0) return 0;
  if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, end) != 0) return 0;
  return allocated - keep;
}

std::string full_disk_of(int fd) {
  struct statvfs vfs {};
  if (::fstatvfs(fd, &vfs) != 0) return "";
  const auto left = static_cast<std::int64_t>(vfs.f_bavail) * static_cast<std::int64_t>(vfs.f_frsize);
  if (left >= kFullBelowBytes) return "";
  const auto size = static_cast<std::int64_t>(vfs.f_blocks) * static_cast<std::int64_t>(vfs.f_frsize);
  const std::string path = path_of(fd);
  return fmt::format("the file system holding {} ({} MiB) was full, {} KiB left",
                     path.empty() ? std::string("exec's files") : std::filesystem::path(path).parent_path().string(),
                     size >> 20, left >> 10);
}

}  // namespace sharebench
