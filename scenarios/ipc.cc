// Scenario `ipc`: rank 0 produces tensors and hands each one to every other
// rank (the consumers), over a Unix socket; message sizes sweep 4 KiB to 64 MiB.
//   fd-reuse, fd-fresh        an anonymous memfd whose fd crosses the socket as SCM_RIGHTS
//                             (torch's `file_descriptor` strategy)
//   named-reuse, named-fresh  a named segment in /dev/shm, passed by name and unlinked by its last
//                             user (torch's `file_system` strategy)
//   cuda                      a device buffer and an interprocess event, passed as CUDA IPC
//                             handles; skipped where there is no GPU, refused under fork
//   cuda-hold-1024            cuda, with each consumer holding its last 1 024 messages open at
//                             once (more than PyTorch's 1 000 CUDA IPC events in flight)
//   cuda-early-reuse,         the two known bugs below over CUDA IPC: the device buffer rewritten
//   cuda-producer-exits       while held, the exporting process gone while its memory is mapped
//   early-reuse               (known bug) the producer reuses a buffer before every consumer has
//                             released it, so a consumer reads the next message's bytes
//   producer-exits            (known bug) the producer returns while consumers still expect and
//                             hold its tensors (a tensor "consumed after the provider exited")
// `-reuse` keeps a pool of buffers that consumers hand back (the PyTorch notes' advice); `-fresh`
// makes a new buffer for every message. Either way at most kWindow messages are in flight.
//
// The lifetime protocol: every consumer sends a release for every message; the producer keeps a
// buffer alive (and unchanged) until each consumer has released it, drains every release before
// it sends end-of-stream, and only then exits. A consumer that loses its producer reports a
// named error (ProducerExited, or ProducerTimeout after half the hang timeout) and never hangs.
// Checks: message-checksums (each consumer checksums every message), buffer-lifetime (no buffer
// rewritten or freed while held; every named segment found), producer-lifetime (every consumer
// saw end-of-stream). Metrics: messages/s and GB/s delivered, handoff latency by size (from the
// later of the producer's send and the consumer's readiness to the consumer holding the mapped
// tensor, so queueing behind a slow consumer is not counted; the "handoff-latency" series).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/statistics.h"
#include "harness/ipc/cuda_ipc.h"
#include "harness/ipc/pattern.h"
#include "harness/ipc/release_protocol.h"
#include "harness/ipc/shared_buffer.h"
#include "harness/ipc/unix_socket.h"
#include "harness/proc/leak_check.h"
#include "harness/scenario/scenario.h"
#include "harness/sync/process_barrier.h"
#include "harness/util/clock.h"
#include "scenarios/segments_reclaimed.h"
#include "torch_support/torch_runtime.h"

#include <torch/torch.h>

