// IPC handoff by size, 4 KiB to 64 MiB, each transport against its bounds in the same run
// (docs/performance.md). One iteration hands one buffer to a consumer process, which maps it,
// touches its first and last word, and acknowledges:
//   BM_HandoffFd        the memfd's fd crosses a Unix socket (SCM_RIGHTS); the consumer mmaps it
//   BM_HandoffNamed     the consumer opens a named /dev/shm segment and mmaps it
//   BM_HandoffPipeCopy  the bytes themselves cross the socket into the consumer's buffer
//   BM_Memcpy           the same bytes copied within one process: the cost of any copy
// Zero copy means the first two stay flat as the size grows while the last two grow with it.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/partner_process.h"
#include "harness/ipc/pattern.h"
#include "harness/ipc/shared_buffer.h"
#include "harness/ipc/unix_socket.h"

namespace sharebench::bench {
namespace {

constexpr double kTimeoutS = 30;

struct Request {
  std::uint64_t bytes = 0;  // 0: stop
  char name[64] = {};
};

void touch(const void* data, std::size_t bytes) {
  const auto* words = static_cast<const std::uint64_t*>(data);
  benchmark::DoNotOptimize(words[0] + words[bytes / sizeof(std::uint64_t) - 1]);
}

enum class Mode { kFd, kNamed, kCopy };

// The consumer's loop: one request, one handoff, one acknowledgement.
void consume(UnixSocket& socket, Mode mode) {
  std::vector<char> copy;
  for (;;) {
    Request r;
    int fd = -1;
    socket.receive(&r, sizeof(r), kTimeoutS, &fd);
    if (r.bytes == 0) return;
    if (mode == Mode::kFd) {
      Mapping map = Mapping::of_fd(fd, r.bytes);
      ::close(fd);
      touch(map.data(), r.bytes);
    } else if (mode == Mode::kNamed) {
      NamedSegment segment = NamedSegment::open(r.name, r.bytes);
      touch(segment.data(), r.bytes);
      segment.release();
    } else {
      copy.resize(r.bytes);
      socket.receive(copy.data(), r.bytes, kTimeoutS);
      touch(copy.data(), r.bytes);
    }
    const char ack = 1;
    socket.send(&ack, 1, kTimeoutS);
  }
}

void run_handoff(benchmark::State& state, Mode mode) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::pair<UnixSocket, UnixSocket> ends = UnixSocket::pair();
  UnixSocket& mine = ends.first;
  UnixSocket& theirs = ends.second;
  PartnerProcess partner([&] {
    mine.close();
    consume(theirs, mode);
  });
  theirs.close();
  const std::string name = "sharebench-bench-" + std::to_string(::getpid());
  MemfdBuffer memfd;
  NamedSegment segment;
  std::vector<char> source;
  if (mode == Mode::kFd) {
    memfd = MemfdBuffer::create(bytes);
    fill_pattern(memfd.data(), bytes, 1);
  } else if (mode == Mode::kNamed) {
    segment = NamedSegment::create(name, bytes, 1);
    fill_pattern(segment.data(), bytes, 1);
  } else {
    source.resize(bytes);
    fill_pattern(source.data(), bytes, 1);
  }
  Request r;
  r.bytes = bytes;
  std::snprintf(r.name, sizeof(r.name), "%s", name.c_str());
  for (auto _ : state) {
    if (mode == Mode::kNamed) segment.add_users(1);  // the consumer's reference, dropped by it
    mine.send(&r, sizeof(r), kTimeoutS, mode == Mode::kFd ? memfd.fd() : -1);
    if (mode == Mode::kCopy) mine.send(source.data(), bytes, kTimeoutS);
    char ack = 0;
    mine.receive(&ack, 1, kTimeoutS);
  }
  Request stop;
  mine.send(&stop, sizeof(stop), kTimeoutS);
  segment.release();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

void BM_HandoffFd(benchmark::State& state) { run_handoff(state, Mode::kFd); }
void BM_HandoffNamed(benchmark::State& state) { run_handoff(state, Mode::kNamed); }
void BM_HandoffPipeCopy(benchmark::State& state) { run_handoff(state, Mode::kCopy); }

void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<char> from(bytes), to(bytes);
  fill_pattern(from.data(), bytes, 1);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

#define SHAREBENCH_IPC_SIZES RangeMultiplier(16)->Range(4 << 10, 64 << 20)
BENCHMARK(BM_HandoffFd)->SHAREBENCH_IPC_SIZES->UseRealTime();
BENCHMARK(BM_HandoffNamed)->SHAREBENCH_IPC_SIZES->UseRealTime();
BENCHMARK(BM_HandoffPipeCopy)->SHAREBENCH_IPC_SIZES->UseRealTime();
BENCHMARK(BM_Memcpy)->SHAREBENCH_IPC_SIZES;

}  // namespace
}  // namespace sharebench::bench
