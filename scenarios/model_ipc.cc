// Scenario `model-ipc` (the ipc scenario's producer/consumer, with the model as the message): rank 0 owns
// the model, updates it version after version and publishes every version's parameters to the
// other ranks (the consumers) by IPC, as an A3C learner hands weights to its actors or a trainer to
// its inference workers. Any `--model` travels: the MLP, the built-ins, a TorchScript file.
//   fd       each version in a fresh anonymous memfd whose fd crosses a Unix socket (SCM_RIGHTS;
//            torch's `file_descriptor` strategy)
//   named    each version in a fresh named /dev/shm segment passed by name, unlinked by its last
//            user (torch's `file_system` strategy)
//   copy-on-receive  (known bug) a consumer copies what it received into its own memory "to be
//            safe": every output is still right, but each consumer now holds a private model the
//            size of the shared one, and the next version costs a full copy again
// The parameters of a version lie in one buffer, each 64-byte aligned, in the model's parameter
// order; a consumer binds its own model of the same architecture to views of that buffer (no copy)
// and runs a probe batch through it. The producer keeps a version's buffer until every consumer has
// released it; at most kWindow versions are in flight. A consumer keeps the last version it bound
// until work() returns, so the `model-shared` check sees where its model lives.
// Checks: probe-identical (every consumer's probe output on every version is bit-identical to the
// producer's on that version), versions-delivered (every consumer bound every version, in order),
// model-shared (the harness's: a consumer's bound model is still in shared memory as work()
// returns), segments-reclaimed (named). Metrics: versions/s and GB/s delivered, the handoff latency
// (send to the consumer's model bound to the new version) and the producer's publish time (a
// fresh buffer, the copy and the update; not its probe).
// Versions per cell: --steps, at most 250 and 512 MiB's worth of the model, at least 4.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "harness/util/statistics.h"
#include "harness/checkers/model_sharing.h"
#include "harness/checkers/replica_agreement.h"
#include "harness/ipc/shared_buffer.h"
#include "harness/ipc/release_protocol.h"
#include "harness/ipc/unix_socket.h"
#include "harness/proc/leak_check.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
#include "scenarios/segments_reclaimed.h"
#include "workload/model_zoo.h"
#include "workload/shared_model.h"

#include <torch/torch.h>

namespace sharebench {

namespace {
constexpr const char* kState = "model-ipc.state";
constexpr int kWindow = 4;                             // versions in flight
constexpr std::size_t kBytesPerCell = 512u << 20;       // caps the versions of a large model
constexpr std::int64_t kMinVersions = 4;
constexpr std::int64_t kMaxVersions = 250;             // enough for a median; --steps asks for fewer
constexpr std::int64_t kProbeRows = 8;               // a consumer's inference per version
constexpr std::size_t kAlign = 64;

struct ModelIpcState {
  char socket_name[108] = {};   // a path in the repetition's private directory
  char segment_prefix[96] = {};  // named segments: "<run prefix>model-ipc-<nonce>", see leak_check.h
};

enum class Kind : std::uint32_t { kVersion = 1, kEnd = 2 };

struct Message {
  Kind kind = Kind::kVersion;
  std::uint64_t version = 0;
  std::uint64_t bytes = 0;
  std::uint64_t probe_checksum = 0;  // the producer's probe output on this version
  std::int64_t sent_ns = 0;          // CLOCK_MONOTONIC at the send: one clock for every process
  char segment[80] = {};             // named transport
};

struct Release {
  std::uint64_t version = 0;
  std::uint32_t rank = 0;
};

// Where each parameter lies in a version's buffer.
struct ParameterLayout {
  std::vector<std::size_t> offsets;
  std::size_t bytes = 0;
};

ParameterLayout layout_of(const std::vector<torch::Tensor>& params) {
  ParameterLayout layout;
  for (const auto& p : params) {
    layout.bytes = (layout.bytes + kAlign - 1) / kAlign * kAlign;
    layout.offsets.push_back(layout.bytes);
    layout.bytes += static_cast<std::size_t>(p.numel()) * p.element_size();
  }
  layout.bytes = std::max<std::size_t>(layout.bytes, 1);
  return layout;
}

// Rebinds every parameter to its view of the buffer at `base`: no copy.
void bind_to_buffer(void* base, const ParameterLayout& layout, const std::vector<torch::Tensor>& params) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    torch::Tensor p = params[i];  // shares the parameter's TensorImpl: set_data rebinds the model's own
    p.set_data(torch::from_blob(static_cast<char*>(base) + layout.offsets[i], p.sizes(),
                                torch::TensorOptions().dtype(p.scalar_type())));
  }
}

