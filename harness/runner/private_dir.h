// PrivateDirectory: a directory only this run's user can enter (0700, made by mkdtemp under
// $TMPDIR or /tmp, named sharebench-<runner pid>-XXXXXX), for the files a cell repetition makes
// outside /dev/shm (each worker's captured stderr). Removed with everything in it when the object
// goes; nothing in it has a predictable name an outsider could plant first.
#pragma once

#include <string>

namespace sharebench {

class PrivateDirectory {
 public:
  // Throws std::system_error naming the path when the directory cannot be made.
  PrivateDirectory();
  ~PrivateDirectory();
  PrivateDirectory(const PrivateDirectory&) = delete;
  PrivateDirectory& operator=(const PrivateDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The last `max_bytes` of a file, from the start of a line; "" when it cannot be read.
std::string read_file_tail(const std::string& path, std::size_t max_bytes);

}  // namespace sharebench
