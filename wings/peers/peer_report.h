// peer_report: `sharebench peers` as text: the table of each strategy beside its plain
// torch.multiprocessing peer (both medians, the ratio with its range over rounds), the scaling from
// one process to two on each side, and the gate's decision against a baseline. Markdown too, for
// docs/performance.md.
#pragma once

#include <string>

#include "wings/peers/peer_ratios.h"

namespace sharebench {

std::string render_peers_console(const PeerRun& run);
std::string render_peers_markdown(const PeerRun& run);
std::string render_peer_gate(const GateDecision& decision, const GateTolerances& tol, const std::string& baseline_path);

}  // namespace sharebench
