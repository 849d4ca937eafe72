// consistent-snapshots in a user's program: a read of a shared Array element by element (iterating
// it, a loop of arr[i]) during which the Array changed, so the reader got a mix of two versions
// (each element read and written under the Array's own lock, which guards one element at a time). Judged by what happened: the Array's contents at the read's first and last element,
// compared. Writers are named from every process's writes to the same Array. Reading it with
// arr[:] (one lock hold), or holding one lock around the whole read and the whole write, is clean.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "wings/exec/checks/exec_checks.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {
double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0; }
}  // namespace

void judge_consistent_snapshots(const ExecCheckInput& in, SharingFindings& f) {
  struct Seen {
    std::vector<std::pair<int, const json*>> readers, writers;
    double passes = 0, torn = 0;
    std::string what;
  };
  std::map<std::string, Seen> by_place;
  double passes = 0;
  for (const ProcessSharedState& p : in.shared_state.processes) {
    for (const json& place : *p.places) {
      if (!place.contains("key") || !place["key"].is_string()) continue;
      Seen& s = by_place[place["key"].get<std::string>()];
      if (s.what.empty()) s.what = place.value("what", "");
      if (number(place, "passes") > 0) {
        passes += number(place, "passes");
        s.passes += number(place, "passes");
        s.torn += number(place, "torn");
        if (number(place, "torn") > 0) s.readers.emplace_back(p.pid, place.contains("reader_sites") ? &place["reader_sites"] : nullptr);
      }
      if (number(place, "writes") > 0) s.writers.emplace_back(p.pid, place.contains("writer_sites") ? &place["writer_sites"] : nullptr);
    }
  }
  f.to_raise[std::string(checks::kConsistentSnapshots)] =
      "a program whose processes read a shared Array element by element while another writes it";
  const Exposure seen{passes, "element-by-element reads of shared Arrays compared"};
  std::vector<std::string> findings;
  for (const auto& [key, s] : by_place) {
    if (s.torn <= 0) continue;
    std::vector<std::pair<int, const json*>> others;
    for (const auto& w : s.writers) {
      if (std::none_of(s.readers.begin(), s.readers.end(), [&](const auto& r) { return r.first == w.first; }) ||
          s.readers.size() > 1) {
        others.push_back(w);
      }
    }
    findings.push_back(fmt::format(
        "{}{} changed while it was being read element by element, in {:g} of {:g} reads: readers {}; written by {}. "
        "Each element was read under the Array's own lock, which guards one element at a time, so a reader got "
        "a mix of two versions. Fix: take one copy under one lock hold (`snapshot = arr[:]`), or hold one "
        "process-shared lock (an RLock passed as the Array's lock=) around the whole read and the whole write",
        s.what, in.shared_state.made_at(key).empty() ? "" : fmt::format(" made at {}", in.shared_state.made_at(key)), s.torn, s.passes, sites_by_pid(s.readers),
        others.empty() ? std::string("a writer the hooks did not see (a slice or raw write)") : sites_by_pid(others)));
  }
  add_verdict(f, checks::kConsistentSnapshots, findings, "no shared Array changed while it was read element by element", seen);
}

}  // namespace sharebench::exec_checks
