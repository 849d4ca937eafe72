// Checker for torn reads: version stripes. A writer stamps one version into every element of a
// round (stamp_version), so a snapshot taken while no write is in progress holds a single version;
// a reader hands each snapshot it copied to a SnapshotMonitor, and a snapshot that mixes versions
// is a torn read: the reader's copy straddled a write.
//
// Works for any element type a version fits in exactly (integers; float up to 2^24 versions). Not
// seen: a torn read of data that is not stamped, and a copy that tears only inside one element
// (a word-sized element is written atomically on every platform sharebench runs on).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/results/check_ids.h"

namespace sharebench {

class CheckContext;

// One write round: every element becomes `version`.
template <typename T>
void stamp_version(T* data, std::size_t count, T version) {
  std::fill(data, data + count, version);
}

// Lives in the arena (create<SnapshotMonitor>); readers in every worker record into it.
struct SnapshotMonitor {
  std::atomic<std::int64_t> snapshots{0};
  std::atomic<std::int64_t> torn{0};
  std::atomic<std::int64_t> worst_spread{0};  // versions between the oldest and newest element seen
  // Exposure: the newest version any snapshot held, and how many snapshots moved it. Each move
  // after the first snapshot is a write that landed between two reads: the readers ran while the writer
  // wrote. None means every copy was taken of a value that never changed (the writer was done
  // first, or had not begun), and a clean verdict would be vacuous.
  std::atomic<std::int64_t> newest{-1};  // -1: no snapshot yet
  std::atomic<std::int64_t> newer_seen{0};

  // Records one snapshot a reader copied; returns true when it was torn.
  template <typename T>
  bool observe(const T* copy, std::size_t count) {
    if (count == 0) return false;
    const auto [lo, hi] = std::minmax_element(copy, copy + count);
    record(static_cast<std::int64_t>(*hi) - static_cast<std::int64_t>(*lo), static_cast<std::int64_t>(*hi));
    return *hi != *lo;
  }
  void record(std::int64_t spread, std::int64_t newest_version);
  // Writes that landed between two snapshots (the check's exposure).
  std::int64_t writes_between_reads() const;
};

// `consistent-snapshots`: fails when any snapshot mixed versions; not exercised when none was
// taken or no write landed between two snapshots.
void check_consistent_snapshots(CheckContext& ctx, const SnapshotMonitor& monitor,
                                const std::string& name = checks::kConsistentSnapshots);

}  // namespace sharebench
