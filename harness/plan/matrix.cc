// Matrix expansion and input validation.
#include "harness/plan/matrix.h"
#include "harness/util/text.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/faults/fault_injector.h"
#include "harness/config/model_options.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

namespace {
// --model's list: one cell per model for the scenarios that share one (ScenarioInfo::shares_model). A TorchScript path with a comma in it is one model when the whole value names a file.
std::vector<std::string> model_axis(const std::string& value) {
  if (value.find(',') == std::string::npos || std::ifstream(value).good()) return {value};
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = value.find(',', begin);
    std::string one = value.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (one.empty()) throw UsageError(fmt::format("--model '{}': an empty name in the list", value));
    if (std::find(out.begin(), out.end(), one) == out.end()) out.push_back(std::move(one));
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  return out;
}

void validate(const MatrixRequest& r) {
  const auto& w = r.base.workload;
  if (w.steps < 1 || w.steps > kMaxSteps) throw UsageError(fmt::format("--steps must be 1..{}, got {}", kMaxSteps, w.steps));
  if (r.repetitions < 1 || r.repetitions > kMaxRepetitions) {
    throw UsageError(fmt::format("--repetitions must be 1..{}, got {}", kMaxRepetitions, r.repetitions));
  }
  if (!(r.base.hang_timeout_s > 0 && r.base.hang_timeout_s <= kMaxTimeoutS)) {
    throw UsageError(fmt::format("--hang-timeout must be above 0 and at most {} s", kMaxTimeoutS));
  }
  if (!(r.base.deadline_s > 0 && r.base.deadline_s <= kMaxTimeoutS)) {
    throw UsageError(fmt::format("--deadline must be above 0 and at most {} s", kMaxTimeoutS));
  }
  if (w.batch < 1 || w.batch > w.train_rows) throw UsageError("--batch must be between 1 and the training rows");
  if (!(w.lr > 0 && w.lr < 100)) throw UsageError("--lr must be above 0 and below 100");
  if (!(w.momentum >= 0 && w.momentum < 1)) throw UsageError("--momentum must be in [0, 1)");
  if (w.hidden < 1 || w.hidden > 65536 || w.input < 1 || w.input > 65536 || w.classes < 2 || w.classes > 65536) {
    throw UsageError("model sizes must be 1..65536 (classes at least 2)");
  }
  for (const std::string& model : model_axis(w.model)) {  // every model and its input: refused before anything starts
    WorkloadOptions one = w;
    one.model = model;
    sample_input(one);
  }
  if (w.threads_per_worker < 1 || w.threads_per_worker > 256) throw UsageError("--threads must be 1..256");
  if (w.step_delay_us < 0 || w.step_delay_us > 10'000'000) throw UsageError("--step-delay-us must be 0..10000000");
  if (r.base.deadline_s < r.base.hang_timeout_s) {
    throw UsageError(fmt::format("--deadline ({} s) must be at least --hang-timeout ({} s): a cell would reach its "
                                 "deadline before a hang could be told apart",
                                 r.base.deadline_s, r.base.hang_timeout_s));
  }
  if (r.base.arena_mb < 1 || r.base.arena_mb > 65536) throw UsageError("--arena-mb must be 1..65536");
  const FaultPlan& f = r.base.fault;
  if (f.active() && !f.targets_tree() && f.at_step > w.steps) {
    throw UsageError(fmt::format("--fault {}: step {} is beyond --steps {}; it would never be injected", f.spec(),
                                 f.at_step, w.steps));
  }
}

std::vector<StartMethod> planned_starts(const MatrixRequest& request) {
  std::vector<StartMethod> starts;
  for (const std::string& s : request.starts) {
    auto m = parse_start_method(s);
    if (!m) throw UsageError(fmt::format("unknown start method '{}' (fork, spawn, forkserver, thread)", s));
    if (std::find(starts.begin(), starts.end(), *m) == starts.end()) starts.push_back(*m);
  }
  if (request.starts.empty()) starts = {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver};
  return starts;
}

// The process counts, less those a --fault's rank is not in; refuses a fault the matrix cannot take.
std::vector<int> planned_procs(const MatrixRequest& request, const std::vector<StartMethod>& starts) {
  std::vector<int> procs = request.procs.empty() ? std::vector<int>{1, 2} : request.procs;
  for (int p : procs) {
    if (p < 1 || p > kMaxProcs) throw UsageError(fmt::format("--procs must be 1..{}, got {}", kMaxProcs, p));
  }
  const FaultPlan& fault = request.base.fault;
  if (!fault.active()) return procs;
  if (std::find(starts.begin(), starts.end(), StartMethod::kThread) != starts.end()) {
    throw UsageError(fmt::format("--fault {}: a fault signals one worker process, and under the thread start "
                                 "method every worker shares one",
                                 fault.spec()));
  }
  if (request.known_bugs) throw UsageError("--fault runs clean variants only, not with --known-bugs");
  if (fault.targets_tree() != !request.base.command.empty()) {
    throw UsageError(fault.targets_tree()
                         ? fmt::format("--fault {} targets a process of a program's tree: it is for `sharebench exec`; "
                                       "`run` takes KIND:RANK@STEP (kill:1@20)",
                                       fault.spec())
                         : fmt::format("--fault {}: a program run by `exec` has no ranks; name a child of its tree, "
                                       "KIND:child[N]@SECONDS or KIND:random@SECONDS (kill:child@1)",
                                       fault.spec()));
  }
  if (fault.targets_tree()) return procs;
  procs.erase(std::remove_if(procs.begin(), procs.end(), [&](int p) { return p <= fault.rank; }), procs.end());
  if (procs.empty()) {
    throw UsageError(fmt::format("--fault {}: no process count has a rank {} (--procs)", fault.spec(), fault.rank));
  }
  return procs;
}

using Choice = std::pair<const ScenarioInfo*, const VariantInfo*>;

const ScenarioInfo& requested_scenario(const MatrixRequest& request, const std::string& scenario_name) {
  const auto& registry = ScenarioRegistry::instance();
  const ScenarioInfo* s = registry.find(scenario_name);
  if (!s) {
    std::vector<std::string> known;
    for (const ScenarioInfo* k : registry.all()) known.push_back(k->name());
    const std::string guess = closest_name(scenario_name, known);
    throw UsageError(fmt::format("unknown scenario '{}'{} (known: {})", scenario_name,
                                 guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess), fmt::join(known, ", ")));
  }
  if (s->runs_command() && request.base.command.empty()) {
    throw UsageError(fmt::format("scenario '{}' runs a program: use `sharebench exec [options] -- COMMAND [ARGS...]`",
                                 scenario_name));
  }
  if (!s->runs_command() && !request.base.command.empty()) {
    throw UsageError(fmt::format("scenario '{}' does not run a program; only exec's cells take a command", scenario_name));
  }
  return *s;
}

