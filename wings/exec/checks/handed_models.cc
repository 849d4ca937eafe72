// handed_models: the models handed to children and who stepped them, from the events.
#include "wings/exec/checks/handed_models.h"

#include "wings/exec/checks/event_fields.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

// A child that stepped a private copy of what it was handed is updates-shared's finding: its steps
// are not the handed model's.
bool trained_a_private_copy(const json& end, const std::string& path) {
  for (const json& c : array_of(end, "changed")) {
    if (text_of(c, "path") == path && int_of(c, "shared") < int_of(c, "params") && c.value("by_optimizer", false)) return true;
  }
  return false;
}

}  // namespace

std::map<std::pair<int, long long>, HandedModel> handed_models(const std::vector<json>& events) {
  std::map<std::pair<int, std::string>, std::pair<int, long long>> handed_to;  // (child, path) -> (parent, oid)
  std::map<std::pair<int, long long>, HandedModel> models;
  for (const json* e : events_of(events, "handoff")) {
    for (const json& o : array_of(*e, "objects")) {
      if (!o.contains("oid") || !o["oid"].is_number_integer()) continue;
      const std::pair<int, long long> key{int_of(*e, "pid"), o["oid"].get<long long>()};
      handed_to[{int_of(*e, "child"), text_of(o, "path")}] = key;
      HandedModel& m = models[key];
      m.parent = key.first;
      m.oid = key.second;
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
  return models;
}

}  // namespace sharebench::exec_checks