std::uint64_t output_checksum(const torch::Tensor& out) {
  const torch::Tensor c = out.detach().contiguous();
  return checksum_words(c.data_ptr(), static_cast<std::size_t>(c.numel()) * c.element_size());
}

bool named_transport(const std::string& variant) { return variant == "named"; }

// One version's buffer on the producer's side.
struct Outgoing {
  MemfdBuffer memfd;
  NamedSegment named;
  int held = 0;  // consumers that have not released it yet
  void* data() const { return named.data() ? named.data() : memfd.data(); }
};

class ModelIpcScenario : public Scenario {
 public:
  explicit ModelIpcScenario(const CellConfig& c) : cell_(c), named_(named_transport(c.variant)) {}

  void setup(SetupContext& ctx) override {
    static std::atomic<int> cells{0};
    publish_dataset(ctx.arena(), make_dataset(cell_.workload));
    auto* state = ctx.arena().create<ModelIpcState>(kState);
    const std::string socket = ctx.private_path("model-ipc.sock");
    if (socket.size() >= sizeof(state->socket_name)) {
      throw std::runtime_error(fmt::format("the socket path {} is too long for a Unix socket: set a shorter TMPDIR", socket));
    }
    std::snprintf(state->socket_name, sizeof(state->socket_name), "%s", socket.c_str());
    std::snprintf(state->segment_prefix, sizeof(state->segment_prefix), "%smodel-ipc-%d", run_shm_prefix().c_str(),
                  cells.fetch_add(1));
  }

  void work(WorkerContext& ctx) override {
    auto* state = ctx.arena().lookup<ModelIpcState>(kState);
    const Dataset data = bind_dataset(ctx.arena(), cell_.workload);
    const torch::Tensor probe = data.test_x.narrow(0, 0, std::min<std::int64_t>(kProbeRows, data.test_x.size(0)));
    model_ = make_model(cell_.workload);
    if (ctx.rank() == 0) {
      produce(ctx, *state, probe);
    } else {
      consume(ctx, *state, probe);
    }
  }

  void check(CheckContext& ctx) override {
    auto* state = ctx.arena().lookup<ModelIpcState>(kState);
    const auto model = make_model(cell_.workload);
    record_model_size(ctx, *model);
    const bool finished = ctx.all_completed();
    double sent = 0, mismatched = 0, slowest_s = 0, bytes = 0, received_total = 0;
    std::vector<std::string> short_of;
    std::vector<double> handoffs;
    for (const auto& wv : ctx.workers()) {
      if (wv.rank == 0) {
        sent = wv.metric("versions_sent");
        if (wv.metric("publish_p50_us", -1) >= 0) ctx.metric("publish_p50_us", wv.metric("publish_p50_us"));
        continue;
      }
      mismatched += wv.metric("versions_mismatched");
      received_total += wv.metric("versions_received");
      bytes += wv.metric("bytes_received");
      slowest_s = std::max(slowest_s, wv.run_s);
      if (wv.metric("handoff_p50_us", -1) >= 0) handoffs.push_back(wv.metric("handoff_p50_us"));
    }
    for (const auto& wv : ctx.workers()) {
      if (wv.rank == 0) continue;
      const double got = wv.metric("versions_received");
      const double out_of_order = wv.metric("versions_out_of_order");
      if (got != sent || out_of_order > 0) {
        short_of.push_back(fmt::format("consumer {} bound {:.0f} of {:.0f} ({:.0f} out of order)", wv.rank, got, sent,
                                       out_of_order));
      }
    }
    if (!finished) {
      ctx.check(checks::kProbeIdentical, mismatched > 0 ? Verdict::kFail : Verdict::kUnknown, mismatched,
                mismatched > 0 ? fmt::format("{:.0f} received versions gave a probe output unlike the producer's", mismatched)
                               : std::string("a worker did not finish"));
      ctx.check(checks::kVersionsDelivered, Verdict::kUnknown, std::nullopt, "a worker did not finish");
    } else {
      ctx.check(checks::kProbeIdentical, mismatched > 0 ? Verdict::kFail : Verdict::kPass, mismatched,
                mismatched > 0
                    ? fmt::format("{:.0f} of {:.0f} received versions gave a probe output unlike the producer's "
                                  "on the same version", mismatched, received_total)
                    : fmt::format("every consumer's probe output on each of the {:.0f} versions is bit-identical to "
                                  "the producer's", sent));
      ctx.check(checks::kVersionsDelivered, short_of.empty() ? Verdict::kPass : Verdict::kFail,
                static_cast<double>(short_of.size()),
                short_of.empty() ? fmt::format("every consumer bound all {:.0f} versions, in order", sent)
                                 : fmt::format("{}", fmt::join(short_of, "; ")));
    }
    if (named_) check_segments_reclaimed(ctx, std::string(state->segment_prefix) + "-", finished);
    if (slowest_s > 0) {
      ctx.metric("versions_per_s", sent / slowest_s);
      ctx.metric("messages_per_s", sent / slowest_s);  // a version is the message here
      ctx.metric("gb_per_s", bytes / slowest_s / 1e9);
    }
    if (!handoffs.empty()) ctx.metric("handoff_p50_us", *std::max_element(handoffs.begin(), handoffs.end()));
  }

