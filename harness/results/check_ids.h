// CheckId: the identity of a check, declared once and used everywhere a check is made, expected,
// opted out of, disabled or looked up. The name is what results.json, every report, --disable-check
// and a scenario's expectations spell; docs/results-schema.md has a row for each one declared here
// (tests/docs_agree_test.py holds it to that), and tests/layering_test.py fails on a check name
// written as a string literal anywhere else in the project's code.
//
// A scenario of one's own declares its checks the same way, beside its code:
//   inline constexpr sharebench::CheckId kMyCheck{"my-check"};
#pragma once

#include <string>
#include <string_view>

namespace sharebench {

class CheckId {
 public:
  constexpr explicit CheckId(std::string_view name) : name_(name) {}
  constexpr std::string_view name() const { return name_; }
  constexpr operator std::string_view() const { return name_; }  // NOLINT: a check id is its name
  operator std::string() const { return std::string(name_); }     // NOLINT
  friend bool operator==(const std::string& a, CheckId b) { return a == b.name_; }
  friend bool operator==(CheckId a, const std::string& b) { return a.name_ == b; }
  friend bool operator!=(const std::string& a, CheckId b) { return a != b.name_; }
  friend bool operator!=(CheckId a, const std::string& b) { return a.name_ != b; }
  friend constexpr bool operator==(CheckId a, CheckId b) { return a.name_ == b.name_; }

 private:
  std::string_view name_;
};

namespace checks {
// The harness's own detectors (harness/detectors/), on every cell they apply to.
inline constexpr CheckId kLiveness{"liveness"};
inline constexpr CheckId kNoLeaks{"no-leaks"};
inline constexpr CheckId kLockOrder{"lock-order"};
inline constexpr CheckId kLockInit{"lock-init"};
inline constexpr CheckId kMemory{"memory"};
inline constexpr CheckId kModelShared{"model-shared"};
inline constexpr CheckId kSanitizer{"sanitizer"};
inline constexpr CheckId kFaultInjected{"fault-injected"};
// The runner's own, when a scenario's setup() or check() threw or outlived --deadline.
inline constexpr CheckId kSetup{"setup"};
inline constexpr CheckId kChecker{"checker"};

// The checkers a scenario composes (harness/checkers/, torch_support/).
inline constexpr CheckId kMutualExclusion{"mutual-exclusion"};
inline constexpr CheckId kLostUpdates{"lost-updates"};
inline constexpr CheckId kConvergence{"convergence"};
inline constexpr CheckId kUpdatesReachedModel{"updates-reached-model"};
inline constexpr CheckId kOwnerDeathRecovered{"owner-death-recovered"};
inline constexpr CheckId kOptimizerStateShared{"optimizer-state-shared"};
inline constexpr CheckId kGradsDelivered{"grads-delivered"};
inline constexpr CheckId kConsistentSnapshots{"consistent-snapshots"};
inline constexpr CheckId kReplicasAgree{"replicas-agree"};

// The built-in scenarios' own.
inline constexpr CheckId kDeadlockFree{"deadlock-free"};
inline constexpr CheckId kParametersUnchanged{"parameters-unchanged"};
inline constexpr CheckId kProbeIdentical{"probe-identical"};
inline constexpr CheckId kVersionsDelivered{"versions-delivered"};
inline constexpr CheckId kMatchesSerial{"matches-serial"};
inline constexpr CheckId kManagerExited{"manager-exited"};
inline constexpr CheckId kForkSafe{"fork-safe"};
inline constexpr CheckId kSegmentsReclaimed{"segments-reclaimed"};
inline constexpr CheckId kMessageChecksums{"message-checksums"};
inline constexpr CheckId kBufferLifetime{"buffer-lifetime"};
inline constexpr CheckId kProducerLifetime{"producer-lifetime"};
}  // namespace checks

}  // namespace sharebench
