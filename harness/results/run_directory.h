// RunDirectory: where a run's files go. By default runs/<UTC time>-<pid>/ with runs/latest
// pointing at it; --out DIR writes into DIR instead. write_atomically() puts a file in place by
// write + fsync + rename, so a reader (or a crash) never sees half a results file.
#pragma once

#include <stdexcept>
#include <string>

namespace sharebench {

// The output path cannot be created or written: bad input, not an internal error.
struct OutputPathError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RunDirectory {
 public:
  // Creates the directory (and parents). Throws OutputPathError naming the path when it cannot
  // be created or written.
  static RunDirectory create(const std::string& out_dir, const std::string& runs_root, const std::string& run_id);
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write_atomically(const std::string& name, const std::string& contents) const;

 private:
  std::string path_;
};

void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace sharebench
