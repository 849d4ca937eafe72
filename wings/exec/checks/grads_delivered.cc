// grads-delivered in a user's program: a child's optimizer over shared parameters stepped on the
// gradients its backward() computed: not on none, not on all-zero ones, not on the same one every
// time, not on a running sum a backward() added to uncleared, and not on .grad buffers in shared
// memory that two or more children's backward() write. Reads the optimizer reports of "end".
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

void judge_grads_delivered(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
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
      if (on_shared_grads >= 2 && int_of(o, "shared_grad_steps") > 0 && sampled >= 4 && zero == sampled &&
          backwards > 0) {
        // The shared buffers only ever cleared: this process's backward() writes into gradients of its own.
        failures.add(fmt::format("{} stepped on gradients in shared memory that were zero at every step it was "
                                 "sampled at ({} of {} steps) while the process ran backward() {} times: the .grad "
                                 "buffers came shared from the parent (a backward() before share_memory() puts them "
                                 "there, and fork hands them to every worker), zero_grad() clears them, and backward() "
                                 "writes elsewhere: into a local replica's own gradients (copy.deepcopy(shared_model) "
                                 "copies the .grad it finds, so a link made only where the shared .grad is None, as "
                                 "ensure_shared_grads does, is never made). Free the gradients before sharing: "
                                 "model.zero_grad(set_to_none=True) (or p.grad = None) before model.share_memory()",
                                 name, sampled, steps, backwards),
                     pid);
      } else if (on_shared_grads >= 2 && int_of(o, "shared_grad_steps") > 0) {
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

}  // namespace sharebench::exec_checks