 private:
  double io_timeout_s() const { return std::max(0.5, cell_.hang_timeout_s / 2); }

  std::int64_t versions(std::size_t bytes) const {
    const auto cap = static_cast<std::int64_t>(kBytesPerCell / std::max<std::size_t>(bytes, 1));
    return std::max<std::int64_t>(kMinVersions, std::min({cell_.workload.steps, kMaxVersions, cap}));
  }

  // ---- producer (rank 0) ------------------------------------------------------------------------
  void produce(WorkerContext& ctx, ModelIpcState& state, const torch::Tensor& probe) {
    const int consumers = ctx.procs() - 1;
    const std::vector<torch::Tensor> params = model_->parameters();
    const ParameterLayout layout = layout_of(params);
    std::vector<UnixSocket> to = accept_ranked_peers(state.socket_name, consumers, cell_.hang_timeout_s, io_timeout_s());
    std::map<std::uint64_t, Outgoing> live;  // version -> its buffer, until every consumer released it
    std::vector<double> publish_us;
    const std::int64_t count = versions(layout.bytes);

    ctx.wait_for_start();
    for (std::int64_t v = 0; v < count; ++v) {
      while (static_cast<int>(live.size()) >= kWindow) take_release(to, live);
      const std::int64_t t0 = monotonic_ns();
      Outgoing& out = live[static_cast<std::uint64_t>(v)];
      if (named_) {
        out.named = NamedSegment::create(fmt::format("{}-{}", state.segment_prefix, v), layout.bytes, /*users=*/1);
      } else {
        out.memfd = MemfdBuffer::create(layout.bytes);
      }
      {
        // The next version: the current parameters copied into the new buffer, the model bound to
        // it, every parameter then changed in place. The producer computes on the buffer it sends,
        // so its probe and the consumers' run on identically laid-out bytes.
        torch::NoGradGuard no_grad;
        for (std::size_t i = 0; i < params.size(); ++i) {
          torch::from_blob(static_cast<char*>(out.data()) + layout.offsets[i], params[i].sizes(),
                           torch::TensorOptions().dtype(params[i].scalar_type()))
              .copy_(params[i]);
        }
        bind_to_buffer(out.data(), layout, params);
        if (v > 0) {
          for (const auto& p : params) {
            if (p.is_floating_point()) p.mul_(0.999).add_(1e-3);
          }
        }
      }
      publish_us.push_back(static_cast<double>(monotonic_ns() - t0) * 1e-3);  // the probe is not publishing
      Message msg;
      msg.version = static_cast<std::uint64_t>(v);
      msg.bytes = layout.bytes;
      {
        torch::NoGradGuard no_grad;
        msg.probe_checksum = output_checksum(model_->forward(probe));
      }
      if (named_) {
        std::snprintf(msg.segment, sizeof(msg.segment), "%s", out.named.name().c_str());
        out.named.add_users(consumers);
      }
      msg.sent_ns = monotonic_ns();
      for (auto& s : to) s.send(&msg, sizeof(msg), io_timeout_s(), named_ ? -1 : out.memfd.fd());
      out.held = consumers;
      ctx.beat(v + 1);
    }
    while (!live.empty()) take_release(to, live);
    ctx.finish();
    Message end;
    end.kind = Kind::kEnd;
    for (auto& s : to) s.send(&end, sizeof(end), io_timeout_s());
    ctx.metric("versions_sent", static_cast<double>(count));
    if (!publish_us.empty()) ctx.metric("publish_p50_us", median(publish_us));
  }

  // Takes one release (harness/ipc/release_protocol.h); a version's buffer goes with its last holder.
  void take_release(std::vector<UnixSocket>& from, std::map<std::uint64_t, Outgoing>& live) {
    sharebench::take_release<Release>(from, live, io_timeout_s(), "version", [](const Release& r) { return r.version; },
                                      [&](auto it) {
                                        // The producer's model is bound to the newest buffer, never to one every
                                        // consumer released unless it is the last: keep the model's bytes alive by
                                        // copying them out first.
                                        if (std::next(it) == live.end()) unbind_into_private_memory();
                                        it->second.named.release();
                                        live.erase(it);
                                      });
  }

