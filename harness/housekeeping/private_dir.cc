// PrivateDirectory: mkdtemp, and removal of it with everything under it.
#include "harness/housekeeping/private_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace sharebench {

PrivateDirectory::PrivateDirectory() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = fmt::format("{}/sharebench-{}-XXXXXX", tmp && *tmp ? tmp : "/tmp", ::getpid());
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw std::system_error(errno, std::generic_category(), "mkdtemp(" + templ + ")");
  path_ = buf.data();
}

PrivateDirectory::~PrivateDirectory() { remove_directory_tree(path_); }

namespace {
constexpr int kMaxDepth = 16;  // deeper than anything the harness makes; a deeper tree stays

// Removes what is in the directory open as `dir` (the descriptor stays open), depth-first.
void remove_contents(int dir, int depth) {
  const int listing = ::dup(dir);
  if (listing < 0) return;
  DIR* d = ::fdopendir(listing);
  if (!d) {
    ::close(listing);
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode) && depth < kMaxDepth) {
      const int sub = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue;
      remove_contents(sub, depth + 1);
      ::close(sub);
      ::unlinkat(dir, name.c_str(), AT_REMOVEDIR);
    } else {
      ::unlinkat(dir, name.c_str(), 0);  // a link is removed, not followed
    }
  }
}
}  // namespace

bool remove_directory_tree(const std::string& path) {
  const int dir = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return false;
  remove_contents(dir, 0);
  ::close(dir);
  return ::rmdir(path.c_str()) == 0;
}

std::string read_file_tail(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  const off_t size = ::lseek(fd, 0, SEEK_END);
  const off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<std::size_t>(size - from), '\0');
  const ssize_t n = size > 0 ? ::pread(fd, out.data(), out.size(), from) : 0;
  ::close(fd);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (from > 0) {
    const auto nl = out.find('\n');
    out = nl == std::string::npos ? out : out.substr(nl + 1);
  }
  return out;
}

}  // namespace sharebench
