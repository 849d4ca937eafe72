// updates-shared in a user's program: no child trained a module it received whose parameters are
// private to it (never share_memory()'d under fork, or rebound to private tensors by the child itself:
// `p.data = p.data - lr * p.grad`, `.to()`): its updates never reach the parent or its siblings.
// Reads the "handoff", "received" and "end" events.
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

}  // namespace

void judge_updates_shared(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
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
      const std::string who = fmt::format("pid {} (started at {})", pid, child_started_at(events, pid));
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
                                 child_started_at(events, pid), what,
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
                                 child_started_at(events, pid), text_of(c, "class"), text_of(c, "path"), params, shared),
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

}  // namespace sharebench::exec_checks
