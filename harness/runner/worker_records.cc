// What the runner records of each worker once a repetition's workers are gone (worker_records.h).
#include "harness/runner/worker_records.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/housekeeping/private_dir.h"

namespace sharebench {

namespace {

// What a worker process printed to stderr, kept in the results: at most this much, from its end.
constexpr std::size_t kStderrTailBytes = 8192;

// The last `lines` non-empty lines of a text, joined with " | ".
std::string last_lines(const std::string& text, int lines) {
  std::vector<std::string> found;
  std::size_t end = text.size();
  while (end > 0 && static_cast<int>(found.size()) < lines) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(begin, end - begin);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) found.insert(found.begin(), line);
    if (nl == std::string::npos) break;
    end = nl;
  }
  return fmt::format("{}", fmt::join(found, " | "));
}

// Each worker's memory figures, the cell's peaks, a USS series per rank.
void record_memory(const Supervision& sup, const HarnessBlock& block, Repetition& rep) {
  double uss = 0, rss = 0, pss = 0, shared = 0;
  for (WorkerRecord& w : rep.workers) {
    auto it = sup.memory.find(w.rank);
    if (it == sup.memory.end() || it->second.samples.empty()) continue;
    const MemoryTrack& t = it->second;
    w.rss_mb_peak = t.peak.rss_mb;
    w.pss_mb_peak = t.peak.pss_mb;
    w.uss_mb_peak = t.peak.uss_mb;
    w.shared_mb_peak = t.peak.shared_mb;
    w.uss_mb_start = t.at_start ? t.at_start->uss_mb : t.samples.front().uss_mb;
    // The worker's own reading as its work ended, when it took one, is the exact end.
    const double own_end = static_cast<double>(block.slots[w.rank].uss_kb_at_end.load()) / 1024;
    w.uss_mb_end = own_end > 0 ? own_end : t.last.uss_mb;
    w.uss_mb_peak = std::max(w.uss_mb_peak, own_end);
    uss = std::max(uss, w.uss_mb_peak);
    rss = std::max(rss, t.peak.rss_mb);
    pss = std::max(pss, t.peak.pss_mb);
    shared = std::max(shared, t.peak.shared_mb);
    rep.series.push_back(Series{"uss-mb", w.rank, t.uss_series});
  }
  std::int32_t threads = 0;
  for (int r = 0; r < block.procs; ++r) threads = std::max(threads, block.slots[r].threads_at_end.load());
  if (threads > 0) rep.metrics["worker_threads_max"] = threads;
  if (uss > 0) {
    rep.metrics["worker_uss_mb_peak"] = uss;
    rep.metrics["worker_rss_mb_peak"] = rss;
    rep.metrics["worker_pss_mb_peak"] = pss;
    rep.metrics["worker_shared_mb_peak"] = shared;
  }
}

// Throughput without the warm-up: the steps every worker made after its warm-up mark, over the
// time from the first mark to the last worker's end. Kept as the whole run's rate when a worker has
// no mark, or the marks leave less than half the timed region (a scenario that beats rarely).
void record_steady_rate(const HarnessBlock& block, double run_s, Repetition& rep) {
  std::int64_t first_warm = 0, last_finished = 0, steady_steps = 0;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot& s = block.slots[r];
    if (s.warm_ns == 0 || s.finished_ns <= s.warm_ns) return;
    first_warm = first_warm == 0 ? s.warm_ns : std::min(first_warm, s.warm_ns);
    last_finished = std::max(last_finished, s.finished_ns);
    steady_steps += s.steps.load() - s.warm_steps;
  }
  const double window_s = (last_finished - first_warm) * 1e-9;
  if (window_s < run_s / 2 || steady_steps <= 0) return;
  rep.metrics["steps_per_s"] = steady_steps / window_s;
  rep.metrics["warmup_s"] = run_s - window_s;
}

}  // namespace

