// segments_reclaimed: the `segments-reclaimed` check of the scenarios that pass named /dev/shm
// segments (ipc/named-*, model-ipc/named). Once every user of a cell is gone, what is left under
// the cell's prefix was lost with a dead worker or leaked by a release that never came. The runner
// unlinks it either way; only the second is a bug.
#pragma once

#include <string>

#include "harness/results/check_ids.h"

#include <fmt/format.h>

#include "harness/ipc/shared_buffer.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

// `prefix`: the cell's segment names start with it. `finished`: every worker completed its work.
inline void check_segments_reclaimed(CheckContext& ctx, const std::string& prefix, bool finished) {
  const auto left = unlink_segments_with_prefix(prefix);
  const double n = static_cast<double>(left.size());
  if (left.empty()) {
    ctx.check(checks::kSegmentsReclaimed, Verdict::kPass, 0.0, "every named segment was unlinked by its last user");
  } else if (!finished) {
    ctx.check(checks::kSegmentsReclaimed, Verdict::kPass, n,
              fmt::format("a worker died holding {:.0f} named segment(s); the runner unlinked them", n));
  } else {
    ctx.check(checks::kSegmentsReclaimed, Verdict::kFail, n,
              fmt::format("{:.0f} named segment(s) outlived a completed stream (a release was lost); "
                          "the runner unlinked them", n));
  }
}

}  // namespace sharebench
