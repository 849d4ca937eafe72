// handed_models: the models a process of a user's program handed to its children (the "handoff"
// events' objects with an oid) and the children that stepped each with an optimizer (their "end"'s
// "trained"), read once for the checks that judge what became of them (model-learned,
// trained-model-used).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebench::exec_checks {

struct HandedModel {
  int parent = 0;
  long long oid = 0;        // the object's id in the parent
  std::string cls, where;   // its class; the line that started the first child it went to
  std::vector<int> children;  // those that stepped it (a child that trained a private copy is not one)
  long long steps = 0;        // their optimizer steps, in all
};

// Every handed model, keyed by (parent pid, oid), in that order.
std::map<std::pair<int, long long>, HandedModel> handed_models(const std::vector<nlohmann::json>& events);

}  // namespace sharebench::exec_checks
