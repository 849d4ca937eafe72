// SharedArena: memfd-backed shared memory with a small directory of named regions at its start.
#include "harness/arena/shared_arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace sharebench {

namespace {
constexpr std::uint64_t kArenaMagic = 0x53485242454e4348ULL;  // "SHRBENCH"
constexpr std::uint32_t kArenaLayoutVersion = 1;

std::system_error errno_error(const std::string& what) {
  return std::system_error(errno, std::generic_category(), what);
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

struct SharedArena::Header {
  struct Region {
    char name[kMaxNameLength + 1];
    std::uint64_t offset;
    std::uint64_t bytes;
  };
  std::uint64_t magic;
  std::uint32_t layout_version;
  std::uint32_t region_count;
  std::uint64_t capacity;
  std::uint64_t used;  // bytes from the arena's start, header included
  Region regions[kMaxRegions];
};

SharedArena SharedArena::create(std::size_t capacity) {
  const std::size_t header_bytes = round_up(sizeof(Header), kAlignment);
  if (capacity < header_bytes + kAlignment) {
    throw std::invalid_argument(fmt::format("arena capacity {} is below the minimum {}", capacity,
                                            header_bytes + kAlignment));
  }
  int fd = ::memfd_create("sharebench-arena", MFD_CLOEXEC);
  if (fd < 0) throw errno_error("memfd_create(sharebench-arena)");
  if (::ftruncate(fd, static_cast<off_t>(capacity)) != 0) {
    auto err = errno_error(fmt::format("ftruncate(sharebench-arena, {})", capacity));
    ::close(fd);
    throw err;
  }
  void* base = ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    auto err = errno_error(fmt::format("mmap(sharebench-arena, {} bytes)", capacity));
    ::close(fd);
    throw err;
  }
  auto* h = static_cast<Header*>(base);
  h->magic = kArenaMagic;
  h->layout_version = kArenaLayoutVersion;
  h->region_count = 0;
  h->capacity = capacity;
  h->used = header_bytes;
  return SharedArena(fd, base, capacity);
}

SharedArena SharedArena::attach(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw errno_error(fmt::format("fstat(arena fd {})", fd));
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < sizeof(Header)) {
    throw std::runtime_error(fmt::format("fd {} is too small ({} bytes) to hold an arena", fd, size));
  }
  int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) throw errno_error(fmt::format("dup(arena fd {})", fd));
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, own, 0);
  if (base == MAP_FAILED) {
    auto err = errno_error(fmt::format("mmap(arena fd {}, {} bytes)", fd, size));
    ::close(own);
    throw err;
  }
  auto* h = static_cast<Header*>(base);
  if (h->magic != kArenaMagic || h->layout_version != kArenaLayoutVersion || h->capacity != size) {
    ::munmap(base, size);
    ::close(own);
    throw std::runtime_error(fmt::format("fd {} does not hold a sharebench arena (layout {})", fd,
                                         kArenaLayoutVersion));
  }
  return SharedArena(own, base, size);
}

SharedArena::SharedArena(SharedArena&& other) noexcept
    : fd_(other.fd_), base_(other.base_), capacity_(other.capacity_) {
  other.fd_ = -1;
  other.base_ = nullptr;
  other.capacity_ = 0;
}

SharedArena& SharedArena::operator=(SharedArena&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    base_ = other.base_;
    capacity_ = other.capacity_;
    other.fd_ = -1;
    other.base_ = nullptr;
    other.capacity_ = 0;
  }
  return *this;
}

SharedArena::~SharedArena() { close(); }

void SharedArena::close() {
  if (base_ != nullptr) ::munmap(base_, capacity_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
  capacity_ = 0;
}

std::size_t SharedArena::used() const { return base_ ? header()->used : 0; }

void* SharedArena::allocate(std::string_view name, std::size_t bytes) {
  if (!base_) throw std::logic_error("allocate on a closed arena");
  if (name.empty() || name.size() > kMaxNameLength) {
    throw std::invalid_argument(
        fmt::format("arena region name '{}' must have 1 to {} characters", name, kMaxNameLength));
  }
  if (find(name) != nullptr) {
    throw std::invalid_argument(fmt::format("arena region '{}' already exists", name));
  }
  Header* h = header();
  if (h->region_count >= static_cast<std::uint32_t>(kMaxRegions)) {
    throw std::length_error(fmt::format("arena holds {} regions already", kMaxRegions));
  }
  const std::size_t offset = round_up(h->used, kAlignment);
  const std::size_t need = round_up(bytes == 0 ? 1 : bytes, kAlignment);
  if (offset + need > capacity_) {
    throw std::length_error(fmt::format(
        "arena full: region '{}' needs {} bytes, {} of {} are free (raise --arena-mb)", name, bytes,
        capacity_ - offset, capacity_));
  }
  auto& r = h->regions[h->region_count];
  std::memset(r.name, 0, sizeof r.name);
  std::memcpy(r.name, name.data(), name.size());
  r.offset = offset;
  r.bytes = bytes;
  h->used = offset + need;
  ++h->region_count;  // published last: a reader never sees a half-written entry
  // memfd pages are zero-filled on first touch; no memset needed.
  return static_cast<char*>(base_) + offset;
}

void* SharedArena::find(std::string_view name, std::size_t* bytes_out) const {
  if (!base_) return nullptr;
  const Header* h = header();
  for (std::uint32_t i = 0; i < h->region_count; ++i) {
    const auto& r = h->regions[i];
    if (name == std::string_view(r.name)) {
      if (bytes_out) *bytes_out = r.bytes;
      return static_cast<char*>(base_) + r.offset;
    }
  }
  return nullptr;
}

void* SharedArena::get(std::string_view name, std::size_t* bytes_out) const {
  void* p = find(name, bytes_out);
  if (!p) throw std::out_of_range(fmt::format("arena has no region named '{}'", name));
  return p;
}

}  // namespace sharebench