namespace sharebench {

namespace {
constexpr const char* kState = "ipc.state";
constexpr std::array<std::size_t, 8> kSizes = {4u << 10, 16u << 10, 64u << 10, 256u << 10,
                                                1u << 20,  4u << 20,  16u << 20, 64u << 20};
constexpr std::size_t kBytesPerSize = 128u << 20;  // caps the messages of the large sizes (2 of 64 MiB)
constexpr int kWindow = 4;                         // messages in flight per size
constexpr int kProducerExitsAfter = 2;             // messages the planted producer-exits sends
constexpr int kHeldOpen = 1024;  // cuda-hold-1024: the messages each consumer keeps mapped at once

enum class Transport { kFd, kNamed, kCuda };

struct IpcState {
  explicit IpcState(int procs) : rendezvous(static_cast<std::uint32_t>(procs)) {}
  char socket_name[108] = {};  // a path in the repetition's private directory
  char segment_prefix[96] = {};     // named segments: "<run prefix>ipc-<nonce>", see leak_check.h
  ProcessBarrier rendezvous;        // orders the planted early-reuse bug; guards no data
  std::atomic<std::int64_t> reused_while_held{0};  // buffers the producer rewrote before release
};

// kFlush: the producer waits for every buffer of a size back; a consumer that holds messages
// open (cuda-hold-1024) releases them all on it.
enum class Kind : std::uint32_t { kData = 1, kEnd = 2, kFlush = 3 };

struct Message {
  Kind kind = Kind::kData;
  std::uint32_t buffer = 0;   // the producer's slot, echoed in the release
  std::uint64_t id = 0;
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
  std::int64_t sent_ns = 0;   // CLOCK_MONOTONIC at the send: one clock for every process
  char segment[80] = {};      // named transport
  CudaIpcHandles cuda{};      // cuda transport
};

struct Release {
  std::uint64_t id = 0;
  std::uint32_t buffer = 0;
  std::uint32_t rank = 0;
};

std::int64_t messages_for(std::size_t bytes, std::int64_t steps) {
  const std::int64_t even = std::max<std::int64_t>(1, steps / static_cast<std::int64_t>(kSizes.size()));
  const auto cap = static_cast<std::int64_t>(std::max<std::size_t>(1, kBytesPerSize / bytes));
  return std::min(even, cap);
}

std::string size_label(std::size_t bytes) {
  return bytes >= (1u << 20) ? fmt::format("{}MiB", bytes >> 20) : fmt::format("{}KiB", bytes >> 10);
}

Transport transport_of(const std::string& variant) {
  if (variant.rfind("named", 0) == 0) return Transport::kNamed;
  if (variant.rfind("cuda", 0) == 0) return Transport::kCuda;
  return Transport::kFd;
}

// The planted bugs hold over any transport: `early-reuse` and `cuda-early-reuse` alike.
bool variant_ends_with(const std::string& variant, const std::string& suffix) {
  return variant.size() >= suffix.size() && variant.compare(variant.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One buffer on the producer's side, whatever the transport.
struct OutgoingBuffer {
  MemfdBuffer memfd;
  NamedSegment named;
  std::unique_ptr<CudaProducerBuffer> cuda;
  int held = 0;  // consumers that have not released it yet

  static OutgoingBuffer make(Transport t, std::size_t bytes, const std::string& segment_name) {
    OutgoingBuffer b;
    if (t == Transport::kFd) b.memfd = MemfdBuffer::create(bytes);
    if (t == Transport::kNamed) b.named = NamedSegment::create(segment_name, bytes, /*users=*/1);
    if (t == Transport::kCuda) b.cuda = std::make_unique<CudaProducerBuffer>(bytes);
    return b;
  }
  std::uint64_t fill(std::size_t bytes, std::uint64_t seed) {
    if (cuda) return cuda->fill(seed);
    return fill_pattern(named.data() ? named.data() : memfd.data(), bytes, seed);
  }
  // The producer's own reference: a named segment is unlinked here if it is the last user.
  void destroy() {
    named.release();
    memfd = MemfdBuffer();
    cuda.reset();
  }
};

class IpcScenario : public Scenario {
 public:
  explicit IpcScenario(const CellConfig& c) : cell_(c), transport_(transport_of(c.variant)) {}

  std::optional<std::string> unavailable() const override {
    if (transport_ != Transport::kCuda) return std::nullopt;
    if (cell_.start == StartMethod::kFork) {
      return std::string("CUDA IPC is refused under fork: a forked child cannot use CUDA (use spawn or forkserver)");
    }
    if (cell_.start == StartMethod::kThread) {
      return std::string("CUDA IPC needs separate processes: a process cannot open its own IPC handles");
    }
    return cuda_ipc_unavailable();
  }

  void prepare_worker_process() override {
    if (transport_ == Transport::kCuda) initialise_cuda_in_this_process();
  }

  void setup(SetupContext& ctx) override {
    static std::atomic<int> cells{0};
    auto* state = ctx.arena().create<IpcState>(kState, cell_.procs);
    const std::string base = fmt::format("{}ipc-{}", run_shm_prefix(), cells.fetch_add(1));
    const std::string socket = ctx.private_path("ipc.sock");
    if (socket.size() >= sizeof(state->socket_name)) {
      throw std::runtime_error(fmt::format("the socket path {} is too long for a Unix socket: set a shorter TMPDIR", socket));
    }
    std::snprintf(state->socket_name, sizeof(state->socket_name), "%s", socket.c_str());
    std::snprintf(state->segment_prefix, sizeof(state->segment_prefix), "%s", base.c_str());
  }

  void work(WorkerContext& ctx) override {
    auto* state = ctx.arena().lookup<IpcState>(kState);
    if (ctx.rank() == 0) {
      produce(ctx, *state);
    } else {
      consume(ctx, *state);
    }
  }

  void check(CheckContext& ctx) override {
    const auto& workers = ctx.workers();
    auto* state = ctx.arena().lookup<IpcState>(kState);
    double corrupt = 0, lost = 0, received = 0, bytes = 0, missing = 0, slowest_s = 0;
    std::vector<std::string> lost_messages;
    for (const auto& wv : workers) {
      if (wv.rank == 0) continue;
      corrupt += wv.metric("corrupt_messages");
      missing += wv.metric("segments_missing");
      received += wv.metric("messages_received");
      bytes += wv.metric("bytes_received");
      slowest_s = std::max(slowest_s, wv.run_s);
      if (wv.metric("producer_lost", 0) > 0) {
        ++lost;
        lost_messages.push_back(fmt::format("consumer {}: {}", wv.rank, wv.slot->error[0] ? wv.slot->error : "lost its producer"));
      }
    }
    const bool finished = ctx.all_completed();
    auto count_check = [&](std::string name, double bad, std::string ok, std::string failed) {
      const Verdict v = bad > 0 ? Verdict::kFail : finished ? Verdict::kPass : Verdict::kUnknown;
      ctx.check(std::move(name), v, bad, bad > 0 ? failed : finished ? ok : "a worker did not finish");
    };
    count_check(checks::kMessageChecksums, corrupt,
                fmt::format("all {:.0f} messages matched their checksums at every consumer", received),
                fmt::format("{:.0f} of {:.0f} messages arrived with a wrong checksum", corrupt, received));
    const double reused = static_cast<double>(state->reused_while_held.load());
    count_check(checks::kBufferLifetime, reused + missing, "no buffer was rewritten or freed while a consumer held it",
                fmt::format("{:.0f} buffers rewritten while a consumer still held them; {:.0f} named segments gone "
                            "before a consumer opened them", reused, missing));
    if (lost > 0) {
      ctx.check(checks::kProducerLifetime, Verdict::kFail, lost, fmt::format("{}", fmt::join(lost_messages, "; ")));
    } else {
      count_check(checks::kProducerLifetime, 0, "the producer outlived every consumer's reference and ended the stream", "");
    }
    if (transport_ == Transport::kNamed) {
      check_segments_reclaimed(ctx, std::string(state->segment_prefix) + "-", finished);
    }
    if (slowest_s > 0) {
      ctx.metric("messages_per_s", received / slowest_s);
      ctx.metric("gb_per_s", bytes / slowest_s / 1e9);
    }
    // Handoff latency by size: per size, the slowest consumer's median.
    Series latency{"handoff-latency", -1, {}};
    for (std::size_t bytes_i : kSizes) {
      double worst = -1;
      for (const auto& wv : workers) {
        if (wv.rank == 0) continue;
        for (int i = 0; i < wv.slot->point_count; ++i) {
          if (wv.slot->points[i].step == static_cast<double>(bytes_i)) worst = std::max(worst, wv.slot->points[i].value);
        }
      }
      if (worst < 0) continue;
      latency.points.push_back(SeriesPoint{static_cast<double>(bytes_i), 0, worst});
      ctx.metric(fmt::format("handoff_p50_us_{}", size_label(bytes_i)), worst * 1e6);
    }
    if (latency.points.size() == kSizes.size() && latency.points.front().value > 0) {
      ctx.metric("handoff_64MiB_over_4KiB", latency.points.back().value / latency.points.front().value);
    }
    if (!latency.points.empty()) ctx.series(std::move(latency));
  }

 private:
  double io_timeout_s() const { return std::max(0.5, cell_.hang_timeout_s / 2); }
  bool holds_open() const { return cell_.variant == "cuda-hold-1024"; }

  // ---- producer (rank 0) ------------------------------------------------------------------------
  void produce(WorkerContext& ctx, IpcState& state) {
    const int consumers = ctx.procs() - 1;
    std::vector<UnixSocket> to = accept_ranked_peers(state.socket_name, consumers, cell_.hang_timeout_s, io_timeout_s());
    const bool early_reuse = variant_ends_with(cell_.variant, "early-reuse");
    const bool exits_early = variant_ends_with(cell_.variant, "producer-exits");
    const bool fresh = cell_.variant.find("fresh") != std::string::npos;
    const bool hold = holds_open();
    const int window = early_reuse ? 1 : hold ? kHeldOpen + kWindow : kWindow;
    std::uint64_t id = 0;

    ctx.wait_for_start();
    for (std::size_t size_index = 0; size_index < kSizes.size(); ++size_index) {
      const std::size_t bytes = kSizes[size_index];
      std::map<std::uint32_t, OutgoingBuffer> buffers;  // slot -> buffer
      std::uint32_t next_slot = 0;
      std::int64_t count = messages_for(bytes, cell_.workload.steps);
      if (hold && size_index == 0) count = std::max<std::int64_t>(count, kHeldOpen + 2 * kWindow);
      for (std::int64_t m = 0; m < count; ++m, ++id) {
        std::uint32_t slot = 0;
        if (fresh) {
          while (static_cast<int>(buffers.size()) >= window) take_release(to, buffers, fresh);
          slot = next_slot++;
          buffers.emplace(slot, OutgoingBuffer::make(transport_, bytes, segment_name(state, size_index, slot)));
        } else {
          slot = static_cast<std::uint32_t>(m % window);
          if (!buffers.count(slot)) {
            buffers.emplace(slot, OutgoingBuffer::make(transport_, bytes, segment_name(state, size_index, slot)));
          }
          // The lifetime protocol: wait for every consumer to hand this buffer back. The planted
          // early-reuse bug skips the wait and rewrites a buffer that is still held.
          while (buffers.at(slot).held > 0) {
            if (early_reuse) {
              state.reused_while_held.fetch_add(1);
              break;
            }
            take_release(to, buffers, fresh);
          }
        }
        OutgoingBuffer& b = buffers.at(slot);
        Message msg;
        msg.buffer = slot;
        msg.id = id;
        msg.bytes = bytes;
        msg.checksum = b.fill(bytes, cell_.workload.seed * 1000003 + id);
        if (early_reuse && id == 1) state.rendezvous.wait();  // consumers now check message 0
        if (transport_ == Transport::kNamed) {
          std::snprintf(msg.segment, sizeof(msg.segment), "%s", b.named.name().c_str());
          b.named.add_users(consumers);
        }
        if (transport_ == Transport::kCuda) msg.cuda = b.cuda->handles();
        msg.sent_ns = monotonic_ns();
        for (auto& s : to) s.send(&msg, sizeof(msg), io_timeout_s(), transport_ == Transport::kFd ? b.memfd.fd() : -1);
        b.held += consumers;
        ctx.beat(static_cast<std::int64_t>(id + 1));
        if (exits_early && id + 1 == kProducerExitsAfter) {
          // The planted bug: return while consumers hold these tensors and wait for more. The
          // sockets close as `to` goes out of scope, as they would when a process exits.
          ctx.finish();
          for (auto& [slot_id, buf] : buffers) buf.named.release();
          return;
        }
      }
      if (hold) {
        Message flush;
        flush.kind = Kind::kFlush;
        for (auto& s : to) s.send(&flush, sizeof(flush), io_timeout_s());
      }
      while (std::any_of(buffers.begin(), buffers.end(), [](auto& kv) { return kv.second.held > 0; })) {
        take_release(to, buffers, fresh);
      }
      for (auto& [slot_id, buf] : buffers) buf.destroy();
    }
    ctx.finish();
    Message end;
    end.kind = Kind::kEnd;
    for (auto& s : to) s.send(&end, sizeof(end), io_timeout_s());
    ctx.metric("messages_sent", static_cast<double>(id));
  }

  std::string segment_name(const IpcState& state, std::size_t size_index, std::uint32_t slot) const {
    return fmt::format("{}-{}-{}", state.segment_prefix, size_index, slot);
  }

  // Takes one release (harness/ipc/release_protocol.h); a fresh buffer dies with its last holder.
  void take_release(std::vector<UnixSocket>& from, std::map<std::uint32_t, OutgoingBuffer>& buffers, bool fresh) {
    sharebench::take_release<Release>(from, buffers, io_timeout_s(), "buffer", [](const Release& r) { return r.buffer; },
                                      [&](auto it) {
                                        if (!fresh) return;
                                        it->second.destroy();
                                        buffers.erase(it);
                                      });
  }

  // ---- consumers (ranks 1..) --------------------------------------------------------------------
  void consume(WorkerContext& ctx, IpcState& state) {
    UnixSocket producer = connect_as_rank(state.socket_name, ctx.rank(), cell_.hang_timeout_s, io_timeout_s());
    std::map<std::size_t, std::vector<double>> latency_s;
    std::int64_t received = 0, corrupt = 0, missing = 0;
    double bytes_received = 0;
    std::int64_t last_ns = 0;
    struct Held {
      std::unique_ptr<CudaConsumerView> view;
      Release release;
    };
    std::deque<Held> held;  // cuda-hold-1024 only
    std::int64_t max_held = 0;
    auto release_oldest = [&] {
      held.front().view.reset();  // unmapped before the producer may reuse the buffer
      producer.send(&held.front().release, sizeof(Release), io_timeout_s());
      held.pop_front();
    };

    ctx.wait_for_start();
    last_ns = monotonic_ns();
    try {
      for (;;) {
        Message msg;
        int fd = -1;
        const std::int64_t ready_ns = monotonic_ns();  // this consumer is idle from here
        producer.receive(&msg, sizeof(msg), io_timeout_s(), &fd);
        // Handoff starts at the later of the send and this consumer's readiness: a message that
        // queued behind the previous one's checksum is not charged for the queueing.
        msg.sent_ns = std::max(msg.sent_ns, ready_ns);
        if (msg.kind == Kind::kEnd) break;
        if (msg.kind == Kind::kFlush) {
          while (!held.empty()) release_oldest();
          continue;
        }
        const std::size_t bytes = msg.bytes;
        std::uint64_t sum = 0;
        std::optional<double> handoff_s;
        if (transport_ == Transport::kFd) {
          Mapping map = Mapping::of_fd(fd, bytes);
          ::close(fd);
          const torch::Tensor tensor = tensor_view(map.data(), bytes);
          handoff_s = seconds_since(msg.sent_ns);
          sum = check_message(state, msg, tensor);
        } else if (transport_ == Transport::kNamed) {
          try {
            NamedSegment segment = NamedSegment::open(msg.segment, bytes);
            const torch::Tensor tensor = tensor_view(segment.data(), bytes);
            handoff_s = seconds_since(msg.sent_ns);
            sum = check_message(state, msg, tensor);
            segment.release();
          } catch (const std::system_error&) {
            ++missing;  // its last user unlinked it before this consumer could open it
            sum = msg.checksum;
          }
        } else {
          std::unique_ptr<CudaConsumerView> view;
          try {
            view = std::make_unique<CudaConsumerView>(msg.cuda, bytes);
          } catch (const CudaIpcOpenFailed& e) {
            throw_if_producer_gone(producer, e);
            throw;
          }
          handoff_s = seconds_since(msg.sent_ns);
          if (variant_ends_with(cell_.variant, "early-reuse") && msg.id == 0) state.rendezvous.wait();
          sum = view->checksum();
          if (holds_open()) {
            // Keep it mapped (and its event open) as a consumer holding tensors would; release
            // the oldest once more than kHeldOpen are held.
            held.push_back({std::move(view), Release{msg.id, msg.buffer, static_cast<std::uint32_t>(ctx.rank())}});
            max_held = std::max(max_held, static_cast<std::int64_t>(held.size()));
            if (static_cast<int>(held.size()) > kHeldOpen) release_oldest();
          }
        }
        if (sum != msg.checksum) ++corrupt;
        if (handoff_s) latency_s[bytes].push_back(*handoff_s);
        ++received;
        bytes_received += static_cast<double>(bytes);
        last_ns = monotonic_ns();
        if (!holds_open()) {
          Release release{msg.id, msg.buffer, static_cast<std::uint32_t>(ctx.rank())};
          producer.send(&release, sizeof(release), io_timeout_s());
        }
        ctx.beat(received);
      }
    } catch (const IpcError& e) {
      if (e.kind() == IpcError::Kind::kSystem) throw;
      // The named error a user must see instead of a hang.
      const char* name = e.kind() == IpcError::Kind::kPeerClosed ? "ProducerExited" : "ProducerTimeout";
      ctx.metric("producer_lost", 1);
      ctx.metric("producer_lost_after_s", seconds_since(last_ns));
      const std::string text = fmt::format("{}: {} after {} messages (noticed {:.3f} s after the last one)", name,
                                           e.what(), received, seconds_since(last_ns));
      std::snprintf(ctx.slot().error, WorkerSlot::kMaxError, "%s", text.c_str());
    }
    ctx.finish();
    for (const auto& [bytes, samples] : latency_s) ctx.record_point(static_cast<double>(bytes), median(samples));
    if (holds_open()) ctx.metric("max_held_open", static_cast<double>(max_held));
    ctx.metric("messages_received", static_cast<double>(received));
    ctx.metric("bytes_received", bytes_received);
    ctx.metric("corrupt_messages", static_cast<double>(corrupt));
    ctx.metric("segments_missing", static_cast<double>(missing));
  }

  // A handle that cannot be mapped: when the producer's end of the stream is closed too, it is
  // the producer that exited (CUDA frees an exporter's memory with the process, and the handle
  // is invalid from then on), reported as ProducerExited with CUDA's words; else nothing is thrown.
  void throw_if_producer_gone(UnixSocket& producer, const CudaIpcOpenFailed& open_failed) const {
    try {
      for (;;) {
        Message rest;
        producer.receive(&rest, sizeof(rest), io_timeout_s());  // what the producer sent before it went
        if (rest.kind == Kind::kEnd) return;
      }
    } catch (const IpcError& e) {
      if (e.kind() != IpcError::Kind::kPeerClosed) return;
      throw IpcError(IpcError::Kind::kPeerClosed,
                     fmt::format("{}; a handle it sent could not be mapped ({})", e.what(), open_failed.what()));
    }
  }

  static double seconds_since(std::int64_t ns) { return static_cast<double>(monotonic_ns() - ns) * 1e-9; }

  // The received bytes as a tensor, without a copy: what a consumer would compute on.
  static torch::Tensor tensor_view(void* data, std::size_t bytes) {
    return torch::from_blob(data, {static_cast<std::int64_t>(bytes / sizeof(float))}, torch::kFloat32);
  }

  std::uint64_t check_message(IpcState& state, const Message& msg, const torch::Tensor& tensor) const {
    // Planted early-reuse: hold message 0 until the producer has rewritten its buffer.
    if (variant_ends_with(cell_.variant, "early-reuse") && msg.id == 0) state.rendezvous.wait();
    return checksum(tensor.data_ptr(), msg.bytes);
  }

  CellConfig cell_;
  Transport transport_;
};
}  // namespace

SHAREBENCH_SCENARIO(IpcScenario, "ipc")
    ->Describe("a producer hands tensors of 4 KiB to 64 MiB to consumers over a Unix socket")
    ->Kind(ScenarioKind::kMessages)
    ->OptOut(checks::kMemory, "the producer's buffer pool grows with the message size, 4 KiB to 64 MiB, by design")
    ->MinProcs(2)
    ->Variant("fd-reuse", "memfd passed as an fd (SCM_RIGHTS); consumers hand buffers back for reuse")
    ->Variant("fd-fresh", "memfd passed as an fd; a fresh buffer for every message")
    ->Variant("named-reuse", "named /dev/shm segment passed by name; buffers reused")
    ->Variant("named-fresh", "named /dev/shm segment, a fresh one per message, unlinked by its last user")
    ->Variant("cuda", "CUDA IPC memory and event handles (needs a GPU; refused under fork)")
    ->NoRandomFaults("a GPU cell is skipped on most machines, which would leave soak's planned fault uninjected; "
                "run it with `run --scenario ipc/cuda --fault ...`")
    ->Variant("cuda-hold-1024", "CUDA IPC with each consumer holding 1 024 messages mapped at once (needs a GPU)")
    ->NoRandomFaults("a GPU cell is skipped on most machines, which would leave soak's planned fault uninjected; "
                "run it with `run --scenario ipc/cuda-hold-1024 --fault ...`")
    ->KnownBug("early-reuse", "the producer rewrites a buffer before every consumer released it",
               Expectation{{checks::kMessageChecksums, checks::kBufferLifetime}, {}})
    ->KnownBug("producer-exits", "the producer exits while consumers hold its tensors and wait for more",
               Expectation{{checks::kProducerLifetime}, {}})
    ->KnownBug("cuda-early-reuse", "early-reuse over CUDA IPC: the device buffer rewritten while a consumer holds it "
               "(needs a GPU)", Expectation{{checks::kMessageChecksums, checks::kBufferLifetime}, {}})
    ->KnownBug("cuda-producer-exits", "producer-exits over CUDA IPC: the exporting process returns while its "
               "memory is mapped (needs a GPU)", Expectation{{checks::kProducerLifetime}, {}});

}  // namespace sharebench
