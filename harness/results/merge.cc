// merge: shard bookkeeping and the interleave back into matrix order.
#include "harness/results/merge.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/results_json.h"

namespace sharebench {

namespace {
std::string joined_status(const std::vector<RunResult>& parts) {
  for (const char* worst : {"error", "interrupted", "running"}) {
    for (const RunResult& p : parts) {
      if (p.status == worst) return worst;
    }
  }
  return "complete";
}

// The run's command with its --shard K/N (or --shard=K/N) taken out.
std::vector<std::string> unsharded_command(const std::vector<std::string>& command) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (command[i] == "--shard") {
      ++i;
      continue;
    }
    if (command[i].rfind("--shard=", 0) == 0) continue;
    out.push_back(command[i]);
  }
  return out;
}
}  // namespace

RunResult merge_runs(const std::vector<RunResult>& parts) {
  if (parts.empty()) throw ResultsFormatError("merge needs at least one results file");
  const int total = parts.front().shard.total;
  const bool sharded = total > 1;
  for (const RunResult& p : parts) {
    if (p.shard.total != total) {
      throw ResultsFormatError(fmt::format("run {} is shard {}/{} but run {} is shard {}/{}: not shards of one matrix",
                                           parts.front().run_id, parts.front().shard.index, total, p.run_id,
                                           p.shard.index, p.shard.total));
    }
    if (sharded && p.shard.planned_cells != parts.front().shard.planned_cells) {
      throw ResultsFormatError(fmt::format("runs {} and {} planned different matrices ({} and {} cells)",
                                           parts.front().run_id, p.run_id, parts.front().shard.planned_cells,
                                           p.shard.planned_cells));
    }
  }
  RunResult out;
  out.run_id = "merged-" + parts.front().run_id;
  out.started_at = parts.front().started_at;
  out.finished_at = parts.front().finished_at;
  for (const RunResult& p : parts) {
    out.started_at = std::min(out.started_at, p.started_at);
    out.finished_at = std::max(out.finished_at, p.finished_at);
    out.merged_from.push_back(p.run_id);
  }
  out.status = joined_status(parts);
  out.command = unsharded_command(parts.front().command);
  out.environment = parts.front().environment;
  out.repetitions = parts.front().repetitions;  // one command's shards share it; budget_ran_out: any of them
  for (const RunResult& p : parts) out.repetitions.budget_ran_out |= p.repetitions.budget_ran_out;
  std::set<std::string> hosts;
  for (const RunResult& p : parts) {
    if (auto it = p.environment.find("host"); it != p.environment.end()) hosts.insert(it->second);
  }
  if (hosts.size() > 1) out.environment["host"] = fmt::format("{}", fmt::join(hosts, ", "));

  if (sharded) {
    std::vector<const RunResult*> by_index(static_cast<std::size_t>(total), nullptr);
    for (const RunResult& p : parts) {
      auto& slot = by_index[static_cast<std::size_t>(p.shard.index - 1)];
      if (slot) throw ResultsFormatError(fmt::format("shard {}/{} is given twice ({} and {})", p.shard.index, total, slot->run_id, p.run_id));
      slot = &p;
    }
    std::vector<int> missing;
    for (int i = 0; i < total; ++i) {
      if (!by_index[static_cast<std::size_t>(i)]) missing.push_back(i + 1);
    }
    if (!missing.empty()) {
      throw ResultsFormatError(fmt::format("shard(s) {} of {} are missing: the merge would not be the whole matrix",
                                           fmt::join(missing, ", "), total));
    }
    // Cell i of the matrix ran as cell i / N of shard i % N + 1 (matrix.h's shard_cells).
    const std::size_t planned = parts.front().shard.planned_cells;
    for (std::size_t i = 0; i < planned; ++i) {
      const RunResult& p = *by_index[i % static_cast<std::size_t>(total)];
      const std::size_t k = i / static_cast<std::size_t>(total);
      if (k < p.cells.size()) out.cells.push_back(p.cells[k]);
    }
    out.shard = ShardInfo{1, 1, planned};
  } else {
    for (const RunResult& p : parts) out.cells.insert(out.cells.end(), p.cells.begin(), p.cells.end());
    out.shard = ShardInfo{1, 1, out.cells.size()};
  }
  std::set<std::string> ids;
  for (const CellResult& c : out.cells) {
    if (!ids.insert(c.config.id()).second) {
      throw ResultsFormatError(fmt::format("cell {} is in more than one of the files", c.config.id()));
    }
  }
  return out;
}

}  // namespace sharebench
