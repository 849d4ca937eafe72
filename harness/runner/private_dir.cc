// PrivateDirectory: mkdtemp, and removal of its (flat) contents.
#include "harness/runner/private_dir.h"

#include <dirent.h>
#include <fcntl.h>
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

PrivateDirectory::~PrivateDirectory() {
  if (DIR* d = ::opendir(path_.c_str())) {
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") ::unlink((path_ + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(path_.c_str());
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
