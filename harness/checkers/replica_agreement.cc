// The replica log: a header, each rank's count of recorded rounds, then rounds × procs checksums.
#include "harness/checkers/replica_agreement.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/arena/shared_arena.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

std::uint64_t checksum_words(const void* data, std::size_t bytes) {
  std::uint64_t sum = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
    std::uint32_t word;
    std::memcpy(&word, p + i, 4);
    sum = (sum ^ word) * 1099511628211ULL;
  }
  return sum;
}

struct ReplicaLog::Header {
  std::int64_t procs;
  std::int64_t max_rounds;
  std::atomic<std::int64_t>* recorded() { return reinterpret_cast<std::atomic<std::int64_t>*>(this + 1); }
  std::uint64_t* sums() { return reinterpret_cast<std::uint64_t*>(recorded() + procs); }
};
static_assert(sizeof(std::atomic<std::int64_t>) == sizeof(std::int64_t), "counts are laid out as plain words");

ReplicaLog ReplicaLog::create(SharedArena& arena, const std::string& name, int procs, std::int64_t max_rounds) {
  if (procs < 1 || max_rounds < 1) throw std::invalid_argument("ReplicaLog needs at least one rank and one round");
  const std::size_t bytes = sizeof(Header) + sizeof(std::int64_t) * static_cast<std::size_t>(procs) +
                            sizeof(std::uint64_t) * static_cast<std::size_t>(procs) * static_cast<std::size_t>(max_rounds);
  auto* header = static_cast<Header*>(arena.allocate(name, bytes));  // zeroed
  header->procs = procs;
  header->max_rounds = max_rounds;
  for (int r = 0; r < procs; ++r) new (&header->recorded()[r]) std::atomic<std::int64_t>(0);
  return ReplicaLog(header);
}

ReplicaLog ReplicaLog::attach(SharedArena& arena, const std::string& name) {
  return ReplicaLog(static_cast<Header*>(arena.get(name)));
}

void ReplicaLog::record(int rank, std::int64_t round, std::uint64_t checksum) {
  if (rank < 0 || rank >= header_->procs || round < 0 || round >= header_->max_rounds) return;
  header_->sums()[round * header_->procs + rank] = checksum;
  auto& count = header_->recorded()[rank];
  if (count.load(std::memory_order_relaxed) < round + 1) count.store(round + 1, std::memory_order_release);
}

std::int64_t ReplicaLog::complete_rounds() const {
  std::int64_t rounds = header_->max_rounds;
  for (std::int64_t r = 0; r < header_->procs; ++r) {
    rounds = std::min(rounds, header_->recorded()[r].load(std::memory_order_acquire));
  }
  return rounds;
}

std::uint64_t ReplicaLog::at(std::int64_t round, int rank) const { return header_->sums()[round * header_->procs + rank]; }
int ReplicaLog::procs() const { return static_cast<int>(header_->procs); }
std::int64_t ReplicaLog::max_rounds() const { return header_->max_rounds; }

void check_replicas_agree(CheckContext& ctx, const ReplicaLog& log, const std::string& name) {
  if (!ctx.all_completed()) {
    ctx.check(name, Verdict::kUnknown, std::nullopt, "a worker did not finish");
    return;
  }
  const std::int64_t rounds = log.complete_rounds();
  if (rounds == 0) {  // nothing was averaged: nothing to agree on, and nothing claimed
    ctx.check(name, Verdict::kNotExercised, std::nullopt, "no round was recorded by every rank",
              Exposure{0, "averaging rounds compared across two or more replicas"}, "more --steps");
    return;
  }
  std::int64_t disagreeing = 0, first = -1;
  int first_rank = -1;
  for (std::int64_t round = 0; round < rounds; ++round) {
    for (int k = 1; k < log.procs(); ++k) {
      if (log.at(round, k) != log.at(round, 0)) {
        ++disagreeing;
        if (first < 0) first = round, first_rank = k;
        break;
      }
    }
  }
  // Exposed only where there is another replica to disagree with.
  const Exposure exposure{log.procs() >= 2 ? static_cast<double>(rounds) : 0,
                          "averaging rounds compared across two or more replicas"};
  if (disagreeing == 0) {
    ctx.check(name, Verdict::kPass, 0,
              fmt::format("all {} replicas were bit-identical after each of {} rounds", log.procs(), rounds), exposure,
              "more --procs or --steps");
    return;
  }
  ctx.check(name, Verdict::kFail, static_cast<double>(disagreeing),
            fmt::format("replicas disagreed after {} of {} rounds, first after round {} (rank {} against rank 0)",
                        disagreeing, rounds, first, first_rank));
  ctx.repetition().checks.back().exposure = exposure;
}

}  // namespace sharebench
