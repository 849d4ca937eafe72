// GlooAverager over c10d: FileStore or TCPStore, then ProcessGroupGloo all-reduce.
#include "scenarios/averaging/gloo_transport.h"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace sharebench {

namespace {
int parse_int_env(const char* name, int low, int high) {
  const char* text = std::getenv(name);
  if (!text || !*text) throw std::invalid_argument(fmt::format("torchrun variables: {} is not set", name));
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < low || v > high) {
    throw std::invalid_argument(fmt::format("torchrun variables: {}='{}' is not an integer in {}..{}", name, text, low, high));
  }
  return static_cast<int>(v);
}
}  // namespace

std::optional<TorchrunEnv> torchrun_env() {
  if (!std::getenv("RANK")) return std::nullopt;
  TorchrunEnv e;
  e.nodes = parse_int_env("WORLD_SIZE", 1, 4096);
  e.node_rank = parse_int_env("RANK", 0, e.nodes - 1);
  e.master_port = parse_int_env("MASTER_PORT", 1, 65535);
  const char* addr = std::getenv("MASTER_ADDR");
  if (!addr || !*addr) throw std::invalid_argument("torchrun variables: MASTER_ADDR is not set");
  e.master_addr = addr;
  return e;
}

#ifdef USE_C10D_GLOO

std::optional<std::string> gloo_unavailable() { return std::nullopt; }

struct GlooAverager::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  int world = 1;
};

GlooAverager::GlooAverager(const GlooRendezvous& where, int rank, int world, double timeout_s)
    : impl_(std::make_unique<Impl>()) {
  impl_->world = world;
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
  std::string host = "127.0.0.1";
  if (where.env) {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(where.env->master_port + where.port_offset);
    o.isServer = rank == 0;
    o.numWorkers = world;
    o.waitWorkers = true;
    o.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(where.env->master_addr, o);
    if (where.env->master_addr != "127.0.0.1" && where.env->master_addr != "localhost") host.clear();
  } else {
    impl_->store = c10::make_intrusive<c10d::FileStore>(where.file_path, world);
  }
  auto options = c10d::ProcessGroupGloo::Options::create();
  options->timeout = timeout;
  options->devices.push_back(host.empty() ? c10d::ProcessGroupGloo::createDefaultDevice()
                                          : c10d::ProcessGroupGloo::createDeviceForHostname(host));
  impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rank, world, options);
}

GlooAverager::~GlooAverager() = default;

void GlooAverager::mean(torch::Tensor& flat) {
  std::vector<torch::Tensor> tensors{flat};
  c10d::AllreduceOptions o;
  o.reduceOp = c10d::ReduceOp::SUM;
  impl_->group->allreduce(tensors, o)->wait();
  flat.div_(static_cast<double>(impl_->world));
}

double GlooAverager::spread(const torch::Tensor& flat) {
  std::vector<torch::Tensor> high{flat.clone()}, low{flat.clone()};
  c10d::AllreduceOptions max_op, min_op;
  max_op.reduceOp = c10d::ReduceOp::MAX;
  min_op.reduceOp = c10d::ReduceOp::MIN;
  impl_->group->allreduce(high, max_op)->wait();
  impl_->group->allreduce(low, min_op)->wait();
  return (high[0] - low[0]).max().item<double>();
}

void GlooAverager::barrier() { impl_->group->barrier()->wait(); }

#else  // LibTorch without Gloo

std::optional<std::string> gloo_unavailable() { return std::string("this LibTorch was built without c10d Gloo"); }
struct GlooAverager::Impl {};
GlooAverager::GlooAverager(const GlooRendezvous&, int, int, double) { throw std::runtime_error(*gloo_unavailable()); }
GlooAverager::~GlooAverager() = default;
void GlooAverager::mean(torch::Tensor&) {}
double GlooAverager::spread(const torch::Tensor&) { return 0; }
void GlooAverager::barrier() {}

#endif

}  // namespace sharebench
