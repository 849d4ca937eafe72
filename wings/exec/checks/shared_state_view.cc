// shared_state_view: each process's last shared-state report and its lifetime, from the events.
#include "wings/exec/checks/shared_state_view.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench::exec_checks {

using nlohmann::json;

SharedStateView shared_state_view(const std::vector<json>& events) {
  SharedStateView view;
  std::map<int, ProcessSharedState> by_pid;
  std::map<int, double> starts, ends;
  for (const json& e : events) {
    if (!e.is_object() || !e.contains("pid") || !e["pid"].is_number() || !e.contains("t") || !e["t"].is_number()) continue;
    const int pid = e["pid"].get<int>();
    const double t = e["t"].get<double>();
    const std::string kind = e.value("event", "");
    if (kind == "start" && !starts.count(pid)) starts[pid] = t;
    if (kind == "end") ends[pid] = t;
    if ((kind == "reaped" || kind == "observed") && e.contains("child") && e["child"].is_number()) {
      view.reaped.emplace(std::make_pair(pid, e["child"].get<int>()), t);
    }
    const json* state = nullptr;
    if (kind == "shared-state") state = &e;
    if (kind == "end" && e.contains("shared_state") && e["shared_state"].is_object()) state = &e["shared_state"];
    if (state == nullptr || !state->contains("places") || !(*state)["places"].is_array() || !state->contains("holds") ||
        !(*state)["holds"].is_array()) {
      continue;
    }
    ProcessSharedState& p = by_pid[pid];
    if (p.places != nullptr && p.reported_t > t) continue;
    p.pid = pid;
    p.reported_t = t;
    p.places = &(*state)["places"];
    p.holds = &(*state)["holds"];
    p.sends = state->contains("sends") && (*state)["sends"].is_array() ? &(*state)["sends"] : nullptr;
    p.receives = state->contains("receives") && (*state)["receives"].is_array() ? &(*state)["receives"] : nullptr;
    p.versions = state->contains("versions") && (*state)["versions"].is_array() ? &(*state)["versions"] : nullptr;
    p.model_uses = state->contains("model_uses") && (*state)["model_uses"].is_array() ? &(*state)["model_uses"] : nullptr;
  }
  view.ended = ends;
  for (auto& [pid, p] : by_pid) {
    if (starts.count(pid)) p.start_t = starts[pid];
    if (ends.count(pid)) p.end_t = ends[pid];
    view.processes.push_back(p);
  }
  return view;
}

double SharedStateView::ended_by(int waiter, int child) const {
  const auto it = ended.find(child);
  return std::min(it == ended.end() ? std::numeric_limits<double>::infinity() : it->second, learnt_end(waiter, child));
}

double SharedStateView::learnt_end(int waiter, int ended) const {
  const auto it = reaped.find({waiter, ended});
  return it == reaped.end() ? std::numeric_limits<double>::infinity() : it->second;
}

std::string SharedStateView::made_at(const std::string& key) const {
  for (const ProcessSharedState& p : processes) {
    for (const json& place : *p.places) {
      if (place.value("key", "") == key && place.contains("made") && place["made"].is_string()) return place["made"];
    }
  }
  return "";
}

std::string sites_by_pid(const std::vector<std::pair<int, const json*>>& sites) {
  std::vector<std::string> parts;
  for (const auto& [pid, list] : sites) {
    std::vector<std::string> where;
    if (list != nullptr && list->is_array()) {
      for (const json& s : *list) {
        if (s.is_string()) where.push_back(s.get<std::string>());
      }
    }
    parts.push_back(fmt::format("pid {} at {}", pid, where.empty() ? std::string("?") : fmt::format("{}", fmt::join(where, ", "))));
    if (parts.size() == 6 && sites.size() > 6) {
      parts.push_back(fmt::format("{} more", sites.size() - 6));
      break;
    }
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace sharebench::exec_checks
