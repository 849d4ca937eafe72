// SharedArena: regions, limits, and sharing with a real fork child.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/arena/shared_arena.h"
#include "harness/checkers/model_sharing.h"

namespace sharebench {
namespace {

TEST(SharedArena, AllocatesAlignedZeroedNamedRegions) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* a = static_cast<char*>(arena.allocate("a", 100));
  auto* b = static_cast<char*>(arena.allocate("b", 3));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % SharedArena::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % SharedArena::kAlignment, 0u);
  EXPECT_GE(b - a, 100);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a[i], 0);
  std::size_t bytes = 0;
  EXPECT_EQ(arena.find("b", &bytes), b);
  EXPECT_EQ(bytes, 3u);
  EXPECT_EQ(arena.find("missing"), nullptr);
  EXPECT_THROW(arena.get("missing"), std::out_of_range);
}

TEST(SharedArena, RejectsDuplicatesBadNamesAndOverflow) {
  SharedArena arena = SharedArena::create(64 << 10);
  arena.allocate("x", 8);
  EXPECT_THROW(arena.allocate("x", 8), std::invalid_argument);
  EXPECT_THROW(arena.allocate("", 8), std::invalid_argument);
  EXPECT_THROW(arena.allocate(std::string(100, 'n'), 8), std::invalid_argument);
  EXPECT_THROW(arena.allocate("big", 1 << 20), std::length_error);
}

TEST(SharedArena, ForkChildWritesAreSeenByTheParent) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* value = static_cast<int*>(arena.allocate("v", sizeof(int)));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    *value = 42;
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(*value, 42);
}

TEST(SharedArena, AttachByFdSeesTheSameRegions) {
  SharedArena arena = SharedArena::create(1 << 20);
  std::strcpy(static_cast<char*>(arena.allocate("msg", 16)), "hello");
  SharedArena other = SharedArena::attach(arena.fd());
  EXPECT_STREQ(static_cast<char*>(other.get("msg")), "hello");
  EXPECT_NE(other.get("msg"), arena.get("msg"));  // a second mapping of the same memory
}

TEST(SharedArena, AttachRejectsAForeignFd) {
  int fd = memfd_create("not-an-arena", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 1 << 16), 0);
  EXPECT_THROW(SharedArena::attach(fd), std::runtime_error);
  close(fd);
}

// What model-shared relies on: an arena region is shared memory; the heap, a private anonymous
// mapping, and a span that runs from shared memory past its end are not.
TEST(SharedArena, ItsRegionsAreSharedMemoryAndTheHeapIsNot) {
  SharedArena arena = SharedArena::create(1 << 20);
  auto* region = static_cast<char*>(arena.allocate("model", 4096));
  EXPECT_TRUE(in_shared_memory(region, 4096));
  std::vector<char> heap(1 << 16);
  EXPECT_FALSE(in_shared_memory(heap.data(), heap.size()));
  void* anon = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  EXPECT_FALSE(in_shared_memory(anon, 1 << 16));
  ::munmap(anon, 1 << 16);
  void* shared = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  EXPECT_TRUE(in_shared_memory(shared, 1 << 16));
  ::munmap(shared, 1 << 16);
  // A shared page right before a private one: a span over both is not shared memory.
  const long page = ::sysconf(_SC_PAGESIZE);
  auto* two = static_cast<char*>(::mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(static_cast<void*>(two), MAP_FAILED);
  ASSERT_NE(::mmap(two, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0), MAP_FAILED);
  EXPECT_TRUE(in_shared_memory(two, page));
  EXPECT_FALSE(in_shared_memory(two + page / 2, page));
  ::munmap(two, 2 * page);
}

}  // namespace
}  // namespace sharebench
