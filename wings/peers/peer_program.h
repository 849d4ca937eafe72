// peer_program: which strategies have a plain torch.multiprocessing peer (bench/peers/
// torch_mp_peer.py, compiled into the binary), and running that peer under a deadline: its whole
// process tree in a process group of its own, reaped by an intermediate process that is a child
// subreaper (so a multiprocessing helper that outlives the program, a resource tracker or a
// forkserver, never becomes the runner's zombie), killed whole on the deadline or an interrupt.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/config/cell_config.h"

namespace sharebench {

// A cell ("scenario/variant") and the peer program's name for the same strategy.
struct PeerStrategy {
  std::string cell;
  std::string peer;
};
// Every strategy with a peer, in the order `peers` runs them.
const std::vector<PeerStrategy>& peer_strategies();
// The peer for a cell, or nullopt when none is written (a manager process, CUDA, messages).
std::optional<std::string> peer_for(const std::string& scenario, const std::string& variant);

// The peer program's text, as compiled in.
const char* peer_program_source();

struct PeerProgramResult {
  double steps_per_s = 0;  // 0 when it failed
  std::string error;       // why it failed: exit status, deadline, last lines of stderr
  double wall_s = 0;
};
// Runs `python script PEER --procs N --steps S ...` with the cell's workload and start method.
// stderr goes to `stderr_path`, whose tail is the error when the program fails. Never outlives
// `timeout_s` (nor an interrupt request).
PeerProgramResult run_peer_program(const std::string& python, const std::string& script, const std::string& peer,
                                   const CellConfig& cell, double timeout_s, const std::string& stderr_path);

}  // namespace sharebench
