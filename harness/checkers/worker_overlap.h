// Exposure for a check whose danger needs two workers running at once (a lost update, a torn copy):
// how long two or more of the repetition's workers were between the start barrier and the end of
// work() together, from the times the harness keeps in their slots. A user's check hands it to
// CheckContext::check, so a pass on a run whose workers never overlapped (one finished before the
// next started) reads "not exercised", not clean.
#pragma once

#include "harness/results/results.h"

namespace sharebench {

class CheckContext;

// Microseconds during which at least two workers ran their work at once (0 at one process).
double concurrent_run_us(const CheckContext& ctx);
// The same as an Exposure: "µs during which two or more workers ran at once".
Exposure worker_overlap(const CheckContext& ctx);

}  // namespace sharebench
