// merge: joins the results files of a sharded run (run --shard K/N) back into the one results file
// the unsharded run would have written, cells in the matrix's own order, so every report and
// `compare` read it as any other run. Files that are not shards of one matrix (different shard
// counts, a shard missing or given twice, a cell in two files) are refused with one sentence.
// Whole runs (not sharded) can be joined too: their cells are concatenated, a cell id at most once.
#pragma once

#include <vector>

#include "harness/results/results.h"

namespace sharebench {

// Throws ResultsFormatError (results_json.h) when the inputs do not make one run.
RunResult merge_runs(const std::vector<RunResult>& parts);

}  // namespace sharebench
