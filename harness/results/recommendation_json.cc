// The recommendation as results.json holds it (`recommendation`): every group with its ranked
// strategies and cells, and what was left out and why. Written beside the ranking so that a file
// read back recomputes the same answer from its cells; docs/results-schema.md has the keys.
#include <cmath>

#include "harness/results/recommendation.h"

namespace sharebench {

namespace {
nlohmann::json bound(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
}  // namespace

nlohmann::json recommendation_json(const Recommendation& rec) {
  using nlohmann::json;
  json groups = json::array();
  for (const RankingGroup& g : rec.groups) {
    json ranked = json::array();
    for (const RankedCell& r : g.ranked) {
      ranked.push_back({{"cell", r.cell}, {"strategy", r.strategy}, {"start", to_string(r.start)},
                        {"mean", bound(r.rate.mean)}, {"lo", bound(r.rate.lo)}, {"hi", bound(r.rate.hi)},
                        {"repetitions", r.rate.n}, {"settled", r.settled}, {"tied_with_best", r.tied_with_best}, {"tied_by_margin", r.tied_by_margin},
                        {"uss_mb", r.uss_mb}, {"launch_ms", r.launch_ms}});
    }
    json strategies = json::array();
    for (const RankedStrategy& s : g.strategies) {
      strategies.push_back({{"strategy", s.strategy}, {"start", to_string(s.start)}, {"cell", s.cell}, {"starts", s.starts},
                            {"pooled", s.pooled}, {"mean", bound(s.rate.mean)}, {"lo", bound(s.rate.lo)}, {"hi", bound(s.rate.hi)},
                            {"repetitions", s.rate.n}, {"settled", s.settled}, {"tied_with_best", s.tied_with_best},
                            {"tied_by_margin", s.tied_by_margin}, {"uss_mb", s.uss_mb}, {"launch_ms", s.launch_ms}});
      if (s.vs_leader.n > 0) {
        strategies.back()["vs_leader"] = {{"mean", bound(s.vs_leader.mean)}, {"lo", bound(s.vs_leader.lo)},
                                          {"hi", bound(s.vs_leader.hi)}, {"blocks", s.vs_leader.n}};
      }
    }
    groups.push_back({{"kind", to_string(g.kind)}, {"procs", g.procs}, {"model", g.model}, {"batch", g.batch}, {"metric", g.metric},
                      {"unit", g.unit}, {"best", g.best()}, {"best_strategies", g.best_strategies()}, {"verdict", g.verdict},
                      {"start_methods", g.start_methods},
                      {"strategies", strategies}, {"ranked", ranked}});
    if (!g.budget_note.empty()) groups.back()["budget_note"] = g.budget_note;
    if (g.blocks > 0) {
      groups.back()["blocks"] = g.blocks;
      groups.back()["tie_margin"] = g.tie_margin;
    }
    if (g.control) {
      const BlockControl& c = *g.control;
      groups.back()["control"] = {{"strategy", c.strategy}, {"cell", c.cell}, {"mean", bound(c.difference.mean)},
                                  {"lo", bound(c.difference.lo)}, {"hi", bound(c.difference.hi)}, {"blocks", c.difference.n},
                                  {"typical", c.typical}, {"margin", c.margin()}, {"false_difference", c.false_difference()}};
    }
  }
  json excluded = json::array();
  for (const Exclusion& e : rec.excluded) excluded.push_back({{"cell", e.cell}, {"category", e.category}, {"why", e.why}});
  return json{{"target", rec.target}, {"tie_margin", rec.tie_margin}, {"groups", groups}, {"excluded", excluded}};
}

}  // namespace sharebench