// (scenario, variant) pairs in the order asked, each once.
std::vector<Choice> chosen_variants(const MatrixRequest& request) {
  std::vector<Choice> chosen;
  auto add = [&](const ScenarioInfo* s, const VariantInfo* v) {
    if (std::find(chosen.begin(), chosen.end(), Choice{s, v}) == chosen.end()) chosen.emplace_back(s, v);
  };
  std::vector<std::string> names = request.scenarios;
  if (names.empty()) {
    for (const ScenarioInfo* s : ScenarioRegistry::instance().all()) {
      if (!s->runs_command()) names.push_back(s->name());  // exec's cells need a program: `sharebench exec`
    }
  }
  for (const std::string& name : names) {
    const auto slash = name.find('/');
    const ScenarioInfo& s = requested_scenario(request, name.substr(0, slash));
    if (slash == std::string::npos) {
      for (const VariantInfo& v : s.variants()) {
        if (!v.known_bug || request.known_bugs) add(&s, &v);
      }
      continue;
    }
    const std::string variant = name.substr(slash + 1);
    const VariantInfo* v = s.find_variant(variant);
    if (!v) {
      std::vector<std::string> known;
      for (const auto& k : s.variants()) known.push_back(k.name);
      const std::string guess = closest_name(variant, known);
      throw UsageError(fmt::format("scenario '{}' has no variant '{}'{} (variants: {})", s.name(), variant,
                                   guess.empty() ? "" : fmt::format("; did you mean '{}/{}'?", s.name(), guess),
                                   fmt::join(known, ", ")));
    }
    if (request.base.fault.active() && v->known_bug) {
      throw UsageError(fmt::format("--fault runs clean variants only; {}/{} is a known bug", s.name(), variant));
    }
    add(&s, v);
  }
  if (request.known_bugs && request.scenarios.empty()) {
    chosen.erase(std::remove_if(chosen.begin(), chosen.end(), [](auto& p) { return !p.second->known_bug; }),
                 chosen.end());
  }
  return chosen;
}

