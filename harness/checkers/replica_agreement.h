// Checker for replicas that must stay identical (parameter or gradient averaging, a broadcast, any
// scheme where every worker keeps its own copy and a protocol keeps them equal): after each round,
// each rank records a checksum of its replica into a ReplicaLog in the arena; check() compares the
// ranks round by round, so a replica that skipped a round or averaged half-written data is named
// with the first round it drifted.
//
// Bit-for-bit: meant for protocols that sum in a fixed order (every rank computes the same floats).
// A reduction whose order differs between ranks (ring all-reduce) needs a tolerance instead: record
// a spread and use check_within (value_checks.h). Only the first max_rounds rounds are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/results/check_ids.h"

namespace sharebench {

class CheckContext;
class SharedArena;

// FNV-1a over 32-bit words: any change in any bit changes it with high probability. `bytes` is
// rounded down to whole words.
std::uint64_t checksum_words(const void* data, std::size_t bytes);

// A view of the log's arena region: cheap to copy, valid in every process that maps the arena.
class ReplicaLog {
 public:
  // setup(): a log for `procs` replicas over up to `max_rounds` rounds, in region `name`.
  static ReplicaLog create(SharedArena& arena, const std::string& name, int procs, std::int64_t max_rounds);
  // work() and check(): the log setup() created.
  static ReplicaLog attach(SharedArena& arena, const std::string& name);

  // Rank `rank`'s replica checksum after round `round` (0, 1, ...). Each rank writes only its own
  // entries; rounds at or past max_rounds() are dropped.
  void record(int rank, std::int64_t round, std::uint64_t checksum);
  // Rounds every rank recorded.
  std::int64_t complete_rounds() const;
  std::uint64_t at(std::int64_t round, int rank) const;
  int procs() const;
  std::int64_t max_rounds() const;

 private:
  struct Header;
  explicit ReplicaLog(Header* header) : header_(header) {}
  Header* header_;
};

// `replicas-agree`: fails when two ranks' checksums differ after any complete round; unknown when a
// worker did not finish or no round completed.
void check_replicas_agree(CheckContext& ctx, const ReplicaLog& log, const std::string& name = checks::kReplicasAgree);

}  // namespace sharebench
