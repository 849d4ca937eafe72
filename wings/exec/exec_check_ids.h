// The checks of exec's wing: what a user's program and its processes did with torch, each id
// declared once here (as the core's are in harness/results/check_ids.h) and spelled nowhere else.
// docs/results-schema.md's catalogue lists each with what it can and cannot see.
#pragma once

#include "harness/results/check_ids.h"

namespace sharebench::checks {

inline constexpr CheckId kExitStatus{"exit-status"};
inline constexpr CheckId kNoSurvivors{"no-survivors"};
inline constexpr CheckId kShmReclaimed{"shm-reclaimed"};
inline constexpr CheckId kForkSafety{"fork-safety"};
inline constexpr CheckId kUpdatesShared{"updates-shared"};
inline constexpr CheckId kDeathsNoticed{"deaths-noticed"};
inline constexpr CheckId kCopyOnRead{"copy-on-read"};
inline constexpr CheckId kModelLearned{"model-learned"};
inline constexpr CheckId kTrainedModelUsed{"trained-model-used"};
inline constexpr CheckId kRandomStreams{"random-streams"};

}  // namespace sharebench::checks
