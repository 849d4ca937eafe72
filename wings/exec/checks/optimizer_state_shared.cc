// optimizer-state-shared in a user's program: an optimizer a child received from another process has
// every state entry in shared memory: no Python-number step, no private tensor, no state created
// lazily inside the child. Every number an optimizer holds (in state, in param_groups, in an
// attribute) is read where it was handed over, received and left: one that advanced in the children
// and not in the parent's copy was private to each process. Reads "handoff", "received" and "end".
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

struct StateKinds {
  std::vector<std::string> numbers, privates, shared;
};
StateKinds kinds_of(const json& state) {
  StateKinds k;
  if (!state.contains("keys") || !state["keys"].is_object()) return k;
  for (const auto& [key, kinds] : state["keys"].items()) {
    std::vector<std::string> ks = kinds.is_array() ? kinds.get<std::vector<std::string>>() : std::vector<std::string>{};
    if (std::count(ks.begin(), ks.end(), "number")) k.numbers.push_back(key);
    else if (std::count(ks.begin(), ks.end(), "private")) k.privates.push_back(key);
    else k.shared.push_back(key);
  }
  return k;
}

int origin_pid(const std::string& origin) { return std::atoi(origin.c_str()); }

const json* optimizer_report(const json& end, const std::string& origin) {
  for (const json& o : array_of(end, "optimizers")) {
    if (text_of(o, "origin") == origin) return &o;
  }
  return nullptr;
}

// An object's state summary, by reference (json::value would copy it into a temporary).
const json& state_of(const json& o) {
  static const json none = json::object();
  const auto it = o.find("state");
  return it != o.end() && it->is_object() ? *it : none;
}

// The optimizer's counters (sharebench_watch.py's _counters) in a state summary: name -> [value, kind].
const json& counters_of(const json& state) {
  static const json none = json::object();
  const auto it = state.find("counters");
  return it != state.end() && it->is_object() ? *it : none;
}

// What the origin process's copy held at its end (the "handed" list of its end event), or null.
const json* parent_state_at_end(const std::vector<json>& events, const std::string& origin) {
  const json* end = last_event_of(events, "end", origin_pid(origin));
  if (!end) return nullptr;
  for (const json& h : array_of(*end, "handed")) {
    if (text_of(h, "origin") == origin && h.contains("state") && h["state"].is_object()) return &h["state"];
  }
  return nullptr;
}

std::string counter_kind_words(const std::string& storage) {
  if (storage == "number") return "a Python number in each process";
  if (storage == "private") return "a tensor outside shared memory in each process";
  return "not shared";
}

// Every counter that advanced in the children (received -> end) must have advanced in the parent's
// copy too (handed over -> the parent's end): one that did not was private to each process,
// wherever it lives. Returns how many counters it compared.
int judge_counters(const std::vector<json>& events, const std::string& origin, const json& at_handoff,
                   const std::string& name, GroupedFindings& failures) {
  const json* at_parent_end = parent_state_at_end(events, origin);
  if (!at_parent_end) return 0;  // the parent never ended by itself: nothing to compare with
  std::map<std::string, double> advanced;
  std::map<std::string, std::string> kind;
  std::map<std::string, std::vector<int>> who;
  std::set<std::string> went_down;
  for (const json* e : events_of(events, "received")) {
    const int child = int_of(*e, "pid");
    const json* end = last_event_of(events, "end", child);
    const json* use = end ? optimizer_report(*end, origin) : nullptr;
    if (!use || int_of(*use, "steps") == 0) continue;
    for (const json& o : array_of(*e, "objects")) {
      if (text_of(o, "origin") != origin) continue;
      const json& before = counters_of(state_of(o));
      for (const auto& [counter, now] : counters_of(state_of(*use)).items()) {
        if (!before.contains(counter) || !now.is_array() || now.size() < 2 || !before[counter].is_array()) continue;
        const double d = now[0].get<double>() - before[counter][0].get<double>();
        if (d < 0) went_down.insert(counter);
        if (d <= 0) continue;
        advanced[counter] += d;
        kind[counter] = now[1].is_string() ? now[1].get<std::string>() : "";
        who[counter].push_back(child);
      }
    }
  }
  int compared = 0;
  const json& handed_over = counters_of(at_handoff), left = counters_of(*at_parent_end);
  for (const auto& [counter, total] : advanced) {
    if (went_down.count(counter) || !handed_over.contains(counter) || !left.contains(counter)) continue;
    ++compared;
    const double parent = left[counter][0].get<double>() - handed_over[counter][0].get<double>();
    if (std::abs(parent) > 1e-9 * std::max(1.0, total)) continue;
    for (const int pid : who[counter]) {
      failures.add(fmt::format("{}: {} advanced in {{pids}} ({:.0f} in all) and not at all in the parent's copy: it is "
                               "{}, so no process sees the others' steps (keep it in a tensor and share_memory_() it in "
                               "the parent before starting the workers)",
                               name, counter, total, counter_kind_words(kind[counter])),
                   pid);
    }
  }
  return compared;
}

