// lost-updates in a user's program: a read-modify-write of shared memory (`counter.value += 1` on a
// multiprocessing Value, `arr[i] += x` on an Array, `t[0] += 1` on a one-element shared tensor) done
// by two or more processes, alive at the same time, with no process-shared lock held across it by
// all of them. The read and the write are two steps: another process's write between them is
// overwritten. Judged on the structure (so a run whose interleaving happened to lose nothing is still
// caught), with what happened beside it: the increments the processes made against the change that
// landed in the value. A counter under a threading.Lock and the A3C frame counter without its lock are this bug.
#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "wings/exec/checks/exec_checks.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

struct Writer {
  const ProcessSharedState* process;
  const json* place;
};

double number(const json& j, const char* key, double otherwise = 0) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : otherwise;
}

std::set<std::string> guards_of(const json& place) {
  std::set<std::string> out;
  if (place.contains("guards") && place["guards"].is_array()) {
    for (const json& g : place["guards"]) {
      if (g.is_string()) out.insert(g.get<std::string>());
    }
  }
  return out;
}

// Whether a's read-modify-writes were all done before b's began, in an order the program made: a's
// last one before b started (a parent counting before it starts its workers), or b's first one after
// b learnt that a had ended (a parent counting after it joined them). Two workers whose loops did not
// overlap this run by luck (one spawned child finished before the other was up) are not ordered.
bool ordered(const SharedStateView& view, const Writer& a, const Writer& b) {
  const json& first = (*b.place)["first"];
  const double b_first = first.is_array() && !first.empty() && first[0].is_number() ? first[0].get<double>() : b.process->start_t;
  const double a_last = number(*a.place, "last_t", a.process->end_t);
  return a_last < b.process->start_t || view.learnt_end(b.process->pid, a.process->pid) <= b_first;
}

bool raced(const SharedStateView& view, const Writer& a, const Writer& b) {
  return !ordered(view, a, b) && !ordered(view, b, a);
}

std::string tally(const std::vector<Writer>& writers) {
  // Expected: every increment made. Landed: the value at the last report against the value the
  // earliest read-modify-write read. Not countable where a plain write (a reset) came in between.
  double expected = 0, first_t = INFINITY, baseline = NAN, last_t = -INFINITY, final_value = NAN;
  bool countable = true;
  for (const Writer& w : writers) {
    const json& p = *w.place;
    expected += number(p, "delta");
    if (number(p, "plain_after") > 0) countable = false;
    const json& first = p["first"];
    if (first.is_array() && first.size() == 2 && first[0].is_number()) {
      if (first[0].get<double>() < first_t) {
        first_t = first[0].get<double>();
        baseline = first[1].is_number() ? first[1].get<double>() : NAN;
      }
    }
    if (w.process->reported_t > last_t) {
      last_t = w.process->reported_t;
      final_value = p.contains("value") && p["value"].is_number() ? p["value"].get<double>() : NAN;
    }
  }
  const bool killed = std::any_of(writers.begin(), writers.end(), [](const Writer& w) { return std::isinf(w.process->end_t); });
  if (!countable || std::isnan(baseline) || std::isnan(final_value) || killed) {
    return fmt::format("{:g} increment(s) made; what landed cannot be counted ({})", expected,
                       killed ? "a process was ended before it reported its last value"
                              : "the value was also set outright in between");
  }
  const double landed = final_value - baseline;
  const double lost = expected - landed;
  if (std::fabs(lost) < 0.5) {
    return fmt::format("{:g} increment(s) made and all landed this run: the interleaving that loses one did not "
                       "happen, but nothing prevents it", expected);
  }
  return fmt::format("{:g} increment(s) made, {:g} landed: {:g} lost", expected, landed, lost);
}

}  // namespace

void judge_lost_updates(const ExecCheckInput& in, SharingFindings& f) {
  const SharedStateView& view = in.shared_state;
  std::map<std::string, std::vector<Writer>> by_place;
  double rmws = 0;
  for (const ProcessSharedState& p : view.processes) {
    for (const json& place : *p.places) {
      if (number(place, "rmw") <= 0 || !place.contains("key") || !place["key"].is_string()) continue;
      by_place[place["key"].get<std::string>()].push_back(Writer{&p, &place});
    }
  }
  f.to_raise[std::string(checks::kLostUpdates)] =
      "a program whose processes update one shared counter (a Value, an Array element, a shared tensor)";
  std::vector<std::string> findings;
  int places_shared = 0;
  for (const auto& [key, writers] : by_place) {
    if (writers.size() < 2) continue;  // one process alone: nothing to lose to another
    ++places_shared;
    for (const Writer& w : writers) rmws += number(*w.place, "rmw");
    std::set<std::string> common = guards_of(*writers[0].place);
    for (const Writer& w : writers) {
      std::set<std::string> mine = guards_of(*w.place), both;
      std::set_intersection(common.begin(), common.end(), mine.begin(), mine.end(), std::inserter(both, both.end()));
      common = both;
    }
    if (!common.empty()) continue;  // one process-shared lock held across every read-modify-write
    bool any_race = false;
    for (std::size_t i = 0; i < writers.size() && !any_race; ++i) {
      for (std::size_t j = i + 1; j < writers.size() && !any_race; ++j) any_race = raced(view, writers[i], writers[j]);
    }
    if (!any_race) continue;
    std::vector<std::pair<int, const json*>> sites;
    std::string what;
    for (const Writer& w : writers) {
      sites.emplace_back(w.process->pid, w.place->contains("sites") ? &(*w.place)["sites"] : nullptr);
      if (what.empty()) what = w.place->value("what", "");
    }
    const std::string made = view.made_at(key);
    constexpr std::string_view kTensorWhat = "shared tensor";  // sharebench_shared_state.py's _tensor_place
    const bool tensor = what.rfind(kTensorWhat, 0) == 0;
    findings.push_back(fmt::format(
        "{}{} was read, changed and written back by {} processes with no lock they share held across the "
        "read and the write ({}): {}. Another process's write between the two is overwritten. Fix: hold one "
        "process-shared lock around the whole read-modify-write in every process: {}",
        what, made.empty() ? "" : fmt::format(" made at {}", made), writers.size(), sites_by_pid(sites), tally(writers),
        tensor ? "a multiprocessing.Lock made once in the parent and passed to each process (`with lock: t += 1`)"
               : "`with counter.get_lock(): counter.value += 1`, or a multiprocessing.Lock made once in the parent "
                 "and passed to each process; a threading.Lock does not exclude other processes"));
  }
  f.metrics["exec_shared_values_updated_by_several"] = places_shared;
  const Exposure seen{rmws, "read-modify-writes of values that two or more processes update seen"};
  add_verdict(f, checks::kLostUpdates, findings,
              places_shared == 0 ? "no shared value was read, changed and written back by two processes"
                                 : fmt::format("{} shared value(s) updated by several processes, each under one lock they "
                                               "all held",
                                               places_shared),
              seen);
}

}  // namespace sharebench::exec_checks
