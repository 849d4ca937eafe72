// Detector: one of the harness's own checks, made on every cell it applies to whatever the
// scenario (liveness, no-leaks, lock-order, lock-init, memory, model-shared, sanitizer,
// fault-injected). Each is one file of this folder and one line of builtin_detectors.cc; the runner
// sequences a repetition and hands each stage's evidence to every registered detector of that
// stage, naming none of them. A scenario opts out of one by its check id (ScenarioInfo::OptOut or
// VariantOptOut, with a reason that `list` shows); --disable-check drops its verdict afterwards.
//
// The model is Jepsen's checker composition: a detector reads the history of a repetition (here,
// what the watchdog, the workers' slots and the /proc snapshots recorded) and returns a verdict
// with the evidence for it; detectors never run workers nor change what they did.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/config/cell_config.h"
#include "harness/proc/leak_check.h"
#include "harness/proc/sanitizer_reports.h"
#include "harness/results/results.h"
#include "harness/scenario/worker_slot.h"
#include "harness/util/plugin_registry.h"
#include "harness/watchdog/watchdog.h"

namespace sharebench {

class FaultInjector;

// When in a repetition a detector judges.
enum class DetectorStage {
  kAfterWorkers,   // every worker reaped, before the scenario's check(): liveness, sanitizer, faults
  kAfterCheck,     // after the scenario's check(), whose metrics some read (model_bytes)
  kAfterTeardown,  // the arena and the scenario gone: only the /proc snapshots remain
};

// What a repetition left for its detectors. Pointers are null where a stage has no such thing
// (the block after teardown, the fault injector without --fault).
struct RepetitionEvidence {
  const CellConfig* cell = nullptr;
  const HarnessBlock* block = nullptr;
  const Supervision* supervision = nullptr;
  const SanitizerReports* sanitizer = nullptr;
  const FaultInjector* faults = nullptr;
  const ResourceSnapshot* resources_before = nullptr;  // kAfterTeardown only
  const ResourceSnapshot* resources_after = nullptr;   // kAfterTeardown only
  std::vector<std::string> worker_fd_leaks;            // what each worker process reported left open
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual CheckId id() const = 0;
  virtual DetectorStage stage() const = 0;
  // Adds its check to `rep` (or none, where its situation cannot arise in this cell), and may add
  // what it found to the status and other checks' messages (a fault names itself on liveness).
  virtual void judge(const RepetitionEvidence& evidence, Repetition& rep) const = 0;
};

// Every detector, in the order their checks appear in a repetition, found by its check id.
using DetectorRegistry = PluginRegistry<Detector>;
inline std::string_view plugin_key(const Detector& d) { return d.id().name(); }
// builtin_detectors.cc: one line per detector of this folder.
void register_builtin_plugins(DetectorRegistry& registry);

}  // namespace sharebench
