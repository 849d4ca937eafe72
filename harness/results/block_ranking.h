// Ranking by blocks (Abedi & Brecht's randomized multiple interleaved trials; Kalibera & Jones's
// repetition where the variance is). After the first pass, the ranked strategies of a group run in
// blocks: in each block every contender runs once, in a fresh random order, and one of them (the
// A/A control) twice. A strategy's figure in a block is its ratio to the leader's in the same block,
// so what the machine did during that block (a neighbour, the clock, a slow drift) cancels; the
// interval comes from the spread of those ratios across blocks. The control's two runs in a block
// say how far apart one strategy lands from itself in this run: the typical such distance is this
// run's own tie margin, recorded, instead of a constant measured on another machine.
// Pure: computed from the repetitions' block numbers, so `report` on an old file gives the same answer.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/util/statistics.h"

namespace sharebench {

struct RankingGroup;  // harness/results/recommendation.h

// One strategy's place in the blocks of its group.
struct BlockStanding {
  std::string strategy;          // scenario/variant
  std::string cell;              // the cell its blocks ran (its quickest start method after the first pass)
  std::map<int, double> rate_by_block;
  MeanInterval rate;             // its throughput over its blocks, in the group's unit
  MeanInterval vs_leader;        // its rate / the leader's rate in the same block, over the blocks both ran:
                                 // the geometric mean of those ratios - 1, with its interval (from their logs)
  double score = 0;              // mean over blocks of ln(rate) - the block's mean ln(rate): the leader's is highest
};

// The A/A control: one strategy run twice in every block.
struct BlockControl {
  std::string strategy;
  std::string cell;
  MeanInterval difference;  // its plain run / its control run in the block, over the blocks: the geometric
                            // mean - 1, with its interval (from the log ratios)
  double typical = 0;       // exp(the median of |log ratio|) - 1: the typical distance, as a share
  // How far apart the strategy typically landed from itself within a block: the median distance
  // (0 with fewer than two blocks). A median, not an interval's bound: on a machine whose runs
  // now and then land at half speed, one such block would otherwise tie anything. This run's tie
  // margin, unless --tie-margin says otherwise.
  double margin() const;
  // The A/A interval excludes 0: this run found a difference where there is none.
  bool false_difference() const;
};

struct BlockRanking {
  int blocks = 0;                        // blocks in which two contenders or more ran
  std::vector<BlockStanding> standings;  // the leader first, then by their ratio to it
  std::optional<BlockControl> control;
};

// Which repetitions ran in a block: the block number (>= 0), or -1 for the first pass and others.
bool in_block(const Repetition& r);

// The block ranking of one group's ranked cells; nullopt when none of them ran in a block.
std::optional<BlockRanking> rank_by_blocks(const std::vector<const CellResult*>& cells);

// A group ranked by blocks (recommendation.cc): each strategy's rate and ratio to the leader from
// its blocks; tied with the leader when that ratio's interval reaches 0 (=), or reaches within
// `margin` of it (≈): behind only when the whole interval is more than the margin behind. The
// leader is settled once nothing is tied with it by intervals alone.
void apply_blocks(RankingGroup& g, const BlockRanking& b, double margin);

// The verdict of a group ranked by blocks: the leader with its lead and interval, or the tie with
// each tied strategy's ratio to the leader.
std::string block_verdict(const RankingGroup& g);

}  // namespace sharebench