// The start methods of `starts` that the scenario supports; an explicit request for one it does
// not is refused.
std::vector<StartMethod> supported_starts(const MatrixRequest& request, const ScenarioInfo& s,
                                          const std::vector<StartMethod>& starts) {
  std::vector<StartMethod> out;
  for (StartMethod m : starts) {
    if (s.supports(m)) {
      out.push_back(m);
    } else if (!request.starts.empty() && !request.scenarios.empty()) {
      std::vector<std::string> ok;
      for (StartMethod k : s.starts()) ok.emplace_back(to_string(k));
      throw UsageError(fmt::format("scenario '{}' cannot run under '{}' (it supports: {})", s.name(), to_string(m),
                                   fmt::join(ok, ", ")));
    }
  }
  return out;
}

}  // namespace

std::vector<PlannedCell> plan_matrix(const MatrixRequest& request) {
  validate(request);
  const std::vector<StartMethod> starts = planned_starts(request);
  const std::vector<int> procs = planned_procs(request, starts);
  const FaultPlan& fault = request.base.fault;
  const std::vector<std::string> models = model_axis(request.base.workload.model);
  std::vector<PlannedCell> cells;
  for (const Choice& choice : chosen_variants(request)) {
    const ScenarioInfo* s = choice.first;
    const VariantInfo* v = choice.second;
    if (std::none_of(procs.begin(), procs.end(), [&](int p) { return p >= s->min_procs(); }) &&
        !request.scenarios.empty()) {
      throw UsageError(fmt::format("scenario '{}' needs at least {} processes (--procs)", s->name(), s->min_procs()));
    }
    // Scenarios with no model of their own run once, on the default model's config.
    const std::vector<std::string> own_models =
        s->shares_model() ? models
                          : std::vector<std::string>{models.size() == 1 ? models.front() : WorkloadOptions{}.model};
    for (StartMethod m : supported_starts(request, *s, starts)) {
      for (const std::string& model : own_models) {
        for (int p : procs) {
          if (p < s->min_procs()) continue;
          PlannedCell cell;
          cell.config = request.base;
          cell.config.workload.model = model;
          cell.config.scenario = s->name();
          cell.config.variant = v->name;
          cell.config.start = m;
          cell.config.procs = p;
          cell.expected = fault.active() ? expectation_under_fault(fault, request.base.hang_timeout_s, s->must_pass_under_fault())
                                         : v->expectation_for(p, m, request.base.chaos_seed != 0);
          cell.known_bug = v->known_bug;
          cell.kind = s->kind();
          cells.push_back(std::move(cell));
        }
      }
    }
  }
  if (cells.empty()) throw UsageError("the requested matrix holds no cell that can run");
  return cells;
}

std::vector<PlannedCell> shard_cells(const std::vector<PlannedCell>& cells, int index, int total) {
  if (total < 1 || index < 1 || index > total) {
    throw UsageError(fmt::format("--shard {}/{}: the shard must be K/N with 1 <= K <= N", index, total));
  }
  std::vector<PlannedCell> out;
  for (std::size_t i = static_cast<std::size_t>(index - 1); i < cells.size(); i += static_cast<std::size_t>(total)) {
    out.push_back(cells[i]);
  }
  return out;
}

}  // namespace sharebench