  void unbind_into_private_memory() {
    torch::NoGradGuard no_grad;
    for (const auto& param : model_->parameters()) {
      torch::Tensor p = param;
      p.set_data(p.detach().clone());
    }
  }

  // ---- consumers (ranks 1..) --------------------------------------------------------------------
  void consume(WorkerContext& ctx, ModelIpcState& state, const torch::Tensor& probe) {
    const std::vector<torch::Tensor> params = model_->parameters();
    const ParameterLayout layout = layout_of(params);
    UnixSocket producer = connect_as_rank(state.socket_name, ctx.rank(), cell_.hang_timeout_s, io_timeout_s());
    std::vector<double> handoff_us;
    std::int64_t received = 0, mismatched = 0, out_of_order = 0;
    double bytes_received = 0;
    bool promised = false;

    ctx.wait_for_start();
    for (;;) {
      Message msg;
      int fd = -1;
      const std::int64_t ready_ns = monotonic_ns();  // this consumer is idle from here
      producer.receive(&msg, sizeof(msg), io_timeout_s(), &fd);
      if (msg.kind == Kind::kEnd) break;
      if (msg.bytes != layout.bytes) {
        if (fd >= 0) ::close(fd);
        throw std::runtime_error(fmt::format("version {} holds {} bytes; this consumer's model needs {}", msg.version,
                                             msg.bytes, layout.bytes));
      }
      if (msg.version != static_cast<std::uint64_t>(received)) ++out_of_order;
      // Map the new version and bind the model to it, then let the previous mapping go.
      Mapping mapping;
      NamedSegment segment;
      void* base = nullptr;
      if (named_) {
        segment = NamedSegment::open(msg.segment, layout.bytes);
        segment.drop_reference();  // the mapping stays; the last user's drop unlinks the name
        base = segment.data();
      } else {
        mapping = Mapping::of_fd(fd, layout.bytes);
        ::close(fd);
        base = mapping.data();
      }
      bind_to_buffer(base, layout, params);
      if (cell_.variant == "copy-on-receive") {
        // The planted bug: a private copy "so the producer can reuse its buffer". Every output is
        // still right; only where the model's bytes live tells.
        torch::NoGradGuard no_grad;
        for (const auto& param : params) {
          torch::Tensor p = param;
          p.set_data(p.detach().clone());
        }
      }
      current_mapping_ = std::move(mapping);
      current_segment_ = std::move(segment);
      handoff_us.push_back(static_cast<double>(monotonic_ns() - std::max(msg.sent_ns, ready_ns)) * 1e-3);
      if (!promised) {
        promised = true;
        promise_shared_model("received model", [params] {
          SharedModelNow now;
          for (std::size_t i = 0; i < params.size(); ++i) {
            now.spans.push_back(SharedSpan{fmt::format("parameter {}", i), params[i].data_ptr(),
                                           static_cast<std::size_t>(params[i].numel()) * params[i].element_size()});
          }
          return now;
        });
      }
      {
        torch::NoGradGuard no_grad;
        if (output_checksum(model_->forward(probe)) != msg.probe_checksum) ++mismatched;
      }
      ++received;
      bytes_received += static_cast<double>(msg.bytes);
      Release release{msg.version, static_cast<std::uint32_t>(ctx.rank())};
      producer.send(&release, sizeof(release), io_timeout_s());
      ctx.beat(received);
    }
    ctx.finish();
    ctx.metric("versions_received", static_cast<double>(received));
    ctx.metric("versions_mismatched", static_cast<double>(mismatched));
    ctx.metric("versions_out_of_order", static_cast<double>(out_of_order));
    ctx.metric("bytes_received", bytes_received);
    if (!handoff_us.empty()) ctx.metric("handoff_p50_us", median(handoff_us));
  }

  CellConfig cell_;
  bool named_;
  std::unique_ptr<Model> model_;
  // The version a consumer's model is bound to, kept until the scenario object goes (after the
  // harness has asked where the model is).
  Mapping current_mapping_;
  NamedSegment current_segment_;
};
}  // namespace

SHAREBENCH_SCENARIO(ModelIpcScenario, "model-ipc")
    ->Describe("a producer updates the model and hands every version's parameters to consumers by IPC")
    ->Kind(ScenarioKind::kMessages)
    ->SharesModel()
    ->MinProcs(2)
    ->Variant("fd", "each version in a fresh memfd passed as an fd (SCM_RIGHTS); consumers bind to it, no copy")
    ->Variant("named", "each version in a fresh named /dev/shm segment, unlinked by its last user")
    ->KnownBug("copy-on-receive", "consumers copy each received version into private memory",
               Expectation{{checks::kModelShared}, {}});

}  // namespace sharebench
