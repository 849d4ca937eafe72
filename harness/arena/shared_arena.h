// SharedArena: one block of shared memory that every worker of a cell maps, whatever its start
// method. It is a memfd (anonymous, unlinked: nothing in /dev/shm can leak) mapped MAP_SHARED;
// a fork child inherits the mapping, a spawned or forkserver child receives the fd and maps it.
//
// The runner lays the arena out before workers start (create<T>/allocate with a name); workers
// only look regions up by name. Regions are never freed: the arena lives exactly as long as one
// cell repetition. Capacity is reserved sparsely, so untouched pages cost nothing.
//
// Not guaranteed: allocation is not thread-safe (the runner allocates alone, before launch), and
// the arena's contents are not synchronised: that is what process_mutex.h and process_barrier.h
// are for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

namespace sharebench {

class SharedArena {
 public:
  // Region alignment: a cache line, so regions used by different workers never share one.
  static constexpr std::size_t kAlignment = 64;
  // Named regions an arena can hold; a cell uses a handful.
  static constexpr int kMaxRegions = 128;
  static constexpr std::size_t kMaxNameLength = 47;

  // Creates a new memfd of `capacity` bytes and maps it. Throws std::system_error naming errno.
  static SharedArena create(std::size_t capacity);
  // Maps an arena created by another process from its fd (the fd is duplicated; the caller keeps
  // its own). Throws if the fd does not hold an arena.
  static SharedArena attach(int fd);

  SharedArena() = default;
  SharedArena(SharedArena&& other) noexcept;
  SharedArena& operator=(SharedArena&& other) noexcept;
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;
  ~SharedArena();

  // Unmaps and closes; idempotent.
  void close();

  // Reserves `bytes` (zero-filled) under `name`. Throws std::invalid_argument on a duplicate
  // name and std::length_error when the arena is full.
  void* allocate(std::string_view name, std::size_t bytes);
  // Returns the region `name`, or nullptr. `bytes_out` receives its size when given.
  void* find(std::string_view name, std::size_t* bytes_out = nullptr) const;
  // Like find, but throws std::out_of_range naming the region when it is absent.
  void* get(std::string_view name, std::size_t* bytes_out = nullptr) const;

  // Constructs a T in a new region. T must be usable from several processes: no pointers into
  // private memory, no virtual functions.
  template <typename T, typename... Args>
  T* create(std::string_view name, Args&&... args) {
    static_assert(std::is_standard_layout_v<T>, "arena objects must be standard-layout");
    static_assert(alignof(T) <= kAlignment, "arena alignment is one cache line");
    return new (allocate(name, sizeof(T))) T(std::forward<Args>(args)...);
  }
  template <typename T>
  T* lookup(std::string_view name) const {
    return static_cast<T*>(get(name));
  }

  int fd() const { return fd_; }
  const void* base() const { return base_; }  // this process's mapping; offsets within it are the same everywhere
  std::size_t capacity() const { return capacity_; }
  std::size_t used() const;
  bool valid() const { return base_ != nullptr; }

 private:
  SharedArena(int fd, void* base, std::size_t capacity) : fd_(fd), base_(base), capacity_(capacity) {}
  struct Header;
  Header* header() const { return static_cast<Header*>(base_); }

  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace sharebench
