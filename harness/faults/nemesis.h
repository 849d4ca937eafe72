// Nemesis: one kind of fault, as Jepsen's nemeses are: what it does to its victim and what the run
// must then show. Each kind is one file of nemeses/ and one line of builtin_nemeses.cc; the
// registry is what --fault's parser, the runner's FaultInjector, `soak`'s random plan and exec's
// supervisor (faults into a program's tree) all read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/config/fault_plan.h"
#include "harness/scenario/worker_slot.h"
#include "harness/util/plugin_registry.h"

namespace sharebench {

// Whom a fault strikes: a process and, for a worker of the runner's scenarios, its slot (null for
// a process of an exec'd program's tree).
struct FaultVictim {
  pid_t pid = 0;
  WorkerSlot* slot = nullptr;
};

// What a strike did.
enum class Strike {
  kLanded,  // done (a kill)
  kArmed,   // the victim strikes itself at its next chance (kill-holding-lock: at its next lock)
  kHeld,    // holds the victim until release() (a stall)
};

class Nemesis {
 public:
  virtual ~Nemesis() = default;
  virtual std::string_view name() const = 0;
  // Refuses (std::invalid_argument, naming `spec`) a plan this kind cannot carry out: a hold it
  // needs or does not take, a target it cannot strike.
  virtual void validate(const FaultPlan& plan, std::string_view spec) const = 0;
  virtual Strike strike(const FaultPlan& plan, const FaultVictim& victim) const = 0;
  // Lets a held victim go.
  virtual void release(pid_t /*pid*/) const {}
  // For an armed strike: whether the victim struck itself (its slot says so).
  virtual bool fired(const WorkerSlot& /*slot*/) const { return false; }
  // Whether the victim process dies of it.
  virtual bool kills() const = 0;
  // Whether the run cannot end well: its liveness must fail (a kill; a stall past the hang timeout).
  virtual bool ends_the_run(const FaultPlan& plan, double hang_timeout_s) const = 0;
  // One sentence: what it did to rank `rank` at step `step`.
  virtual std::string describe_rank(const FaultPlan& plan, int rank, std::int64_t step, double hang_timeout_s) const = 0;
  // One sentence: what it did to a program's process `who`, `after_s` after its birth.
  virtual std::string describe_process(const FaultPlan& plan, const std::string& who, double after_s) const = 0;
  // Why it did not land on rank `rank`, which reached step `steps`.
  virtual std::string describe_missed(const FaultPlan& plan, int rank, std::int64_t steps) const;

  // `soak`: the percent of its cells this kind is drawn for, each share with its hold as a multiple
  // of the hang timeout (0: none); a kind that needs a lock taken every step yields its shares to
  // `draw_fallback()` where the variant takes none.
  struct DrawShare {
    int percent = 0;
    double hold_of_hang_timeout = 0;
  };
  virtual std::vector<DrawShare> draw_shares() const = 0;
  virtual bool needs_lock_every_step() const { return false; }
  virtual std::string_view draw_fallback() const { return {}; }
  // How soak counts a plan of this kind ("stall (long)").
  virtual std::string draw_label(const FaultPlan& /*plan*/, double /*hang_timeout_s*/) const { return std::string(name()); }
};

// Every kind, in the order `soak` draws them, found by its name.
using NemesisRegistry = PluginRegistry<Nemesis>;
inline std::string_view plugin_key(const Nemesis& n) { return n.name(); }
// builtin_nemeses.cc: one line per kind of nemeses/.
void register_builtin_plugins(NemesisRegistry& registry);

// The nemesis of an active plan; throws std::logic_error for a kind nobody registered (a plan that
// came through parse_fault_plan never has one).
const Nemesis& nemesis_of(const FaultPlan& plan);

// FaultPlan::parse, then the kind's own rules: what --fault and every reader of a fault spec use.
// Throws std::invalid_argument with one sentence.
FaultPlan parse_fault_plan(std::string_view spec);

}  // namespace sharebench
