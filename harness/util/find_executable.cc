// find_executable: stat + access over the entries of PATH.
#include "harness/util/find_executable.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace sharebench {

namespace {
bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}
}  // namespace

std::string find_executable(const std::string& name, const std::string& workdir) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) {
    const std::string path = name.front() == '/' || workdir.empty() ? name : workdir + "/" + name;
    return is_executable_file(path) ? path : std::string();
  }
  const char* env_path = std::getenv("PATH");
  const std::string search = env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= search.size()) {
    const std::size_t colon = std::min(search.find(':', begin), search.size());
    std::string dir = search.substr(begin, colon - begin);
    if (dir.empty()) dir = ".";
    if (dir.front() != '/' && !workdir.empty()) dir = workdir + "/" + dir;
    const std::string path = dir + "/" + name;
    if (is_executable_file(path)) return path;
    begin = colon + 1;
  }
  return {};
}

}  // namespace sharebench
