// model-learned in a user's program: a model the parent handed to children who stepped its
// parameters with an optimizer changed, in the parent, after they ran. Reads the "handoff" events'
// fingerprints and the parent's "end".
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/handed_models.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

// Judged from the two ends, whatever the cause: a model the parent handed to children who stepped
// its parameters with an optimizer must differ, in the parent, after they ran. Children that
// trained a private copy are updates-shared's finding already and are left to it; a model nobody
// stepped (a frozen teacher, a model only evaluated) is not judged.
void judge_model_learned(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
  const auto models = handed_models(events);
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

}  // namespace sharebench::exec_checks
