// PrivateDirectory: a directory only this run's user can enter (0700, made by mkdtemp under
// $TMPDIR or /tmp, named sharebench-<runner pid>-XXXXXX), for the files a cell repetition makes
// outside /dev/shm (each worker's captured stderr, an exec cell's hooks). Removed with everything
// in it, subdirectories too, when the object goes; nothing in it has a predictable name an outsider could plant first.
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

// Removes the directory at `path` and everything under it, subdirectories too (exec's cells keep
// their hooks, stacks and progress in subdirectories), never following a symbolic link out of it.
// True when the directory is gone. PrivateDirectory's destructor and the dead-run sweep both use it.
bool remove_directory_tree(const std::string& path);

// The last `max_bytes` of a file, from the start of a line; "" when it cannot be read.
std::string read_file_tail(const std::string& path, std::size_t max_bytes);

}  // namespace sharebench
