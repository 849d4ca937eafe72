// The HTML page's first screen: the recommendation (harness/results/recommendation.h) in a few
// sentences, with the ranked tables folded beneath, and one chart per question a reader brings:
// throughput by strategy at each process count (one chart per kind of work), held-out loss against
// the time it took, memory per worker, launch cost by start method. Each chart carries at most
// six series (the strategies fastest at the largest process count; the rest are in the tables),
// bars per process count so no label overlaps, means with their 95 % interval as whiskers.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace sharebench {

struct HtmlAnswer {
  std::string section;    // the recommendation's HTML, first on the page
  nlohmann::json charts;  // the headline charts' specifications (html_common.h's form)
};

inline constexpr std::size_t kMaxSeriesPerChart = 6;

HtmlAnswer html_answer(const RunResult& run);

}  // namespace sharebench
