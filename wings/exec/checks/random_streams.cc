// random-streams in a user's program: two processes that train a model they were handed (a module,
// or a tensor that learns, received from their parent; they ran backward() or an optimizer step) and
// drew torch random numbers from the same stream. Workers of one Hogwild or A3C
// trainer are meant to explore differently; two with one stream sample the same actions, dropout
// masks and batch order, and the model learns as if from one of them. The stream's origin is the
// state torch's default CPU generator had where its draws began (sharebench_random_streams.py):
// the last torch.manual_seed() in the process, the state inherited at a fork when the child never
// reseeded, or the state at torch's import in a process that never seeded (torch seeds its generator
// from the OS in each process that imports it, so unseeded workers under spawn and forkserver draw
// apart). Equal origin
// states are the same stream; a process whose generator never moved since drew nothing and is not
// judged. Processes that train no model they were handed are not judged either: the parent,
// DataLoader workers (torch reseeds them itself), inference workers, the replicas of a
// DistributedDataParallel job (they build their own and seed alike on purpose). Nor are processes
// that never ran at the same time: two tests of a suite, or two training phases one after the
// other, that seed their workers alike are deterministic on purpose, not workers exploring alike.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

constexpr std::string_view kEndEvent = "end";
constexpr std::string_view kStartEvent = "start";
constexpr std::string_view kSeeded = "seeded";
constexpr std::string_view kInherited = "inherited";

struct Stream {
  int pid = 0;
  double began = 0, ended = 0;  // its start and end events' times
  std::string how;
  std::string where;
  std::string seed;  // as the process reported it: torch's seeds are unsigned 64-bit
};

// How the processes of one origin came to share it, in words a user acts on.
std::string how_they_share(const std::vector<Stream>& group) {
  const Stream& first = group.front();
  bool all_seeded = true, all_inherited = true;
  for (const Stream& s : group) {
    all_seeded = all_seeded && s.how == kSeeded;
    all_inherited = all_inherited && s.how == kInherited;
  }
  std::vector<std::string> wheres;
  for (const Stream& s : group) {
    if (!s.where.empty() && std::find(wheres.begin(), wheres.end(), s.where) == wheres.end()) wheres.push_back(s.where);
  }
  if (all_seeded) return fmt::format("each called torch.manual_seed({}) ({})", first.seed, fmt::join(wheres, "; "));
  if (all_inherited) {
    return fmt::format("each was forked with its parent's generator (seed {}){} and never reseeded", first.seed,
                       wheres.empty() ? "" : fmt::format(" at {}", fmt::join(wheres, "; ")));
  }
  // An unseeded origin shared by two processes came from a process that forked them both after
  // importing torch, where the fork hooks did not run.
  return fmt::format("each started from the generator state of the process that forked them (seed {}) and never "
                     "reseeded",
                     first.seed);
}

// The processes of one origin split into those whose lifetimes overlap, one after another (the
// connected runs of an interval graph, in order of start): only processes alive together explore alike.
std::vector<std::vector<Stream>> alive_together(std::vector<Stream> group) {
  std::sort(group.begin(), group.end(), [](const Stream& a, const Stream& b) { return a.began < b.began; });
  std::vector<std::vector<Stream>> out;
  double until = -1;
  for (const Stream& s : group) {
    if (out.empty() || s.began > until) out.emplace_back();
    out.back().push_back(s);
    until = std::max(until, s.ended);
  }
  return out;
}

}  // namespace

void judge_random_streams(const ExecCheckInput& in, SharingFindings& f) {
  std::map<std::string, std::vector<Stream>> by_origin;
  std::map<int, double> began;  // pid -> its start event's time
  for (const json& e : in.events) {
    if (e.value("event", "") == kStartEvent && e.contains("t") && e["t"].is_number()) began[e.value("pid", 0)] = e["t"].get<double>();
  }
  double judged = 0;
  for (const json& e : in.events) {
    if (e.value("event", "") != kEndEvent || !e.contains("random_streams") || !e["random_streams"].is_object()) continue;
    const json& r = e["random_streams"];
    if (!r.value("received_model", false) || !r.value("drew", false)) continue;
    if (!r.contains("state") || !r["state"].is_string()) continue;
    Stream s;
    s.pid = e.value("pid", 0);
    s.ended = e.contains("t") && e["t"].is_number() ? e["t"].get<double>() : 0;
    s.began = began.count(s.pid) ? began[s.pid] : s.ended;
    s.how = r.value("how", "");
    s.seed = r.contains("seed") && r["seed"].is_number_integer() ? r["seed"].dump() : std::string("unknown");
    if (r.contains("where") && r["where"].is_string()) s.where = r["where"].get<std::string>();
    by_origin[r["state"].get<std::string>()].push_back(s);
    ++judged;
  }
  std::vector<std::vector<Stream>> together;  // processes of one origin that ran at the same time
  for (const auto& [state, all] : by_origin) {
    for (std::vector<Stream>& group : alive_together(all)) together.push_back(std::move(group));
  }
  std::vector<std::string> findings;
  for (const std::vector<Stream>& group : together) {
    if (group.size() < 2) continue;
    std::vector<int> pids;
    for (const Stream& s : group) pids.push_back(s.pid);
    std::sort(pids.begin(), pids.end());
    findings.push_back(fmt::format(
        "{} processes that train the model they were handed drew the same torch random numbers (pids {}): {}, so "
        "they sample the same actions, dropout masks and batch order. Fix: seed each worker once at its start with a "
        "number of its own, torch.manual_seed(seed + rank)",
        group.size(), fmt::join(pids, ", "), how_they_share(group)));
  }
  f.to_raise[std::string(checks::kRandomStreams)] =
      "a program whose workers train a model they are handed and draw random numbers (sampling, dropout, shuffling)";
  const Exposure seen{judged * (judged - 1) / 2, "pairs of workers that trained a model they were handed and drew random numbers"};
  const std::string clean = judged < 2 ? std::string("fewer than two workers that trained a model they were handed drew random numbers")
                                       : fmt::format("{:g} workers that trained a model they were handed drew from {} "
                                                     "distinct random streams",
                                                     judged, by_origin.size());
  add_verdict(f, checks::kRandomStreams, findings, clean, seen);
}

}  // namespace sharebench::exec_checks
