// RunDirectory: run directories, the `latest` link, atomic writes.
#include "harness/results/run_directory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace sharebench {

namespace fs = std::filesystem;

void write_file_atomically(const std::string& path, const std::string& contents, unsigned mode) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  // A stale file of this name (a killed process that had this pid) goes first; then the file is
  // made fresh: never through a link someone planted, never one that already exists.
  ::unlink(tmp.c_str());
  // The umask still applies: a user whose umask is 077 gets 0600 files whatever `mode` allows.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
  if (fd < 0) throw OutputPathError(fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw OutputPathError(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {  // a full disk can first show itself here (NFS, quotas)
    const int err = errno;
    ::unlink(tmp.c_str());
    throw OutputPathError(fmt::format("cannot write '{}': {}", tmp, std::strerror(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw OutputPathError(fmt::format("cannot move '{}' into place: {}", path, std::strerror(err)));
  }
}

namespace {
// flock(DIR/.lock), held until the descriptor closes: released by the kernel when the run ends,
// however it ends, so a crashed run never leaves the folder locked.
std::shared_ptr<const int> lock_for_this_run(const std::string& dir) {
  const std::string path = dir + "/.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw OutputPathError(fmt::format("cannot lock output directory '{}': {}: {}", dir, path, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    const std::string pid = n > 0 ? std::string(holder, static_cast<std::size_t>(n)) : "?";
    throw OutputPathError(fmt::format("output directory '{}' is in use by another run (pid {}); give another --out, "
                                      "or wait for it to end", dir, pid.substr(0, pid.find('\n'))));
  }
  const std::string me = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t written = ::pwrite(fd, me.data(), me.size(), 0);
  }
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
}
}  // namespace

namespace {
constexpr off_t kReserveBytes = 16 << 20;  // more than the results of the default matrix (about 5 MiB)

}  // namespace

// Allocated at creation (held stays false when the disk has not even that: the run goes on
// without it); removed by release() or with the directory's last copy.
struct RunDirectory::Reserve {
  explicit Reserve(std::string p) : path(std::move(p)) {
    ::unlink(path.c_str());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    held = ::posix_fallocate(fd, 0, kReserveBytes) == 0;
    ::close(fd);
    if (!held) ::unlink(path.c_str());
  }
  ~Reserve() { release(); }
  Reserve(const Reserve&) = delete;
  Reserve& operator=(const Reserve&) = delete;
  bool release() {
    if (!held) return false;
    held = false;
    return ::unlink(path.c_str()) == 0;
  }
  std::string path;
  bool held = false;
};

bool RunDirectory::release_reserve() const { return reserve_ && reserve_->release(); }

namespace {
// A path another local user controls: a symlink of theirs (planted in /tmp, it would steer this
// run's files wherever they point, as the kernel's protected_symlinks refuses in sticky folders), or
// a folder of theirs (a runs/ they made could move a run away or forge `latest`). Refused, one line.
void refuse_if_another_users(const std::string& path, const char* what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // not there yet: made by this run
  const uid_t me = ::geteuid();
  if (st.st_uid == me) return;
  if (S_ISLNK(st.st_mode)) {
    throw OutputPathError(fmt::format("{} '{}' is a symbolic link owned by another user (uid {}): refused, as it "
                                      "could send this run's files anywhere; give a path of your own",
                                      what, path, st.st_uid));
  }
  if (S_ISDIR(st.st_mode)) {
    throw OutputPathError(fmt::format("{} '{}' belongs to another user (uid {}): refused, as that user could move or "
                                      "replace this run's files; give a folder of your own (--out)",
                                      what, path, st.st_uid));
  }
}
}  // namespace

namespace {
// The reserves of runs under `runs_root` whose runner is gone (killed outright: nothing released its
// 16 MiB). A run is gone when its folder's lock can be taken: the kernel released it with the
// runner. Only this user's, and only the reserve: the results stay.
void sweep_dead_reserves(const std::string& runs_root) {
  std::error_code ec;
  int looked = 0;
  for (const auto& entry : fs::directory_iterator(runs_root, ec)) {
    if (++looked > 4096) break;
    const fs::path reserve = entry.path() / ".reserve";
    struct stat st {};
    if (!entry.is_directory(ec) || entry.is_symlink(ec) || ::lstat(reserve.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid()) {
      continue;
    }
    const int fd = ::open((entry.path() / ".lock").c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);  // a live run's
      continue;
    }
    ::unlink(reserve.c_str());
    if (fd >= 0) ::close(fd);  // releases the lock just taken
  }
}
}  // namespace

void prepare_output_folder(const std::string& dir, const char* what, bool owner_only) {
  refuse_if_another_users(dir, what);
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (!existed && !ec) {
    // Readable by all (or the owner alone), writable by the owner alone, whatever the umask (under
    // umask 000 a run directory would otherwise be world-writable).
    fs::permissions(dir, owner_only ? fs::perms::owner_all : static_cast<fs::perms>(0755), ec);  // rwx------ / rwxr-xr-x
  }
  if (ec || !fs::is_directory(dir)) {
    throw OutputPathError(fmt::format("cannot create output directory '{}': {}", dir,
                                      ec ? ec.message() : "a file of that name exists"));
  }
  if (::access(dir.c_str(), W_OK) != 0) throw OutputPathError(fmt::format("output directory '{}' is not writable", dir));
}

RunDirectory RunDirectory::create(const std::string& out_dir, const std::string& runs_root,
                                  const std::string& run_id, bool owner_only) {
  if (out_dir.empty()) refuse_if_another_users(runs_root, "the runs folder");
  RunDirectory d;
  d.owner_only_ = owner_only;
  d.path_ = out_dir.empty() ? runs_root + "/" + run_id : out_dir;
  prepare_output_folder(d.path_, out_dir.empty() ? "the run folder" : "--out", owner_only);
  std::error_code ec;
  d.lock_ = lock_for_this_run(d.path_);
  d.reserve_ = std::make_shared<Reserve>(d.file(".reserve"));
  if (out_dir.empty()) sweep_dead_reserves(runs_root);
  // Temporary results files of writers that were killed mid-write (results.json.tmp-<pid>, the pid
  // gone): the results file itself is whole, these are only debris.
  for (const auto& entry : fs::directory_iterator(d.path_, ec)) {
    const std::string name = entry.path().filename().string();
    const auto at = name.rfind(".tmp-");
    if (at == std::string::npos || name.find_first_not_of("0123456789", at + 5) != std::string::npos || at + 5 == name.size()) continue;
    const long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
  if (out_dir.empty()) {
    const fs::path link = fs::path(runs_root) / "latest";
    const fs::path tmp = fs::path(runs_root) / fmt::format(".latest-{}", ::getpid());
    fs::remove(tmp, ec);
    fs::create_directory_symlink(run_id, tmp, ec);
    if (!ec) fs::rename(tmp, link, ec);  // atomic replacement of the link
  }
  return d;
}

void RunDirectory::write_atomically(const std::string& name, const std::string& contents) const {
  // The directory may be gone since the run began: a program run by `exec` may remove the
  // directory it was started in, with the results inside. Made again, nothing is lost.
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(file(name)).parent_path(), ec);
  write_file_atomically(file(name), contents, owner_only_ ? 0600 : 0644);
}

}  // namespace sharebench