// A received optimizer's state: numbers or private tensors, or entries its step() created inside the
// child (lazily, into empty per-parameter dicts). Adds to `failures`; returns whether it found one.
bool judge_received_state(const std::vector<json>& events, const json& o, int child, const std::string& name,
                          const StateKinds& before, GroupedFindings& failures) {
  const json state = o.value("state", json::object());
  const StateKinds k = kinds_of(state);
  if (!k.numbers.empty()) {
    failures.add(fmt::format("{} in {{pids}}: {} {} a Python number, so each process counts its own (bias "
                             "correction runs per process)",
                             name, key_list(k.numbers), k.numbers.size() == 1 ? "is" : "are"),
                 child);
    return true;
  }
  if (!k.privates.empty()) {
    std::vector<std::string> were_numbers;
    for (const std::string& key : k.privates) {
      if (std::count(before.numbers.begin(), before.numbers.end(), key)) were_numbers.push_back(key);
    }
    failures.add(fmt::format("{} in {{pids}}: {} {} a private tensor in each process{}", name, key_list(k.privates),
                             k.privates.size() == 1 ? "is" : "are",
                             were_numbers.empty() ? std::string(" (never share_memory_()'d)")
                                                  : fmt::format(" ({} a Python number in the parent, made a tensor of "
                                                                "each child's own when unpickled: each process counts "
                                                                "its own steps)",
                                                                were_numbers.size() == 1 ? "it was" : "they were")),
                 child);
    return true;
  }
  // Whatever is private or a number at the child's end was created inside it (what it received held
  // none): its first step() made it, in an empty state or in empty per-parameter dicts.
  const json* end = last_event_of(events, "end", child);
  const json* use = end ? optimizer_report(*end, text_of(o, "origin")) : nullptr;
  if (!use || int_of(*use, "steps") == 0) return false;
  const StateKinds made = kinds_of(use->value("state", json::object()));
  std::vector<std::string> unshared = made.privates;
  unshared.insert(unshared.end(), made.numbers.begin(), made.numbers.end());
  if (unshared.empty()) return false;
  const int entries = int_of(state, "entries"), empty = int_of(state, "empty_entries");
  const std::string when = entries == 0 ? "its state was empty when {pids} received it"
                                        : fmt::format("its {} per-parameter state dict(s) were empty when {{pids}} received "
                                                      "them",
                                                      empty);
  failures.add(fmt::format("{}: {} and each one's first step() created {} inside it: private moments while the "
                           "parameters are shared (create the state in the parent and share_memory_() it before starting "
                           "the workers)",
                           name, when, key_list(unshared)),
               child);
  return true;
}

}  // namespace

