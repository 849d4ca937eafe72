// trained-model-used in a user's program: after the children it handed a model to had trained it
// and ended, the parent used that model (or an object holding its values) for what it evaluated or
// saved, not another object of the same class with values of its own: a fresh Net() built again, a
// checkpoint a worker saved early loaded into a new object. Reads handed_models() and each handing
// process's "model_uses" (sharebench_model_used.py) in the shared-state view.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/checks/handed_models.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

const json* uses_of(const SharedStateView& view, int parent, long long oid) {
  for (const ProcessSharedState& p : view.processes) {
    if (p.pid != parent || p.model_uses == nullptr) continue;
    for (const json& u : *p.model_uses) {
      if (u.is_object() && u.contains("oid") && u["oid"].is_number_integer() && u["oid"].get<long long>() == oid) return &u;
    }
  }
  return nullptr;
}

// When the last of the model's trainers had ended, as the parent could know it; +inf when one's end
// is unknown (killed, never joined): then nothing after it can be said to be after training.
double trainers_ended(const SharedStateView& view, const HandedModel& m) {
  double last = 0;
  for (int child : m.children) last = std::max(last, view.ended_by(m.parent, child));
  return last;
}

}  // namespace

void judge_trained_model_used(const ExecCheckInput& in, SharingFindings& f) {
  double judged = 0;
  std::vector<std::string> findings;
  for (const auto& [key, m] : handed_models(in.events)) {
    if (m.children.empty()) continue;
    const double ended = trainers_ended(in.shared_state, m);
    const json* uses = ended == std::numeric_limits<double>::infinity() ? nullptr : uses_of(in.shared_state, m.parent, m.oid);
    if (uses == nullptr) continue;
    const bool itself = number_of(*uses, "last_t", -1) > ended;
    bool a_copy = false;
    std::vector<const json*> others;  // used after, compared after, neither its memory nor its values
    for (const json& o : array_of(*uses, "others")) {
      if (number_of(o, "last_t", -1) <= ended) continue;
      if (o.value("shares", false) || o.value("equal", false)) {
        a_copy = true;
      } else if (number_of(o, "checked_t", -1) > ended && o.contains("equal") && o["equal"].is_boolean()) {
        others.push_back(&o);
      }
    }
    judged += (itself ? 1 : 0) + static_cast<double>(others.size()) + (a_copy ? 1 : 0);
    if (itself || a_copy || others.empty()) continue;
    std::vector<int> trainers = m.children;
    std::sort(trainers.begin(), trainers.end());
    std::vector<std::string> sites;
    long long count = 0;
    for (const json* o : others) {
      sites.push_back(text_of(*o, "site", "?"));
      count += int_of(*o, "uses");
    }
    findings.push_back(fmt::format(
        "pid {} used {} {} object{} at {} ({} use{}, the last after its workers ended), never the {} its children "
        "trained "
        "(handed over at {}, stepped {} times by {} {}): {} no memory with it and {} other values, so what the "
        "program evaluated or saved is not what the workers learned. Fix: after join(), use the model handed to the "
        "workers (test(model), torch.save(model.state_dict(), path)) or load its state into the other object "
        "(other.load_state_dict(model.state_dict())); a checkpoint a worker saved holds only what was learned when "
        "it saved",
        m.parent, others.size() == 1 ? std::string("another") : fmt::format("{} other", others.size()), m.cls,
        others.size() == 1 ? "" : "s",
        fmt::join(sites, "; "), count, count == 1 ? "" : "s", m.cls, m.where, m.steps,
        trainers.size() == 1 ? "pid" : "pids", fmt::join(trainers, ", "),
        others.size() == 1 ? "it shares" : "they share", others.size() == 1 ? "holds" : "hold"));
  }
  f.to_raise[std::string(checks::kTrainedModelUsed)] =
      "a program whose parent calls, saves or takes the state_dict() of a model of the class it handed to children "
      "that trained it, after they ended";
  const Exposure seen{judged, "models of a trained class the parent used after its workers ended"};
  const std::string clean =
      judged == 0 ? std::string("the parent used no model of the class its workers trained after they ended")
                  : fmt::format("{:g} model(s) the parent used after its workers ended, the trained one or a copy "
                                "of its values among them",
                                judged);
  add_verdict(f, checks::kTrainedModelUsed, findings, clean, seen);
}

}  // namespace sharebench::exec_checks
