// consistent-snapshots in a user's program: a read of shared state during which another process
// wrote a new version of it, so the reader got a mix of two versions. Two situations, judged by what
// happened:
//  - a shared Array read element by element (iterating it, a loop of arr[i]) while it changed, each
//    element under the Array's own lock, which guards one element at a time: the Array's contents at
//    the read's first and last element, compared (sharebench_shared_state.py). Reading it with arr[:]
//    (one lock hold), or one lock around the whole read and the whole write, is clean;
//  - a shared model read whole (its forward(), a load_state_dict from its tensors) while another
//    process published a new version into it (load_state_dict, a loop of copy_ over its parameters):
//    a version counter beside the model, odd while a publish writes, read before and after each read
//    (sharebench_versions.py). An optimizer's step is not a version (Hogwild is clean), and a lock
//    held around both sides, or a second model to publish into, is clean.
// Writers are named from every process's writes to the same object.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "wings/exec/checks/exec_checks.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0; }

// Reads of shared models during another process's publish into them; adds to `compared` the reads
// that another process's publishes could have overlapped (the reader alive while it published).
void judge_model_versions(const SharedStateView& view, std::vector<std::string>& findings, double& compared) {
  struct Side {
    const ProcessSharedState* process;
    const json* record;
  };
  std::map<std::string, std::vector<Side>> by_key;
  for (const ProcessSharedState& p : view.processes) {
    if (p.versions == nullptr) continue;
    for (const json& v : *p.versions) {
      if (v.is_object() && v.contains("key") && v["key"].is_string()) by_key[v["key"].get<std::string>()].push_back({&p, &v});
    }
  }
  for (const auto& [key, sides] : by_key) {
    double reads = 0, torn = 0;
    std::string what;
    std::vector<std::pair<int, const json*>> readers, publishers;
    for (const Side& r : sides) {
      if (what.empty() || what.find("share_memory()") == std::string::npos) what = r.record->value("what", what);
      if (number(*r.record, "publishes") > 0) {
        publishers.emplace_back(r.process->pid, r.record->contains("publish_sites") ? &(*r.record)["publish_sites"] : nullptr);
      }
      if (number(*r.record, "torn") > 0) {
        readers.emplace_back(r.process->pid, r.record->contains("read_sites") ? &(*r.record)["read_sites"] : nullptr);
      }
      torn += number(*r.record, "torn");
      const bool overlapped = std::any_of(sides.begin(), sides.end(), [&](const Side& w) {
        return w.process->pid != r.process->pid && number(*w.record, "publishes") > 0 &&
               number(*w.record, "first_publish_t") < r.process->end_t &&
               number(*w.record, "last_publish_t") > r.process->start_t;
      });
      if (overlapped || number(*r.record, "torn") > 0) reads += number(*r.record, "reads");
    }
    compared += reads;
    if (torn <= 0) continue;
    findings.push_back(fmt::format(
        "{} was read while a new version was being published into it, in {:g} of {:g} reads: read by {}; published "
        "by {}. A load_state_dict() or a loop of copy_() writes one tensor after another, so a forward() that "
        "overlaps it computes with some layers of the old version and some of the new. Fix: hold one "
        "process-shared lock (an mp.Lock passed to every process) around each publish and each read, or publish "
        "into a second shared model and switch the readers to it under that lock (double buffering)",
        what.empty() ? std::string("a shared model") : what, torn, reads, sites_by_pid(readers),
        publishers.empty() ? std::string("a writer the hooks did not see") : sites_by_pid(publishers)));
  }
}

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
      "a program whose processes read a shared Array element by element, or run forward() on a shared model, "
      "while another process writes it whole (load_state_dict, copy_)";
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
  double model_reads = 0;
  judge_model_versions(in.shared_state, findings, model_reads);
  const Exposure seen{passes + model_reads,
                      "element-by-element reads of shared Arrays, and reads of shared models another process "
                      "published into while the reader ran, compared"};
  add_verdict(f, checks::kConsistentSnapshots, findings,
              "no shared Array or shared model changed while a process read it whole", seen);
}

}  // namespace sharebench::exec_checks