void judge_optimizer_state_shared(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
  // origin -> what the parent had when it handed it over (its first handoff)
  std::map<std::string, const json*> handed;
  for (const json* e : events_of(events, "handoff")) {
    for (const json& o : array_of(*e, "objects")) {
      if (text_of(o, "kind") == "optimizer" && !text_of(o, "origin").empty()) handed.emplace(text_of(o, "origin"), &o);
    }
  }
  GroupedFindings failures;
  std::set<std::string> judged, failing;
  std::map<std::string, std::string> names;
  double exposure = 0;
  for (const json* e : events_of(events, "received")) {
    const int child = int_of(*e, "pid");
    for (const json& o : array_of(*e, "objects")) {
      const std::string origin = text_of(o, "origin");
      if (text_of(o, "kind") != "optimizer" || origin.empty() || origin_pid(origin) == child) continue;
      judged.insert(origin);
      const std::string name = fmt::format("{} (made at {}, {})", text_of(o, "class"), text_of(o, "where", "?"),
                                           text_of(o, "path"));
      names.emplace(origin, name);
      const json state = o.value("state", json::object());
      exposure += int_of(state, "entries") - int_of(state, "empty_entries");
      const auto parent = handed.find(origin);
      const StateKinds before = parent != handed.end() ? kinds_of(parent->second->value("state", json::object())) : StateKinds{};
      if (judge_received_state(events, o, child, name, before, failures)) {
        failing.insert(origin);
        exposure = std::max(exposure, 1.0);
      }
    }
  }
  for (const std::string& origin : judged) {
    const auto parent = handed.find(origin);
    if (failing.count(origin) || parent == handed.end()) continue;
    exposure += judge_counters(events, origin, state_of(*parent->second), names[origin], failures);
  }
  f.to_raise[std::string(checks::kOptimizerStateShared)] = "a program that hands an optimizer with state to children";
  const Exposure seen{exposure, "optimizer state entries and counters compared across processes"};
  if (failures.empty()) {
    f.checks.push_back(Check{checks::kOptimizerStateShared, Verdict::kPass, 0.0,
                             judged.empty() ? std::string("no optimizer was handed to a child")
                                            : fmt::format("{} optimizer(s) shared with children; every state entry "
                                                          "they received is in shared memory, and every counter that "
                                                          "advanced in them advanced in the parent's copy too",
                                                          judged.size()),
                             seen});
  } else {
    f.checks.push_back(Check{checks::kOptimizerStateShared, Verdict::kFail, static_cast<double>(failures.size()),
                             fmt::format("{}", fmt::join(failures.lines(), "; ")), seen});
  }
  if (judged.empty()) return;

  // Lost increments of each shared step counter: step() calls in every process against how far the
  // counter moved.
  double lost_total = 0;
  for (const std::string& origin : judged) {
    double steps = 0, final_counter = -1;
    int stepping = 0;
    bool shared_counter = true;
    std::string name;
    for (const json* end : events_of(events, "end")) {
      if (const json* use = optimizer_report(*end, origin)) {
        steps += number_of(*use, "steps");
        stepping += number_of(*use, "steps") > 0;
        name = fmt::format("{} (made at {})", text_of(*use, "class"), text_of(*use, "where", "?"));
        const json state = use->value("state", json::object());
        if (has_number(state, "counter")) final_counter = std::max(final_counter, number_of(state, "counter"));
        const StateKinds k = kinds_of(state);
        shared_counter &= !std::count(k.numbers.begin(), k.numbers.end(), "step") &&
                          !std::count(k.privates.begin(), k.privates.end(), "step");
      }
      for (const json& h : array_of(*end, "handed")) {
        if (text_of(h, "origin") == origin && h.contains("state") && has_number(h["state"], "counter")) {
          final_counter = std::max(final_counter, number_of(h["state"], "counter"));
        }
      }
    }
    const auto parent = handed.find(origin);
    const double initial = parent != handed.end() ? number_of(parent->second->value("state", json::object()), "counter", 0) : 0;
    if (stepping < 2 || final_counter < 0 || !shared_counter || steps <= 0) continue;
    const double advanced = final_counter - initial;
    const double lost = std::max(0.0, steps - advanced);
    lost_total += lost;
    f.notes.push_back(lost > 0 ? fmt::format("{}: {:.0f} step() calls in {} processes, its shared step counter advanced "
                                             "{:.0f}: {:.0f} increment(s) lost to concurrent unlocked steps ({:.2f} %)",
                                             name, steps, stepping, advanced, lost, 100.0 * lost / steps)
                               : fmt::format("{}: {:.0f} step() calls in {} processes, its shared step counter advanced "
                                             "{:.0f}: no increment lost",
                                             name, steps, stepping, advanced));
  }
  f.metrics["optimizer_lost_increments"] = lost_total;
}

}  // namespace sharebench::exec_checks