void record_workers(const Supervision& sup, const HarnessBlock& block, std::int64_t launch_ns, Repetition& rep) {
  std::int64_t steps_total = 0;
  double run_s = 0, launch_max = 0, launch_sum = 0;
  int launched = 0;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot& s = block.slots[r];
    WorkerRecord w;
    w.rank = r;
    auto it = sup.exits.find(r);
    if (it != sup.exits.end()) {
      w.pid = it->second.pid;
      w.exited = it->second.exited;
      w.exit_code = it->second.exit_code;
      w.signal = it->second.signal;
    }
    w.steps = s.steps.load();
    if (s.arrived_ns > 0) {
      w.launch_s = (s.arrived_ns - launch_ns) * 1e-9;
      launch_max = std::max(launch_max, w.launch_s);
      launch_sum += w.launch_s;
      ++launched;
    }
    w.error = s.error;
    if (block.private_dir[0] != '\0') {
      w.stderr_tail = read_file_tail(fmt::format("{}/rank-{}.stderr", block.private_dir, r), kStderrTailBytes);
    }
    const bool failed = !(w.exited && w.exit_code == 0) ||
                        s.phase.load() != static_cast<std::int32_t>(WorkerPhase::kDone);
    if (failed && w.error.empty() && !w.stderr_tail.empty()) w.error = last_lines(w.stderr_tail, 2);
    if (auto st = sup.stalls.find(r); st != sup.stalls.end()) w.stall = st->second;
    if (auto st = sup.stacks.find(r); st != sup.stacks.end()) w.stacks = st->second;
    w.chaos_recent = describe_recent_chaos(s.chaos, launch_ns);
    if (s.started_ns > 0 && s.finished_ns > s.started_ns) run_s = std::max(run_s, (s.finished_ns - s.started_ns) * 1e-9);
    steps_total += w.steps;
    rep.workers.push_back(std::move(w));
  }
  record_memory(sup, block, rep);
  rep.metrics["steps_total"] = static_cast<double>(steps_total);
  if (run_s > 0) {
    rep.metrics["run_s"] = run_s;
    rep.metrics["steps_per_s"] = steps_total / run_s;
    record_steady_rate(block, run_s, rep);
  }
  if (launched > 0) {
    rep.metrics["launch_s_max"] = launch_max;
    rep.metrics["launch_s_mean"] = launch_sum / launched;
  }
  std::vector<std::string> unfinished;
  for (const auto& w : rep.workers) {
    const bool finished = block.slots[w.rank].phase.load() == static_cast<std::int32_t>(WorkerPhase::kDone);
    // A thread that ended itself leaves its host's exit code clean; its slot says it never finished.
    if (w.exited && w.exit_code == 0 && !finished) {
      unfinished.push_back(fmt::format("rank {} ended without finishing its work", w.rank));
    }
  }
  if (sup.status == RunStatus::kCompleted && !unfinished.empty()) {
    rep.status = RunStatus::kWorkerFailed;
    rep.status_message = fmt::format("{}", fmt::join(unfinished, "; "));
  }
}

void record_chaos_tally(const HarnessBlock& block, Repetition& rep) {
  ChaosTally sum;
  for (int r = 0; r < block.procs; ++r) {
    const ChaosTally& t = block.slots[r].chaos;
    sum.points += t.points;
    sum.burst_points += t.burst_points;
    sum.rendezvous += t.rendezvous;
    sum.yields += t.yields;
    sum.sleeps += t.sleeps;
    sum.slept_ns += t.slept_ns;
    sum.skipped += t.skipped;
    sum.priority_changes += t.priority_changes;
    sum.preemptions += t.preemptions;
    sum.preempted_ns += t.preempted_ns;
  }
  rep.metrics["chaos_points"] = static_cast<double>(sum.points);
  rep.metrics["chaos_points_in_bursts"] = static_cast<double>(sum.burst_points);
  rep.metrics["chaos_rendezvous"] = static_cast<double>(sum.rendezvous);
  rep.metrics["chaos_yields"] = static_cast<double>(sum.yields);
  rep.metrics["chaos_sleeps"] = static_cast<double>(sum.sleeps);
  rep.metrics["chaos_slept_s"] = static_cast<double>(sum.slept_ns) * 1e-9;
  rep.metrics["chaos_refused_by_budget"] = static_cast<double>(sum.skipped);
  rep.metrics["chaos_priority_changes"] = static_cast<double>(sum.priority_changes);
  rep.metrics["chaos_preemptions"] = static_cast<double>(sum.preemptions);
  rep.metrics["chaos_preempted_s"] = static_cast<double>(sum.preempted_ns) * 1e-9;
}

std::vector<std::string> worker_descriptor_leaks(const HarnessBlock& block) {
  std::vector<std::string> leaks;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot& slot = block.slots[r];
    if (slot.leaked_fds > 0) {
      leaks.push_back(fmt::format("rank {} left {} file descriptor(s) open after work() ({})", r, slot.leaked_fds,
                                  slot.leaked_fd_names));
    }
  }
  if (block.thread_host_leaked_fds > 0) {
    leaks.push_back(fmt::format("the worker threads left {} file descriptor(s) open after work() ({}); under --start "
                                "thread every rank shares one process, so which rank opened it is not known",
                                block.thread_host_leaked_fds, block.thread_host_leaked_fd_names));
  }
  return leaks;
}

}  // namespace sharebench
