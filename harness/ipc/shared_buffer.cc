// MemfdBuffer, NamedSegment and Mapping: memfd_create, shm_open and mmap, with errno in every error.
#include "harness/ipc/shared_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <memory>
#include <new>
#include <system_error>

#include <fmt/format.h>

namespace sharebench {

namespace {
[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}
}  // namespace

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, bytes_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Mapping::~Mapping() {
  if (data_) ::munmap(data_, bytes_);
}

Mapping Mapping::of_fd(int fd, std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw_errno(fmt::format("mmap of {} bytes", bytes));
  return Mapping(p, bytes);
}

MemfdBuffer MemfdBuffer::create(std::size_t bytes) {
  MemfdBuffer b;
  b.fd_ = ::memfd_create("sharebench-ipc", MFD_CLOEXEC);
  if (b.fd_ < 0) throw_errno("memfd_create");
  if (::ftruncate(b.fd_, static_cast<off_t>(bytes)) != 0) throw_errno(fmt::format("ftruncate to {} bytes", bytes));
  b.map_ = Mapping::of_fd(b.fd_, bytes);
  return b;
}

MemfdBuffer& MemfdBuffer::operator=(MemfdBuffer&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    map_ = std::move(o.map_);
  }
  return *this;
}

MemfdBuffer::~MemfdBuffer() {
  if (fd_ >= 0) ::close(fd_);
}

NamedSegment NamedSegment::create(const std::string& name, std::size_t bytes, int users) {
  const int fd = ::shm_open(("/" + name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno(fmt::format("shm_open '/{}'", name));
  NamedSegment s;
  s.name_ = name;
  try {
    if (::ftruncate(fd, static_cast<off_t>(bytes + kHeaderBytes)) != 0) throw_errno("ftruncate");
    s.map_ = Mapping::of_fd(fd, bytes + kHeaderBytes);
  } catch (...) {
    ::close(fd);
    ::shm_unlink(("/" + name).c_str());
    throw;
  }
  ::close(fd);  // the mapping keeps the memory; the name keeps the segment findable
  new (s.map_.data()) std::atomic<std::int32_t>(users);
  return s;
}

NamedSegment NamedSegment::open(const std::string& name, std::size_t bytes) {
  const int fd = ::shm_open(("/" + name).c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) throw_errno(fmt::format("shm_open '/{}'", name));
  NamedSegment s;
  s.name_ = name;
  try {
    s.map_ = Mapping::of_fd(fd, bytes + kHeaderBytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return s;
}

void NamedSegment::add_users(int n) { users().fetch_add(n, std::memory_order_acq_rel); }

bool NamedSegment::drop_reference() {
  if (!map_.data() || !referenced_) return false;
  referenced_ = false;
  const bool last = users().fetch_sub(1, std::memory_order_acq_rel) == 1;
  if (last) ::shm_unlink(("/" + name_).c_str());
  return last;
}

bool NamedSegment::release() {
  const bool last = drop_reference();
  map_ = Mapping();
  return last;
}

std::vector<std::string> unlink_segments_with_prefix(const std::string& prefix) {
  std::vector<std::string> removed;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir("/dev/shm"), &::closedir);
  if (!dir) return removed;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    if (::shm_unlink(("/" + name).c_str()) == 0) removed.push_back(name);
  }
  return removed;
}

}  // namespace sharebench
