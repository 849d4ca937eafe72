// sharing_findings: the rules that turn sharebench_watch.py's events into checks, notes and the
// process table's missing rows. Each rule reads only the events (and the table) it names.
#include "wings/exec/sharing_findings.h"
#include "wings/exec/exec_check_ids.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/test_attribution.h"
#include "harness/util/bounded_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

namespace {
using nlohmann::json;

std::string text_of(const json& j, const char* key, const std::string& otherwise = "") {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}
double number_of(const json& j, const char* key, double otherwise = 0) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}
int int_of(const json& j, const char* key, int otherwise = 0) {
  return static_cast<int>(number_of(j, key, otherwise));
}
bool has_number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number();
}
const json& array_of(const json& j, const char* key) {
  static const json empty = json::array();
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

std::vector<const json*> events_of(const std::vector<json>& events, const char* kind) {
  std::vector<const json*> out;
  for (const json& e : events) {
    if (text_of(e, "event") == kind) out.push_back(&e);
  }
  return out;
}

const json* last_event_of(const std::vector<json>& events, const char* kind, int pid) {
  const json* found = nullptr;
  for (const json& e : events) {
    if (text_of(e, "event") == kind && int_of(e, "pid") == pid) found = &e;
  }
  return found;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

std::string signal_word(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

// "exited 1", "killed by SIGKILL" from a multiprocessing exit code (negative: the signal).
std::string exit_words(int code) { return code >= 0 ? fmt::format("exited {}", code) : fmt::format("killed by {}", signal_word(-code)); }

// Where a child was started: the handoff event for it names the line of start().
std::string started_at(const std::vector<json>& events, int child) {
  for (const json& e : events) {
    if (text_of(e, "event") == "handoff" && int_of(e, "child") == child) return text_of(e, "where", "?");
  }
  for (const json& e : events) {  // a forked child without a Process (os.fork): the line that forked
    if (text_of(e, "event") == "start" && int_of(e, "pid") == child && e.contains("fork") && e["fork"].is_object()) {
      return text_of(e["fork"], "where", "?");
    }
  }
  return "?";
}

std::string key_list(const std::vector<std::string>& keys) {
  std::vector<std::string> quoted;
  for (const std::string& k : keys) quoted.push_back(fmt::format("state['{}']", k));
  return fmt::format("{}", fmt::join(quoted, ", "));
}

// Findings that differ only in the process they happened in, said once with every pid: a template
// holds "{pids}" where the processes go.
class GroupedFindings {
 public:
  void add(const std::string& text_with_pids, int pid) {
    auto& pids = by_text_[text_with_pids];
    if (pids.empty()) order_.push_back(text_with_pids);
    pids.push_back(pid);
  }
  bool empty() const { return order_.empty(); }
  std::size_t size() const { return order_.size(); }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const std::string& text : order_) {
      const std::vector<int>& pids = by_text_.at(text);
      const std::string who = fmt::format("{} {}", pids.size() == 1 ? "pid" : "pids", fmt::join(pids, ", "));
      std::string line = text;
      for (std::size_t at; (at = line.find("{pids}")) != std::string::npos;) line.replace(at, 6, who);
      out.push_back(line);
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<int>> by_text_;
  std::vector<std::string> order_;
};

// --- fork safety ---------------------------------------------------------------------------------
void judge_forks(const std::vector<json>& events, SharingFindings& f) {
  int forks = 0;
  std::map<std::string, std::vector<std::string>> hazards, threads_alive, cuda;
  for (const json* e : events_of(events, "start")) {
    if (!e->value("forked", false) || !e->contains("fork") || !(*e)["fork"].is_object()) continue;
    const json& fork = (*e)["fork"];
    if (!fork.value("torch", false)) continue;
    ++forks;
    const int child = int_of(*e, "pid");
    const std::string where = text_of(fork, "where", "?");
    const int pool = int_of(fork, "pool_threads");
    const int intra = int_of(fork, "intra_op", 1);
    if (pool > 0 && intra > 1) {
      // A child that dropped to one intra-op thread before its own parallel work (DataLoader's
      // workers do, first thing) never waits for the pool: only a child still at more than one is
      // at risk, or one that never said (it hung or was killed).
      const json* end = last_event_of(events, "end", child);
      const bool dropped = end && has_number(*end, "intra_op") && int_of(*end, "intra_op") <= 1;
      if (!dropped) {
        hazards[where].push_back(fmt::format("pid {} (parent {}: {} pool thread(s), {} intra-op threads{})", child,
                                             int_of(*e, "ppid"), pool, intra,
                                             end ? fmt::format("; the child ran with {}", int_of(*end, "intra_op", intra))
                                                 : "; the child never ended by itself"));
      }
    }
    if (fork.value("cuda", false)) cuda[where].push_back(fmt::format("pid {}", child));
    if (!array_of(fork, "python_threads").empty()) {
      threads_alive[where].push_back(fmt::format("{}", fmt::join(array_of(fork, "python_threads"), ", ")));
    }
  }
  const Exposure seen{static_cast<double>(forks), "forks of Python processes with torch loaded"};
  f.to_raise[std::string(checks::kForkSafety)] = "a program that forks after importing torch";
  if (forks == 0) {
    f.checks.push_back(Check{checks::kForkSafety, Verdict::kPass, 0.0, "no Python process forked with torch loaded", seen});
    return;
  }
  for (const auto& [where, who] : cuda) {
    f.notes.push_back(fmt::format("CUDA was initialised in the process that forked at {} ({}): a forked child cannot use "
                                  "CUDA (use spawn or forkserver)",
                                  where, fmt::join(who, ", ")));
  }
  for (const auto& [where, names] : threads_alive) {
    std::set<std::string> distinct(names.begin(), names.end());
    f.notes.push_back(fmt::format("{} fork(s) at {} with Python threads alive ({}): a lock one of them held stays held "
                                  "in the child",
                                  names.size(), where, fmt::join(distinct, "; ")));
  }
  if (hazards.empty()) {
    f.checks.push_back(Check{checks::kForkSafety, Verdict::kPass, 0.0,
                             fmt::format("{} fork(s) of Python processes with torch loaded, none while OpenMP's pool ran "
                                         "with more than one intra-op thread",
                                         forks),
                             seen});
    return;
  }
  std::vector<std::string> parts;
  std::size_t count = 0;
  for (const auto& [where, who] : hazards) {
    count += who.size();
    parts.push_back(fmt::format("forked at {} while native threads started after torch's import (OpenMP's intra-op pool) "
                                "were alive: {}",
                                where, fmt::join(who, ", ")));
  }
  f.checks.push_back(Check{checks::kForkSafety, Verdict::kFail, static_cast<double>(count),
                           fmt::format("{}; a forked child's first parallel op can wait forever for threads it does not "
                                       "have (libgomp). Call torch.set_num_threads(1) before forking, or use spawn or "
                                       "forkserver",
                                       fmt::join(parts, "; ")),
                           seen});
}

// --- what children received ----------------------------------------------------------------------
// Where the program called share_memory() on the module a child received at `path`, or "".
std::string share_memory_called_at(const std::vector<json>& events, int child, const std::string& path) {
  for (const json* e : events_of(events, "received")) {
    if (int_of(*e, "pid") != child) continue;
    for (const json& o : array_of(*e, "objects")) {
      if (text_of(o, "path") == path) return text_of(o, "share_memory_at");
    }
  }
  return "";
}

// Whether a process's end event says it stepped an optimizer.
bool stepped_an_optimizer(const std::vector<json>& events, int pid) {
  const json* end = last_event_of(events, "end", pid);
  if (!end) return false;
  for (const json& o : array_of(*end, "optimizers")) {
    if (int_of(o, "steps") > 0) return true;
  }
  return false;
}

// Whether the child `pid` received the object at `path` with every parameter tensor in shared memory.
bool received_shared(const std::vector<json>& events, int pid, const std::string& path) {
  for (const json* e : events_of(events, "received")) {
    if (int_of(*e, "pid") != pid) continue;
    for (const json& o : array_of(*e, "objects")) {
      if (text_of(o, "path") == path && int_of(o, "params") > 0 && int_of(o, "shared") >= int_of(o, "params")) return true;
    }
  }
  return false;
}

void judge_received_modules(const std::vector<json>& events, SharingFindings& f) {
  int received = 0, trained_in = 0;
  for (const json* e : events_of(events, "received")) {
    int modules = 0;
    for (const json& o : array_of(*e, "objects")) modules += text_of(o, "kind") == "module";
    received += modules;
    if (stepped_an_optimizer(events, int_of(*e, "pid"))) trained_in += modules;
  }
  f.to_raise[std::string(checks::kUpdatesShared)] = "a program whose children train a model they received";
  GroupedFindings failures;
  bool converted_after_sharing = false;
  bool rebound_only = true;  // every failure a shared module rebound in the child: its own advice says the fix
  for (const json* e : events_of(events, "end")) {
    const int pid = int_of(*e, "pid");
    for (const json& c : array_of(*e, "changed")) {
      const int params = int_of(c, "params"), shared = int_of(c, "shared");
      if (shared >= params) {  // trained in place in shared memory; by an optimizer it is counted above
        if (!c.value("by_optimizer", false) && !stepped_an_optimizer(events, pid)) ++trained_in;
        continue;
      }
      const std::string what = fmt::format("{} ({}, {} of {} parameter tensors in shared memory)", text_of(c, "class"),
                                           text_of(c, "path"), shared, params);
      const std::string who = fmt::format("pid {} (started at {})", pid, started_at(events, pid));
      if (e->value("distributed", false)) {
        f.notes.push_back(fmt::format("{} trained its private copy of {} and used torch.distributed: its replicas are "
                                      "kept in step by collectives, not by shared memory",
                                      who, what));
      } else if (c.value("state_dict_taken", false)) {
        f.notes.push_back(fmt::format("{} changed its private copy of {} and took its state_dict(): its updates reach "
                                      "the parent only if it hands them back",
                                      who, what));
      } else if (c.value("by_optimizer", false)) {
        // share_memory() called, and the parameters private all the same: a conversion after it
        // (.double(), .half(), .to(...)) made new tensors, which are not shared.
        const std::string shared_at = share_memory_called_at(events, pid, text_of(c, "path"));
        failures.add(fmt::format("{{pids}} (started at {}) trained its own copy of {}: its updates never reach the parent{}",
                                 started_at(events, pid), what,
                                 shared_at.empty() ? ""
                                                   : fmt::format(" (share_memory() was called at {}, but a conversion after "
                                                                 "it, such as .double(), .half() or .to(...), replaced the "
                                                                 "parameters with new private tensors: call share_memory() "
                                                                 "after converting)",
                                                                 shared_at)),
                     pid);
        if (!shared_at.empty()) converted_after_sharing = true;
        rebound_only = false;
      } else if (received_shared(events, pid, text_of(c, "path"))) {
        // Shared when it came, private at the end, changed by no optimizer: the child bound its
        // parameters to new tensors (p.data = p.data - lr * p.grad, param = ..., .to(...)), and
        // trained those from then on.
        ++trained_in;
        failures.add(fmt::format("{{pids}} (started at {}) received {} ({}) with its {} parameter tensors in shared memory, "
                                 "and by its end {} of them were there: it bound them to new private tensors and went on "
                                 "changing those. An assignment such as `p.data = p.data - lr * p.grad` (or `param = ...`, "
                                 "`.to(...)`) makes a new tensor, so its updates never reached the shared model. Update in "
                                 "place instead: `p.data.sub_(lr * p.grad)`, or under torch.no_grad() `p -= lr * p.grad`, or "
                                 "use a torch.optim optimizer",
                                 started_at(events, pid), text_of(c, "class"), text_of(c, "path"), params, shared),
                     pid);
      } else {
        f.notes.push_back(fmt::format("{} changed its private copy of {} without an optimizer: those changes never "
                                      "reach the parent",
                                      who, what));
      }
    }
  }
  // Modules children stepped with an optimizer, and shared ones they changed without one.
  const Exposure seen{static_cast<double>(trained_in), "modules received by children that trained them"};
  const std::string advice = converted_after_sharing ? std::string("Call model.share_memory() after the model's last "
                                                                     "conversion and before starting the workers")
                                                       : std::string("Call model.share_memory() before starting the "
                                                                     "workers");
  if (failures.empty()) {
    f.checks.push_back(Check{checks::kUpdatesShared, Verdict::kPass, 0.0,
                             fmt::format("{} module(s) handed to children; none was trained as a private copy", received),
                             seen});
  } else {
    f.checks.push_back(Check{checks::kUpdatesShared, Verdict::kFail, static_cast<double>(failures.size()),
                             rebound_only ? fmt::format("{}", fmt::join(failures.lines(), "; "))
                                          : fmt::format("{}. {} (under fork a child's copy of an unshared model is its own)",
                                                        fmt::join(failures.lines(), "; "), advice),
                             seen});
  }
}

// --- learning: did the parent's model change where children stepped it? --------------------------
// Judged from the two ends, whatever the cause: a model the parent handed to children who stepped
// its parameters with an optimizer must differ, in the parent, after they ran. Children that
// trained a private copy are updates-shared's finding already and are left to it; a model nobody
// stepped (a frozen teacher, a model only evaluated) is not judged.
struct HandedModel {
  int parent = 0;
  std::string cls, where;
  std::vector<int> children;
  long long steps = 0;
};

bool trained_a_private_copy(const json& end, const std::string& path) {
  for (const json& c : array_of(end, "changed")) {
    if (text_of(c, "path") == path && int_of(c, "shared") < int_of(c, "params") && c.value("by_optimizer", false)) return true;
  }
  return false;
}

void judge_learning(const std::vector<json>& events, SharingFindings& f) {
  std::map<std::pair<int, std::string>, std::pair<int, long long>> handed_to;  // (child, path) -> (parent, oid)
  std::map<std::pair<int, long long>, HandedModel> models;                     // (parent, oid) -> what became of it
  for (const json* e : events_of(events, "handoff")) {
    for (const json& o : array_of(*e, "objects")) {
      if (!o.contains("oid") || !o["oid"].is_number_integer()) continue;
      const std::pair<int, long long> key{int_of(*e, "pid"), o["oid"].get<long long>()};
      handed_to[{int_of(*e, "child"), text_of(o, "path")}] = key;
      HandedModel& m = models[key];
      m.parent = key.first;
      m.cls = text_of(o, "class");
      if (m.where.empty()) m.where = text_of(*e, "where");
    }
  }
  for (const json* e : events_of(events, "end")) {
    const int child = int_of(*e, "pid");
    for (const json& t : array_of(*e, "trained")) {
      const auto it = handed_to.find({child, text_of(t, "path")});
      if (it == handed_to.end() || trained_a_private_copy(*e, text_of(t, "path"))) continue;
      HandedModel& m = models[it->second];
      m.children.push_back(child);
      m.steps += int_of(t, "steps");
    }
  }
  int judged = 0;
  std::vector<std::string> failures;
  for (const auto& [key, m] : models) {
    if (m.children.empty()) continue;
    const json* end = last_event_of(events, "end", m.parent);
    if (end == nullptr) continue;  // the parent did not end by itself: nothing to compare
    for (const json& h : array_of(*end, "handed_models")) {
      if (!h.contains("oid") || !h["oid"].is_number_integer() || h["oid"].get<long long>() != key.second) continue;
      if (!h.contains("changed") || !h["changed"].is_boolean()) continue;  // too large to fingerprint
      ++judged;
      if (h["changed"].get<bool>()) continue;
      failures.push_back(fmt::format("{} (handed over at {}) was stepped {} times in all by pids {}, and the parent's "
                                     "copy never changed: none of their updates reached it",
                                     m.cls, m.where, m.steps, fmt::join(m.children, ", ")));
    }
  }
  const Exposure seen{static_cast<double>(judged), "models handed to children who stepped them, compared in the parent"};
  f.to_raise[std::string(checks::kModelLearned)] = "a program whose children step an optimizer over a model the parent "
                                                   "handed them, and whose parent ends after them";
  if (failures.empty()) {
    const std::string said = judged == 0 ? std::string("no model the parent handed over was stepped by a child")
                                         : fmt::format("{} handed model(s) stepped by children; each changed in the parent",
                                                       judged);
    f.checks.push_back(Check{checks::kModelLearned, Verdict::kPass, 0.0, said, seen});
    return;
  }
  f.checks.push_back(Check{checks::kModelLearned, Verdict::kFail, static_cast<double>(failures.size()),
                           fmt::format("{}. The children computed steps that changed nothing here: look at what the step "
                                       "applies (a learning rate of 0, as a warm-up with integer division gives; "
                                       "gradients that never reach these parameters; parameters restored after the step)",
                                       fmt::join(failures, "; ")),
                           seen});
}

// --- shared optimizers ---------------------------------------------------------------------------
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

void judge_shared_optimizers(const std::vector<json>& events, SharingFindings& f) {
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

void judge_gradients(const std::vector<json>& events, SharingFindings& f) {
  int judged = 0, compared = 0;
  GroupedFindings failures;
  // Children whose optimizer applied gradients in shared memory: two or more of them add into and
  // clear the same .grad buffers (one alone shares them with nobody).
  int on_shared_grads = 0;
  for (const json* e : events_of(events, "end")) {
    if (text_of(*e, "role") != "child") continue;
    for (const json& o : array_of(*e, "optimizers")) on_shared_grads += int_of(o, "shared_grad_steps") > 0;
  }
  for (const json* e : events_of(events, "end")) {
    if (text_of(*e, "role") != "child") continue;
    const int pid = int_of(*e, "pid");
    for (const json& o : array_of(*e, "optimizers")) {
      const int steps = int_of(o, "steps"), params = int_of(o, "params"), shared = int_of(o, "shared");
      if (steps == 0 || params == 0 || shared < params) continue;  // only optimizers over shared parameters
      ++judged;
      const std::string name = fmt::format("{} (made at {}) in {{pids}}", text_of(o, "class"), text_of(o, "where", "?"));
      const int sampled = int_of(o, "sampled"), same = int_of(o, "same_grad"), none = int_of(o, "no_grad_steps");
      const int zero = int_of(o, "zero_grad_steps"), carried = int_of(o, "carried"), checks = int_of(o, "carry_checks");
      const int backwards = int_of(o, "backwards");
      compared += sampled + none + checks;
      if (on_shared_grads >= 2 && int_of(o, "shared_grad_steps") > 0) {
        failures.add(fmt::format("{} stepped on gradients in shared memory ({} of its sampled steps): the parameters' "
                                 ".grad buffers came shared from the parent (a backward() before share_memory() puts "
                                 "them there with the parameters, and fork hands them to every worker), so every "
                                 "worker's backward() adds into, and zero_grad() clears, the same buffers while the "
                                 "others step on them. Free the gradients before sharing: model.zero_grad(set_to_none="
                                 "True) (or p.grad = None) before model.share_memory()",
                                 name, int_of(o, "shared_grad_steps")),
                     pid);
      } else if (sampled == 0 && none > 0) {
        failures.add(fmt::format("{} stepped without a gradient on any parameter: the workers' gradients never "
                                 "reach the shared model",
                                 name),
                     pid);
      } else if (sampled >= 4 && zero == sampled && backwards > 0) {
        failures.add(fmt::format("{} stepped on all-zero gradients at every step it was sampled at ({} of {} steps) "
                                 "while the process ran backward() {} times: the gradients it computes are not the "
                                 "ones it applies (cleared after they were linked or copied, or linked before "
                                 "backward() made new ones)",
                                 name, sampled, steps, backwards),
                     pid);
      } else if (sampled - zero >= 4 && same == sampled - zero - 1) {
        failures.add(fmt::format("{} stepped on the very same gradient at every step it was sampled at ({} of {} "
                                 "steps): gradients linked into the shared model once and then replaced locally (e.g. "
                                 "zero_grad(set_to_none=True) gives each backward() a new .grad) are never updated "
                                 "again",
                                 name, sampled, steps),
                     pid);
      } else if (carried >= 2) {
        failures.add(fmt::format("{} applied a running sum: at {} of the {} steps compared, the gradient it applied "
                                 "was the one it had applied the step before, never cleared, with the next backward() "
                                 "added to it, so every step re-applies all earlier gradients (clear the gradients "
                                 "backward() writes into, the local model's too, every step: model.zero_grad() as "
                                 "well as optimizer.zero_grad() when set_to_none only unlinks the shared ones)",
                                 name, carried, checks),
                     pid);
      }
    }
  }
  f.to_raise[std::string(checks::kGradsDelivered)] = "a program whose children step an optimizer over shared parameters";
  const Exposure seen{static_cast<double>(compared), "optimizer steps in children whose gradients were compared"};
  if (failures.empty()) {
    f.checks.push_back(Check{checks::kGradsDelivered, Verdict::kPass, 0.0,
                             judged == 0 ? std::string("no child stepped an optimizer over shared parameters")
                                         : fmt::format("{} optimizer(s) over shared parameters stepped in children, each "
                                                       "on the gradients backward() had just computed: changing from "
                                                       "step to step, not zero, not a running sum",
                                                       judged),
                             seen});
  } else {
    f.checks.push_back(Check{checks::kGradsDelivered, Verdict::kFail, static_cast<double>(failures.size()),
                             fmt::format("{}", fmt::join(failures.lines(), "; ")), seen});
  }
}

// --- deaths ---------------------------------------------------------------------------------------
// A child that died (an uncaught exception: its traceback; or a signal) counts as noticed when the
// program read its exit code (Process.exitcode: its own code, mp.spawn's join), ended it itself
// (terminate, kill: Pool, DataLoader, multiprocessing's exit function), or its parent failed in turn:
// raised an exception that names it (a DataLoader's "worker (pid 24529) is killed by signal", read
// by torch's SIGCHLD handler, not through exitcode) or ended in failure itself (a DataLoader's
// "worker (pid(s) 667) exited unexpectedly" names the one it looked at first; at the top, the
// program's own failure is exit-status's). Otherwise the program went on without a worker and the
// run says nothing: that is the finding; the parent that failed is judged in turn by its own parent.
void judge_deaths(const std::vector<json>& events, const std::vector<ProcessRecord>& processes, const SharingContext& m,
                  SharingFindings& f) {
  std::set<int> observed, ended_by_program;
  for (const json* e : events_of(events, "observed")) observed.insert(int_of(*e, "child"));
  for (const json* e : events_of(events, "terminated")) ended_by_program.insert(int_of(*e, "child"));
  std::map<int, const ProcessRecord*> by_pid;
  for (const ProcessRecord& p : processes) by_pid[p.pid] = &p;
  const auto failed = [](const ProcessRecord& p) {
    return p.end.rfind("exited 0", 0) != 0 && p.end.rfind("ended", 0) != 0;
  };
  // Who started each child: the process that called start() (its handoff), which under forkserver
  // is not its parent in the process table (the forkserver forked it).
  std::map<int, int> starter;
  for (const json* e : events_of(events, "handoff")) starter[int_of(*e, "child")] = int_of(*e, "pid");
  // Its parent (the one that started it) failed: ended in failure, or its own uncaught exception
  // names the child's pid as a word of its own.
  const auto parent_failed = [&](const ProcessRecord& child) {
    const auto started_by = starter.find(child.pid);
    const auto parent = by_pid.find(started_by != starter.end() ? started_by->second : child.ppid);
    if (parent == by_pid.end()) return false;
    if (parent->second->role == "child" && failed(*parent->second)) return true;
    if (parent->second->error.empty()) return false;
    const std::string& text = parent->second->error;
    const std::string pid = std::to_string(child.pid);
    for (std::size_t at = text.find(pid); at != std::string::npos; at = text.find(pid, at + 1)) {
      const bool starts = at == 0 || !std::isdigit(static_cast<unsigned char>(text[at - 1]));
      const bool ends = at + pid.size() == text.size() || !std::isdigit(static_cast<unsigned char>(text[at + pid.size()]));
      if (starts && ends) return true;
    }
    return false;
  };
  bool program_failed = false;
  for (const ProcessRecord& p : processes) {
    if (p.role == "program") program_failed = failed(p);
  }
  int ended = 0;
  std::vector<std::string> unnoticed;
  for (const ProcessRecord& p : processes) {
    if (p.role != "child") continue;
    const bool by_signal = p.end.rfind("killed by SIG", 0) == 0;
    const bool by_exit = p.end.rfind("exited ", 0) == 0;
    if (!by_signal && !by_exit) continue;
    ++ended;
    const bool died = by_signal || (p.end != "exited 0" && !p.error.empty());
    if (!died || observed.count(p.pid) || ended_by_program.count(p.pid) || parent_failed(p)) continue;
    unnoticed.push_back(fmt::format("pid {} (started at {}) {}{}", p.pid, started_at(events, p.pid), p.end,
                                    p.error.empty() ? "" : fmt::format(": {}", last_line(p.error))));
  }
  f.to_raise[std::string(checks::kDeathsNoticed)] = "a program whose children end while it runs";
  const Exposure seen{static_cast<double>(ended), "child processes seen to end"};
  if (unnoticed.empty() || program_failed || m.harness_ended_it) {
    f.checks.push_back(Check{checks::kDeathsNoticed, Verdict::kPass, 0.0,
                             unnoticed.empty() ? fmt::format("{} child process(es) ended; none died unnoticed", ended)
                                               : fmt::format("{} child(ren) died, and {}", unnoticed.size(),
                                                             program_failed ? "the program failed too (exit-status)"
                                                                            : "the harness had ended the run"),
                             seen});
    return;
  }
  f.checks.push_back(Check{checks::kDeathsNoticed, Verdict::kFail, static_cast<double>(unnoticed.size()),
                           fmt::format("{} child process(es) died and the program went on as if they had not (it never "
                                       "read their exit codes and exited 0): {}. Check each worker's exitcode after "
                                       "join() and fail when one is not 0, or use torch.multiprocessing.spawn, which "
                                       "re-raises a rank's exception",
                                       unnoticed.size(), fmt::join(unnoticed, "; ")),
                           seen});
}

// --- memory inherited at a fork, copied ------------------------------------------------------------
constexpr double kInheritedCopiedFailMb = 64;

void judge_copy_on_read(const std::vector<json>& events, SharingFindings& f) {
  int measured = 0;
  double most = 0;
  std::vector<std::string> copied;
  for (const json* e : events_of(events, "end")) {
    if (!has_number(*e, "inherited_private_kb")) continue;
    ++measured;
    const int pid = int_of(*e, "pid");
    const double mb = number_of(*e, "inherited_private_kb") / 1024.0;
    const double resident_mb = number_of(*e, "inherited_resident_kb") / 1024.0;
    most = std::max(most, mb);
    // Both a size and a share: every forked child copies some pages (the interpreter's own objects,
    // about 27 MiB with torch loaded); a child that copied a third of what it inherited reads data.
    if (mb >= kInheritedCopiedFailMb && mb * 3 >= resident_mb) {
      copied.push_back(fmt::format("pid {} (started at {}) {:.0f} MiB of the {:.0f} MiB it inherited", pid,
                                   started_at(events, pid), mb, resident_mb));
    }
  }
  f.metrics["inherited_copied_mb_max"] = most;
  f.to_raise[std::string(checks::kCopyOnRead)] = "a program whose forked children read what their parent built";
  const Exposure seen{static_cast<double>(measured), "forked children measured at their end"};
  if (copied.empty()) {
    f.checks.push_back(Check{checks::kCopyOnRead, Verdict::kPass, most,
                             fmt::format("no forked child copied {:.0f} MiB or more, and a third or more, of what it "
                                         "inherited (the most: {:.0f} MiB)",
                                         kInheritedCopiedFailMb, most),
                             seen});
    return;
  }
  f.checks.push_back(Check{checks::kCopyOnRead, Verdict::kFail, most,
                           fmt::format("{} forked child(ren) made private, page by page, memory they inherited from "
                                       "their parent: {}. Reading a Python object writes its reference count, so a "
                                       "Dataset of Python lists, dicts or strings is copied into every worker that "
                                       "reads it (pytorch#13246): keep such data in numpy arrays or tensors, which "
                                       "stay shared",
                                       copied.size(), fmt::join(copied, "; ")),
                           seen});
}

// --- headroom
constexpr double kSmallDevShmMb = 512;  // a /dev/shm smaller than this is said before anything fails ------------------------------------------------------------------------------------
void judge_headroom(const std::vector<json>& events, const std::vector<ProcessRecord>& processes,
                    const SharingContext& m, SharingFindings& f) {
  const double used = std::max(0.0, m.dev_shm_used_mb_peak - m.dev_shm_used_mb_before);
  f.metrics["dev_shm_used_mb_peak"] = used;
  if (m.dev_shm_size_mb > 0 && m.dev_shm_size_mb < kSmallDevShmMb) {
    f.notes.push_back(fmt::format("/dev/shm is only {:.0f} MiB (Docker's default is 64 MiB): every tensor shared "
                                  "between processes lives there, and past its size a worker dies of SIGBUS or fails "
                                  "with 'No space left on device' (docker run --shm-size=2g)",
                                  m.dev_shm_size_mb));
  }
  if (m.dev_shm_size_mb > 0 && used > 0.5 * m.dev_shm_size_mb) {
    f.notes.push_back(fmt::format("/dev/shm: the program used up to {:.0f} MiB of its {:.0f} MiB: shared tensors past "
                                  "that fail with 'No space left on device' (Docker's default is 64 MiB)",
                                  used, m.dev_shm_size_mb));
  }
  // Each process against its own limit, as it stood when the process was nearest it (a process may
  // lower its limit after it held more).
  std::vector<std::string> crowded;
  for (const ProcessRecord& p : processes) {
    if (p.fd_limit > 0 && p.fds_nearest_limit > p.fd_limit / 2) {
      crowded.push_back(fmt::format("pid {} held {} of its {}", p.pid, p.fds_nearest_limit, p.fd_limit));
    }
  }
  if (!crowded.empty()) {
    f.notes.push_back(fmt::format("open descriptors near RLIMIT_NOFILE: {} (the file_descriptor sharing strategy keeps one "
                                  "per shared storage received: 'Too many open files' past the limit; raise it or use "
                                  "file_system)",
                                  fmt::join(crowded, "; ")));
  }
  // Intra-op threads of the processes alive at once, against the cores.
  struct Span {
    double from, to;
    int threads;
  };
  // A process's span runs from its start event to its last event; its threads are the latest it
  // reported (at torch's import, at a fork into it, at its end). A process that started Python
  // children is left out: a parent mostly waits for its workers.
  std::map<int, Span> spans;
  std::set<int> parents;
  for (const json& e : events) {
    if (text_of(e, "event") == "start") parents.insert(int_of(e, "ppid"));
  }
  for (const json& e : events) {
    const std::string kind = text_of(e, "event");
    const double t = number_of(e, "t");
    Span& s = spans.try_emplace(int_of(e, "pid"), Span{t, t, 0}).first->second;
    s.from = std::min(s.from, t);
    s.to = std::max(s.to, t);
    // The latest figure a process reported: a worker that set one thread ran with one.
    if ((kind == "torch" || kind == "end") && has_number(e, "intra_op")) s.threads = int_of(e, "intra_op");
    if (kind == "start" && e.contains("fork") && e["fork"].is_object() && has_number(e["fork"], "intra_op")) {
      s.threads = int_of(e["fork"], "intra_op");
    }
  }
  for (const int p : parents) spans.erase(p);
  // The most threads at any one moment: a sweep over the spans' ends (a start before an end at the
  // same instant). Summing every span that overlaps a given one would add up processes that never
  // met: a long-lived one overlaps a hundred short workers that ran one after another.
  int most = 0, threads_max = 0, now = 0;
  std::vector<std::pair<double, int>> edges;  // (time, +threads at a start or -threads at an end)
  for (const auto& [pid, a] : spans) {
    edges.emplace_back(a.from, a.threads);
    edges.emplace_back(a.to, -a.threads);
    threads_max = std::max(threads_max, a.threads);
  }
  std::sort(edges.begin(), edges.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  for (const auto& [t, delta] : edges) {
    now += delta;
    most = std::max(most, now);
  }
  if (!spans.empty()) f.metrics["intra_op_threads_max"] = threads_max;
  if (most > m.cores) {
    f.notes.push_back(fmt::format("up to {} intra-op threads in processes alive at once on {} core(s): oversubscribed "
                                  "(torch.set_num_threads in each worker)",
                                  most, m.cores));
  }
  for (const json* e : events_of(events, "hook-error")) {
    f.notes.push_back(fmt::format("the sharing hooks failed in pid {} ({}): {}; the program went on, unwatched there",
                                  int_of(*e, "pid"), text_of(*e, "where"), text_of(*e, "error")));
  }
}
}  // namespace

std::vector<json> read_sharing_events(const std::string& path) {
  // A flood (a program that writes the events file itself, or a file repeated) must not cost the
  // rules' time per event pair: lines seen before are skipped, a process's reports of shared state
  // are kept only as its last one (each holds all it saw), each process keeps at most
  // kMaxEventsPerKind events of a kind, and the file at most kMaxEvents; what was left out is said
  // once, in a note.
  constexpr std::size_t kMaxEvents = 100000, kMaxEventsPerKind = 2048;
  std::vector<json> events;
  std::unordered_set<std::size_t> seen;
  std::map<std::pair<int, std::string>, std::size_t> per_kind;
  std::map<int, std::size_t> last_state;  // pid -> index of its last shared-state report
  std::size_t duplicates = 0, dropped = 0;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!seen.insert(std::hash<std::string>{}(line)).second) {
      ++duplicates;
      continue;
    }
    try {
      json j = parse_json_bounded(line);  // a program's line: malformed or too deep is skipped
      if (!j.is_object()) continue;
      const int pid = j.contains("pid") && j["pid"].is_number_integer() ? j["pid"].get<int>() : 0;
      const std::string kind = j.contains("event") && j["event"].is_string() ? j["event"].get<std::string>() : "";
      if (kind == "shared-state") {
        if (const auto it = last_state.find(pid); it != last_state.end()) {
          events[it->second] = std::move(j);  // the newer report holds all the older one did
          continue;
        }
        last_state[pid] = events.size();
      }
      if (events.size() >= kMaxEvents || ++per_kind[{pid, kind}] > kMaxEventsPerKind) {
        ++dropped;
        continue;
      }
      events.push_back(std::move(j));
    } catch (const std::exception&) {
    }
  }
  if (duplicates > 0 || dropped > 0) {
    events.push_back(json{{"event", "events-capped"}, {"pid", 0}, {"t", 0.0}, {"duplicates", duplicates}, {"dropped", dropped}});
  }
  return events;
}

void merge_events_into_processes(const std::vector<json>& events, double t0_s, std::vector<ProcessRecord>& processes) {
  auto find = [&](int pid) -> ProcessRecord* {
    for (ProcessRecord& p : processes) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  };
  int next_birth = 0;
  for (const ProcessRecord& p : processes) next_birth = std::max(next_birth, p.birth + 1);
  for (const json& e : events) {
    const std::string kind = text_of(e, "event");
    const int pid = int_of(e, "pid");
    const double at = std::max(0.0, number_of(e, "t") - t0_s);
    if (kind == "start" && !find(pid)) {  // born and gone between two scans
      ProcessRecord p;
      p.pid = pid;
      p.ppid = int_of(e, "ppid");
      p.birth = next_birth++;
      std::vector<std::string> argv;
      for (const json& a : array_of(e, "argv")) {
        if (a.is_string()) argv.push_back(a.get<std::string>());
      }
      p.command = fmt::format("python {}", fmt::join(argv, " "));
      p.role = "child";
      p.python = true;
      p.first_seen_s = p.last_seen_s = at;
      p.end = "ended (too short-lived for the scans; seen by its hooks)";
      processes.push_back(std::move(p));
    }
    ProcessRecord* p = find(kind == "reaped" ? int_of(e, "child") : pid);
    if (!p) continue;
    if (kind == "start" && p->test.empty()) p->test = text_of(e, "test");
    if (kind == "end" || kind == "error") {
      p->last_seen_s = std::max(p->last_seen_s, at);
      if (const std::string error = text_of(e, "error"); !error.empty()) p->error = error;
    }
    const bool generic = p->end.rfind("ended", 0) == 0;
    if (kind == "end" && generic && has_number(e, "code")) p->end = exit_words(int_of(e, "code"));
    if (kind == "reaped" && generic && has_number(e, "code")) p->end = exit_words(int_of(e, "code"));
  }
}

namespace {
// The protocol the hooks spoke, when it is not this runner's: the first start event's (0: none said).
std::optional<int> foreign_protocol(const std::vector<json>& events) {
  for (const json* e : events_of(events, "start")) {
    const int spoken = has_number(*e, "protocol") ? int_of(*e, "protocol") : 0;
    if (spoken != kExecEventsProtocol) return spoken;
  }
  return std::nullopt;
}
}  // namespace

SharingFindings judge_sharing(const std::vector<json>& events, const std::vector<ProcessRecord>& processes,
                              const SharingContext& machine) {
  SharingFindings f;
  if (const auto spoken = foreign_protocol(events)) {
    for (const CheckId id : {checks::kForkSafety, checks::kUpdatesShared, checks::kOptimizerStateShared,
                             checks::kGradsDelivered, checks::kCopyOnRead, checks::kDeathsNoticed, checks::kModelLearned,
                             checks::kLostUpdates, checks::kConsistentSnapshots, checks::kMutualExclusion,
                             checks::kBufferLifetime, checks::kRandomStreams}) {
      f.checks.push_back(Check{id, Verdict::kUnknown, std::nullopt,
                               fmt::format("the program's Python hooks wrote events of protocol {}, and this runner reads "
                                           "protocol {}: a sharebench_watch.py of another version was imported (check "
                                           "PYTHONPATH); nothing was judged",
                                           *spoken, kExecEventsProtocol)});
    }
    return f;
  }
  if (!events_of(events, "torch").empty()) {  // the sharing checks judge what torch did: none without it
    judge_forks(events, f);
    judge_received_modules(events, f);
    judge_learning(events, f);
    judge_shared_optimizers(events, f);
    judge_gradients(events, f);
    judge_copy_on_read(events, f);
  }
  for (const json* e : events_of(events, "events-capped")) {
    f.notes.push_back(fmt::format("the events file held {} repeated line(s) and {} more than the rules read (at most "
                                  "2 048 of a kind per process, 100 000 in all): something besides the hooks wrote to "
                                  "it, or a process reported far more than a program does; what was left out was not judged",
                                  int_of(*e, "duplicates"), int_of(*e, "dropped")));
  }
  if (!events.empty()) {  // the hooks ran: they saw exit codes read, and what was done to shared state
    judge_deaths(events, processes, machine, f);
    exec_checks::judge_all(events, f);
    attribute_findings_to_tests(tests_by_pid(events), f.checks);  // a test runner's: each finding names its test
  }
  judge_headroom(events, processes, machine, f);
  // The cell is labelled with the forced start method; a child started some other way (an
  // explicit context: mp.get_context("spawn"), torch.multiprocessing.spawn) says the label is not
  // the whole truth.
  if (!machine.forced_start.empty()) {
    std::map<std::string, int> other;
    for (const json* e : events_of(events, "handoff")) {
      const std::string method = text_of(*e, "method");
      if (!method.empty() && method != machine.forced_start) ++other[method];
    }
    for (const auto& [method, count] : other) {
      f.notes.push_back(fmt::format("{} child(ren) were started with {}, not the forced {}: the program asked for that "
                                    "context explicitly (mp.get_context(\"{}\"), torch.multiprocessing.spawn), which "
                                    "--mp-start does not change",
                                    count, method, machine.forced_start, method));
    }
  }
  return f;
}

namespace {
// From faulthandler's dump, the main thread's frames (its last block), innermost first: "file:line in fn".
std::vector<std::pair<std::string, std::string>> main_thread_frames(const std::string& dump) {
  std::vector<std::pair<std::string, std::string>> frames, block;
  std::size_t start = 0;
  while (start < dump.size()) {
    std::size_t end = dump.find('\n', start);
    if (end == std::string::npos) end = dump.size();
    const std::string line = dump.substr(start, end - start);
    start = end + 1;
    if (line.find("(most recent call first)") != std::string::npos) {
      if (!block.empty()) frames = block;
      block.clear();
      continue;
    }
    const auto file = line.find("File \"");
    if (file == std::string::npos) continue;
    const auto close = line.find('"', file + 6);
    const auto lineno = line.find("line ", close);
    const auto in = line.find(" in ", lineno);
    if (close == std::string::npos || lineno == std::string::npos || in == std::string::npos) continue;
    block.emplace_back(fmt::format("{}:{}", line.substr(file + 6, close - file - 6),
                                   line.substr(lineno + 5, in - lineno - 5)),
                       line.substr(in + 4));
  }
  if (!block.empty()) frames = block;
  return frames;
}

// The harness's own hooks (sharebench_watch.py, sharebench_shared_state.py, sharebench_sends.py, ...)
// wrap the program's calls (Process.start, join's poll, a queue's get).
bool hook_file(const std::string& where) {
  constexpr std::string_view kHookFilePrefix = "sharebench_";
  for (std::size_t at = where.find(kHookFilePrefix); at != std::string::npos; at = where.find(kHookFilePrefix, at + 1)) {
    if ((at == 0 || where[at - 1] == '/' || where[at - 1] == '"') && where.find(".py", at) != std::string::npos) return true;
  }
  return false;
}

bool library_file(const std::string& where) {
  if (hook_file(where)) return true;  // never the user's line
  return where.find("/usr/lib/python3") != std::string::npos || where.find("/site-packages/") != std::string::npos ||
         where.find("/dist-packages/") != std::string::npos || where.rfind("<frozen", 0) == 0;
}

std::string short_path(const std::string& where) {
  for (const char* marker : {"/python3/dist-packages/", "/site-packages/", "/dist-packages/"}) {
    if (const auto at = where.find(marker); at != std::string::npos) return where.substr(at + std::strlen(marker));
  }
  if (const auto at = where.find("/python3."); at != std::string::npos) {
    const auto slash = where.find('/', at + 1);
    if (slash != std::string::npos) return where.substr(slash + 1);
  }
  const auto slash = where.rfind('/');
  return slash == std::string::npos ? where : where.substr(slash + 1);
}
}  // namespace

std::string diagnose_program(const std::vector<ProcessRecord>& processes, bool hung) {
  const ProcessRecord* program = nullptr;
  for (const ProcessRecord& p : processes) {
    if (p.role == "program") program = &p;
  }
  std::string first;
  if (program && hung) {
    const auto frames = main_thread_frames(program->python_stack);
    if (!frames.empty()) {
      // The call the program made into a library (the frame just inside its own innermost one):
      // "get (multiprocessing/queues.py:103), called from main.py:117".
      std::size_t user = frames.size();
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (!library_file(frames[i].first)) {
          user = i;
          break;
        }
      }
      if (user == 0) {
        first = fmt::format("the program (pid {}) is at {} in {}", program->pid, short_path(frames[0].first), frames[0].second);
      } else {
        // The library's call, not a hook wrapped around it (a queue's get wrapped by sharebench_sends.py).
        std::size_t callee = user - 1;
        while (callee > 0 && hook_file(frames[callee].first)) --callee;
        const auto& [where, fn] = frames[callee];
        first = fmt::format("the program (pid {}) waits in {} ({}){}", program->pid, fn, short_path(where),
                            user < frames.size() ? fmt::format(", called from {} in {}", short_path(frames[user].first),
                                                               frames[user].second)
                                                 : "");
      }
    } else if (!program->state.empty()) {
      first = fmt::format("the program (pid {}) is stuck: {}", program->pid, program->state.substr(0, 160));
    } else {
      first = fmt::format("the program (pid {}) made no progress", program->pid);
    }
  } else if (program && program->end.rfind("exited 0", 0) != 0 && program->end.rfind("ended", 0) != 0) {
    first = fmt::format("the program {}", program->end);
    if (!program->error.empty()) first += fmt::format(" ({})", last_line(program->error));
  }
  std::vector<std::string> failed;
  for (const ProcessRecord& p : processes) {
    if (p.role != "child") continue;
    const bool bad = (p.end.rfind("exited ", 0) == 0 && p.end != "exited 0") || p.end.rfind("killed by SIG", 0) == 0;
    if (!bad) continue;
    // A SIGBUS in a process that shares tensors is, nearly always, a page of /dev/shm that could not
    // be backed: the filesystem is full (Docker gives it 64 MiB).
    const std::string why = p.end == "killed by SIGBUS" ? " (a SIGBUS while sharing tensors is /dev/shm running out: "
                                                          "check `df -h /dev/shm`; in Docker, --shm-size)"
                                                        : "";
    failed.push_back(fmt::format("pid {} {}{}{}", p.pid, p.end, why,
                                 p.error.empty() ? "" : fmt::format(" ({})", last_line(p.error))));
  }
  if (first.empty() && failed.empty()) return "";
  if (failed.empty()) return first;
  const std::string children = fmt::format("{} of its children ended badly: {}", failed.size(), fmt::join(failed, "; "));
  return first.empty() ? children : fmt::format("{}; {}", first, children);
}

}  // namespace sharebench
