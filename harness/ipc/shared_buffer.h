// The two kinds of CPU shared memory a producer hands to consumers, as torch.multiprocessing's
// two sharing strategies do:
//   MemfdBuffer   an anonymous memfd: never has a name, so it cannot leak into /dev/shm; a
//                 consumer gets it as an fd over a Unix socket (strategy `file_descriptor`).
//   NamedSegment  a POSIX segment in /dev/shm, passed by name (strategy `file_system`). Its
//                 first cache line holds a reference count; release() drops one reference and
//                 the last user unlinks the name, so a segment outlives the producer if need be
//                 but not its last user.
// Mapping is the mmap both share: unmapped when it goes out of scope.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>
#include <utility>

namespace sharebench {

class Mapping {
 public:
  Mapping() = default;
  Mapping(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}
  Mapping(Mapping&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping();
  // Maps `bytes` of `fd` shared, read-write. Throws std::system_error.
  static Mapping of_fd(int fd, std::size_t bytes);
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class MemfdBuffer {
 public:
  MemfdBuffer() = default;
  static MemfdBuffer create(std::size_t bytes);
  MemfdBuffer(MemfdBuffer&& o) noexcept : fd_(std::exchange(o.fd_, -1)), map_(std::move(o.map_)) {}
  MemfdBuffer& operator=(MemfdBuffer&& o) noexcept;
  ~MemfdBuffer();
  int fd() const { return fd_; }
  void* data() const { return map_.data(); }
  std::size_t bytes() const { return map_.bytes(); }

 private:
  int fd_ = -1;
  Mapping map_;
};

class NamedSegment {
 public:
  static constexpr std::size_t kHeaderBytes = 64;
  NamedSegment() = default;
  // Creates `/name` (it must not exist) with `users` references.
  static NamedSegment create(const std::string& name, std::size_t bytes, int users);
  // Opens an existing segment; throws std::system_error (ENOENT when its last user unlinked it).
  static NamedSegment open(const std::string& name, std::size_t bytes);
  NamedSegment(NamedSegment&&) noexcept = default;
  NamedSegment& operator=(NamedSegment&&) noexcept = default;

  // nullptr once released (or never created).
  void* data() const { return map_.data() ? static_cast<char*>(map_.data()) + kHeaderBytes : nullptr; }
  std::size_t bytes() const { return map_.data() ? map_.bytes() - kHeaderBytes : 0; }
  const std::string& name() const { return name_; }
  // Adds references (a producer that hands the segment out again).
  void add_users(int n);
  // Drops this holder's reference and unmaps; the last user unlinks the name. True if it did.
  bool release();
  // Drops this holder's reference (the last user unlinks the name) but keeps the mapping, which
  // stays valid until this object goes: a consumer that keeps computing on what it received after
  // the name is gone, as a model bound to the segment does. True if it unlinked the name.
  bool drop_reference();

 private:
  std::atomic<std::int32_t>& users() const { return *static_cast<std::atomic<std::int32_t>*>(map_.data()); }
  std::string name_;
  Mapping map_;
  bool referenced_ = true;  // this holder still counts among the users
};

// The janitor's half of NamedSegment, for after every user is gone: unlinks each /dev/shm entry
// whose name starts with `prefix` and returns the names. A worker killed between a segment's
// creation and its last release leaves it behind; the kernel never frees a name by itself (as
// PyTorch's torch_shm_manager exists to do for its shared-memory files).
std::vector<std::string> unlink_segments_with_prefix(const std::string& prefix);

}  // namespace sharebench
