// The `gloo` averaging transport: c10d's ProcessGroupGloo all-reduce from LibTorch.
//
// Rendezvous, two ways:
//   local     every rank of the cell meets in a FileStore (a file under /tmp named with the
//             run's prefix), whatever the start method; under `thread` each thread is its own rank
//             with its own process group.
//   torchrun  when RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT are set (what `torchrun` sets),
//             this sharebench process is node RANK of WORLD_SIZE: its --procs workers are global
//             ranks RANK*procs .. RANK*procs+procs-1, and they meet in a TCPStore at MASTER_ADDR,
//             hosted by global rank 0. Each cell repetition uses its own port, MASTER_PORT +
//             the number of gloo repetitions this runner ran before it, so a late rank can never
//             reach the store of the previous repetition; every node runs the same matrix, so the
//             ports agree.
// Where LibTorch was built without Gloo (USE_C10D_GLOO unset) gloo_unavailable() says so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

namespace sharebench {

struct TorchrunEnv {
  int node_rank = 0;
  int nodes = 1;
  std::string master_addr;
  int master_port = 0;
};

// The torchrun variables, or nullopt when RANK is unset. Throws std::invalid_argument naming the
// variable when they are set but incomplete or malformed.
std::optional<TorchrunEnv> torchrun_env();

std::optional<std::string> gloo_unavailable();

struct GlooRendezvous {
  std::string file_path;          // local: the FileStore
  std::optional<TorchrunEnv> env; // torchrun: the TCPStore
  int port_offset = 0;            // torchrun: added to MASTER_PORT
};

class GlooAverager {
 public:
  GlooAverager(const GlooRendezvous& where, int rank, int world, double timeout_s);
  ~GlooAverager();
  // Replaces `flat` (float32, contiguous) by its mean over every rank.
  void mean(torch::Tensor& flat);
  // The largest difference between any two ranks' values of `flat`, element by element
  // (all-reduce MAX minus all-reduce MIN).
  double spread(const torch::Tensor& flat);
  // Every rank has arrived: called before the group is torn down.
  void barrier();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sharebench
