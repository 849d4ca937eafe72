// RunDirectory: where a run's files go. By default runs/<UTC time>-<pid>/ with runs/latest
// pointing at it; --out DIR writes into DIR instead. write_atomically() puts a file in place by
// write + fsync + rename, so a reader (or a crash) never sees half a results file.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

namespace sharebench {

// The output path cannot be created or written (a wrong path, a full disk, another run holding
// it): the environment's failure, not an internal error. Every command exits 2 on it, one line.
struct OutputPathError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RunDirectory {
 public:
  // Creates the directory (and parents) and locks it for the life of this object and its copies
  // (an flock on DIR/.lock, which names the holder's pid): two runs into one --out would overwrite
  // each other's results. Throws OutputPathError naming the path when it cannot be created or
  // written, or naming the run that holds it.
  // `owner_only`: the run keeps a program's output (exec), which may print secrets: a folder this
  // run makes is 0700 and every file written through write_atomically 0600.
  static RunDirectory create(const std::string& out_dir, const std::string& runs_root, const std::string& run_id,
                             bool owner_only = false);
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  void write_atomically(const std::string& name, const std::string& contents) const;
  // Space held back for the last word when the disk fills: create() reserves it (DIR/.reserve,
  // allocated, 16 MiB or what there is). Frees it and returns true once; false when nothing is held.
  bool release_reserve() const;

 private:
  std::string path_;
  bool owner_only_ = false;
  std::shared_ptr<const int> lock_;  // the locked descriptor, closed with the last copy
  struct Reserve;
  std::shared_ptr<Reserve> reserve_;  // DIR/.reserve, removed with the last copy if still there
};

// The one check every command's output folder gets (run, exec, report, merge): refuses a path that
// is another user's symbolic link or folder (it could send the files anywhere, or move them away);
// creates it with its parents, 0700 when `owner_only` (it will hold a program's output), else 0755,
// whatever the umask; checks it is a writable folder. Throws OutputPathError, one line naming `what`
// ("--out") and the path.
void prepare_output_folder(const std::string& dir, const char* what, bool owner_only);

// Throws OutputPathError naming the file and the system's reason when it cannot be written.
// `mode`: the new file's permissions (0600 for a file that holds a program's output).
void write_file_atomically(const std::string& path, const std::string& contents, unsigned mode = 0644);

}  // namespace sharebench
