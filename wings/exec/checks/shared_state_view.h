// shared_state_view: what every Python process of a user's program reported of shared state
// (sharebench_shared_state.py's "shared-state" events and the "shared_state" of its "end"), the last
// report of each process, beside each process's lifetime. The race checks of this folder each read
// it; nothing here judges.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sharebench::exec_checks {

struct ProcessSharedState {
  int pid = 0;
  double reported_t = 0;  // when the report was made
  double start_t = 0;     // the process's start event, or its first event
  double end_t = std::numeric_limits<double>::infinity();  // its end event; a process killed has none
  const nlohmann::json* places = nullptr;  // [{key, what, made, rmw, ...}]
  const nlohmann::json* holds = nullptr;   // [{lock, site, kind, shared, place, what, count, ...}]
  const nlohmann::json* sends = nullptr;   // [{key, count, fps, complete, sites, shape}]: storages sent twice or more
  const nlohmann::json* receives = nullptr;  // [{key, count, fps, sites}]: tensors received
  // [{key, what, reads, torn, read_sites, publishes, publish_sites, first_publish_t, last_publish_t}]:
  // shared models this process read whole (forward(), a copy) or published whole into (load_state_dict, copy_)
  const nlohmann::json* versions = nullptr;
  // [{oid, class, uses, last_t, site, others: [{site, uses, first_t, last_t, checked_t, equal, shares}]}]: the
  // modules this process handed to children, and its uses of them and of other objects of their class
  // since (sharebench_model_used.py)
  const nlohmann::json* model_uses = nullptr;
};

struct SharedStateView {
  std::vector<ProcessSharedState> processes;  // those that reported, in pid order
  bool alive_together(const ProcessSharedState& a, const ProcessSharedState& b) const {
    return a.start_t < b.end_t && b.start_t < a.end_t;
  }
  // When `waiter` learnt that `ended` had ended (joined it, polled it, read its exit code); +inf if
  // it never did.
  double learnt_end(int waiter, int ended) const;
  std::map<std::pair<int, int>, double> reaped;  // (waiter, ended) -> first time
  std::map<int, double> ended;                   // pid -> its end event, every process that ended by itself
  // When `child` had ended as `waiter` can know it: its end event, or `waiter` learning it ended,
  // whichever came first; +inf if neither happened.
  double ended_by(int waiter, int child) const;
  // Where the object at `key` was made, as the process that made it said ("" when none did).
  std::string made_at(const std::string& key) const;
};

SharedStateView shared_state_view(const std::vector<nlohmann::json>& events);

// "pid 12 at prog.py:30 in train; pid 13 at prog.py:30 in train": who did it, where.
std::string sites_by_pid(const std::vector<std::pair<int, const nlohmann::json*>>& sites);

}  // namespace sharebench::exec_checks
