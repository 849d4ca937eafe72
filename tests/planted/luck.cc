// Planted: bugs that need an unlucky interleaving, written with no meeting point that forces it,
// as a user's code is. Without --chaos they are caught only sometimes; docs/chaos.md has the rates
// with and without it (tests/chaos_test.sh measures them).
//   scenario `luck-counter`: workers add 1 to a shared counter, --steps times each, reading it,
//     working on the value a little (a few microseconds, as a real update computes), writing it.
//     `unlocked` does it with no lock: updates are lost when another worker writes in between.
//     Twin `locked`: the same read-modify-write under a ProcessMutex. Check `lost-updates`: the
//     counter must end at procs x steps. Registered as may-fail: see the registration below.
//   scenario `luck-ring`: each rank takes its own lock, then its neighbour's, --steps times, with no
//     barrier in between: the ring closes (a hang) only when every rank holds its first lock at
//     once. Twin `ordered`: both locks in one global order. The lock-order check sees the cycle in
//     every repetition; the hang itself is what luck decides (`liveness`).
//   scenario `luck-reinit`: workers add to a guarded section under one shared ProcessMutex, which
//     `reinit` has every worker construct again as it starts ("make sure the lock is initialised"):
//     a worker that does it while another holds the lock wipes the owner, and two enter at once
//     (`mutual-exclusion`, `lost-updates`), or the holder's unlock fails (`liveness`): luck. The harness's `lock-init` check sees the lock
//     constructed again in every repetition. Twin `init-once`: only setup() constructs it.
//   scenario `luck-seqlock`: rank 0 writes a version into every element of an array under a
//     sequence number, --steps times with a short pause between; the others copy the array and
//     hand each copy to a SnapshotMonitor. `no-recheck` never re-reads the sequence after copying:
//     a copy that straddles a write is torn (`consistent-snapshots`) when a reader is interrupted
//     mid-copy while the writer writes. Twin `recheck` copies again when the sequence moved.
//   scenario `luck-tally`: workers count their steps into one shared `std::int64_t` with
//     `tally += 1`, nothing computed in between: the window is a single instruction, so updates
//     are lost only while two workers really run at once (the case chaos must not serialise away).
//     Twin `atomic`: `fetch_add`. Check `lost-updates`, with the workers' overlap as its exposure.
//   scenario `luck-pair`: rank 0 writes a small multi-element value (a position and its velocity,
//     eight numbers) under a ProcessMutex, --steps times back to back; the others read it.
//     `unlocked-read` copies it without the lock ("reading is harmless"): a copy taken half-way
//     through a write is torn (`consistent-snapshots`). Twin `locked-read` takes the lock to copy.
//   scenario `luck-publish`: rank 0 hands messages of 1 024 numbers to the others through one
//     mailbox, --steps times: it waits for the mailbox to be empty, computes and writes the
//     message element by element and raises a flag; a reader that sees the flag copies the
//     message and takes it (lowers the flag).
//     `flag-first` raises the flag and then writes the message ("announce, then fill"): a reader
//     that sees the flag early copies a message half written (`consistent-snapshots`), but only
//     when it runs while the writer writes. Twin `data-first`: the message, then the flag with a
//     release store (the reader loads it with acquire).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <sharebench/sharebench.h>

namespace {

struct Counter {
  std::atomic<std::int64_t> value{0};
  sharebench::ProcessMutex lock{"counter-lock"};
};

// A few microseconds of arithmetic on the value read, as an update would compute.
std::int64_t work_on(std::int64_t v) {
  volatile std::int64_t x = v;
  for (int i = 0; i < 2000; ++i) x = x * 3 % 1000003;
  return v + 1 + (x < 0 ? 1 : 0);  // x is never negative: the result is v + 1
}

class LuckCounter : public sharebench::Scenario {
 public:
  explicit LuckCounter(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Counter>("counter"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto& c = *ctx.arena().lookup<Counter>("counter");
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      if (cell_.variant == "locked") {
        sharebench::ProcessLockGuard guard(c.lock, ctx.rank());
        c.value.store(work_on(c.value.load()));
      } else {
        c.value.store(work_on(c.value.load()));  // the bug: nothing keeps another worker out
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    const std::int64_t want = cell_.workload.steps * cell_.procs;
    const std::int64_t got = ctx.arena().lookup<Counter>("counter")->value.load();
    if (!ctx.all_completed()) {
      ctx.check("lost-updates", sharebench::Verdict::kUnknown, std::nullopt, "a worker did not finish");
      return;
    }
    ctx.check("lost-updates", got == want ? sharebench::Verdict::kPass : sharebench::Verdict::kFail,
              static_cast<double>(want - got),
              fmt::format("the counter ended at {} of {}: {} update(s) lost", got, want, want - got),
              sharebench::worker_overlap(ctx), "more --steps or --procs");
  }

 private:
  sharebench::CellConfig cell_;
};

struct Tally {
  std::int64_t plain = 0;  // what `unlocked` adds to, as a user's shared counter is declared
  std::atomic<std::int64_t> atomic{0};
};

class LuckTally : public sharebench::Scenario {
 public:
  explicit LuckTally(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Tally>("tally"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto& t = *ctx.arena().lookup<Tally>("tally");
    const bool atomic = cell_.variant == "atomic";
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      if (atomic) {
        t.atomic.fetch_add(1);
      } else {
        t.plain += 1;  // the bug: a read, an add and a write, which another worker's can overlap
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    const auto& t = *ctx.arena().lookup<Tally>("tally");
    const std::int64_t want = cell_.workload.steps * cell_.procs;
    const std::int64_t got = cell_.variant == "atomic" ? t.atomic.load() : t.plain;
    if (!ctx.all_completed()) {
      ctx.check("lost-updates", sharebench::Verdict::kUnknown, std::nullopt, "a worker did not finish");
      return;
    }
    ctx.check("lost-updates", got == want ? sharebench::Verdict::kPass : sharebench::Verdict::kFail,
              static_cast<double>(want - got),
              fmt::format("the tally ended at {} of {}: {} update(s) lost", got, want, want - got),
              sharebench::worker_overlap(ctx), "more --steps or --procs");
  }

 private:
  sharebench::CellConfig cell_;
};

constexpr std::size_t kPairElements = 8;  // x, y, z, vx, vy, vz, t, id: one small record

struct Pair {
  sharebench::ProcessMutex lock{"pair-lock"};
  std::atomic<int> writer_done{0};
  sharebench::SnapshotMonitor snapshots;
  std::int64_t value[kPairElements] = {};
};

class LuckPair : public sharebench::Scenario {
 public:
  explicit LuckPair(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Pair>("pair"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto& p = *ctx.arena().lookup<Pair>("pair");
    ctx.wait_for_start();
    if (ctx.rank() == 0) {  // the writer, back to back
      for (std::int64_t version = 1; version <= cell_.workload.steps; ++version) {
        {
          sharebench::ProcessLockGuard guard(p.lock, ctx.rank());
          for (std::size_t i = 0; i < kPairElements; ++i) {
            reinterpret_cast<volatile std::int64_t*>(p.value)[i] = version;  // one element at a time, as a struct's fields are
          }
        }
        ctx.beat(version);
      }
      p.writer_done.store(1);
      return;
    }
    std::int64_t copy[kPairElements];
    std::int64_t n = 0;
    while (p.writer_done.load() == 0 && !ctx.peer_failed()) {
      if (cell_.variant == "locked-read") {
        sharebench::ProcessLockGuard guard(p.lock, ctx.rank());
        for (std::size_t i = 0; i < kPairElements; ++i) copy[i] = reinterpret_cast<volatile std::int64_t*>(p.value)[i];
      } else {
        for (std::size_t i = 0; i < kPairElements; ++i) copy[i] = reinterpret_cast<volatile std::int64_t*>(p.value)[i];  // the bug
      }
      p.snapshots.observe(copy, kPairElements);
      ctx.beat(++n);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    sharebench::check_consistent_snapshots(ctx, ctx.arena().lookup<Pair>("pair")->snapshots);
  }

 private:
  sharebench::CellConfig cell_;
};

class LuckRing : public sharebench::Scenario {
 public:
  explicit LuckRing(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override {
    for (int i = 0; i < cell_.procs; ++i) {
      ctx.arena().create<sharebench::ProcessMutex>(fmt::format("luck-ring.{}", i), fmt::format("R{}", i));
    }
  }
  void work(sharebench::WorkerContext& ctx) override {
    auto lock = [&](int i) -> sharebench::ProcessMutex& {
      return *ctx.arena().lookup<sharebench::ProcessMutex>(fmt::format("luck-ring.{}", i % ctx.procs()));
    };
    const int mine = ctx.rank(), next = (ctx.rank() + 1) % ctx.procs();
    const bool ordered = cell_.variant == "ordered";
    ctx.wait_for_start();
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      sharebench::ProcessLockGuard first(lock(ordered ? std::min(mine, next) : mine), ctx.rank());
      sharebench::ProcessLockGuard second(lock(ordered ? std::max(mine, next) : next), ctx.rank());
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
};

struct Reinit {
  sharebench::ProcessMutex lock{"shared-lock"};
  sharebench::SectionMonitor section;
};

class LuckReinit : public sharebench::Scenario {
 public:
  explicit LuckReinit(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Reinit>("reinit"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto& s = *ctx.arena().lookup<Reinit>("reinit");
    ctx.wait_for_start();
    if (cell_.variant == "reinit") new (&s.lock) sharebench::ProcessMutex("shared-lock");  // the bug
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) {
      {
        sharebench::ProcessLockGuard guard(s.lock, ctx.rank());
        sharebench::GuardedSection section(s.section);
        work_on(step);
      }
      ctx.beat(step);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    const auto& s = *ctx.arena().lookup<Reinit>("reinit");
    sharebench::check_mutual_exclusion(ctx, s.section);
    sharebench::check_lost_updates(ctx, s.section);
  }

 private:
  sharebench::CellConfig cell_;
};

constexpr std::size_t kSeqElements = 16384;  // 128 KiB: a small model's parameters

struct Seqlocked {
  std::atomic<std::uint64_t> sequence{0};  // odd while a write is in progress
  std::atomic<int> writer_done{0};
  sharebench::SnapshotMonitor snapshots;
  std::int64_t data[kSeqElements] = {};
};

class LuckSeqlock : public sharebench::Scenario {
 public:
  explicit LuckSeqlock(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Seqlocked>("luck-seqlock"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto* s = ctx.arena().lookup<Seqlocked>("luck-seqlock");
    ctx.wait_for_start();
    if (ctx.rank() == 0) {  // the writer: a round now and then
      for (std::int64_t version = 1; version <= cell_.workload.steps; ++version) {
        s->sequence.fetch_add(1);
        sharebench::stamp_version(s->data, kSeqElements, version);
        s->sequence.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        ctx.beat(version);
      }
      s->writer_done.store(1);
      return;
    }
    std::vector<std::int64_t> copy(kSeqElements);
    std::int64_t n = 0;
    while (s->writer_done.load() == 0 && !ctx.peer_failed()) {
      std::uint64_t before;
      do {
        do before = s->sequence.load(); while (before % 2 == 1);
        for (std::size_t i = 0; i < kSeqElements; ++i) copy[i] = s->data[i];
      } while (cell_.variant == "recheck" && s->sequence.load() != before);  // the bug: no re-check
      s->snapshots.observe(copy.data(), copy.size());
      ctx.beat(++n);
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    sharebench::check_consistent_snapshots(ctx, ctx.arena().lookup<Seqlocked>("luck-seqlock")->snapshots);
  }

 private:
  sharebench::CellConfig cell_;
};

constexpr std::size_t kMessageElements = 1024;

struct Mailbox {
  std::atomic<std::int64_t> flag{0};  // the version on offer; 0: empty
  std::atomic<int> writer_done{0};
  sharebench::SnapshotMonitor snapshots;
  std::int64_t message[kMessageElements] = {};
};

// Writes a message element by element, each computed as a real message's would be (a few tens
// of nanoseconds of arithmetic each): a reader's copy is faster than the writing, so a reader
// that starts early overtakes the writer. Written with a plain store per element, the message was
// torn in only 1 to 13 copies of 2 000 (the reader trails the writer line by line).
void fill_message(volatile std::int64_t* message, std::int64_t version) {
  for (std::size_t i = 0; i < kMessageElements; ++i) {
    volatile std::int64_t x = static_cast<std::int64_t>(i) + version;
    for (int k = 0; k < 8; ++k) x = x * 3 % 1000003;
    message[i] = version + (x < 0 ? 1 : 0);  // x is never negative: the element is the version
  }
}

// Waits, spinning and then yielding the core, until `ready()` or a peer failed. A user's
// mailbox spins the same way; the yield keeps a waiter from starving the one it waits for on a
// busy machine.
template <typename Ready>
bool spin_until(sharebench::WorkerContext& ctx, Ready ready) {
  for (std::int64_t spins = 0; !ready(); ++spins) {
    if ((spins & 1023) == 1023) {
      if (ctx.peer_failed()) return false;
      std::this_thread::yield();
    }
  }
  return true;
}

class LuckPublish : public sharebench::Scenario {
 public:
  explicit LuckPublish(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext& ctx) override { ctx.arena().create<Mailbox>("mailbox"); }
  void work(sharebench::WorkerContext& ctx) override {
    auto& box = *ctx.arena().lookup<Mailbox>("mailbox");
    auto* message = reinterpret_cast<volatile std::int64_t*>(box.message);
    ctx.wait_for_start();
    if (ctx.rank() == 0) {  // the writer
      for (std::int64_t version = 1; version <= cell_.workload.steps; ++version) {
        if (!spin_until(ctx, [&] { return box.flag.load(std::memory_order_acquire) == 0; })) break;
        if (cell_.variant == "flag-first") {
          box.flag.store(version, std::memory_order_release);  // the bug: announced before it is written
          fill_message(message, version);
        } else {
          fill_message(message, version);
          box.flag.store(version, std::memory_order_release);
        }
        ctx.beat(version);
      }
      box.writer_done.store(1);
      return;
    }
    std::vector<std::int64_t> copy(kMessageElements);
    std::int64_t taken = 0;
    for (;;) {
      std::int64_t offered = 0;
      if (!spin_until(ctx, [&] {
            offered = box.flag.load(std::memory_order_acquire);
            return offered != 0 || box.writer_done.load() != 0;
          })) {
        return;
      }
      if (offered == 0) return;  // the writer is done and nothing is left on offer
      for (std::size_t i = 0; i < kMessageElements; ++i) copy[i] = message[i];
      // Taken only if the flag still offers what was copied: another reader may have taken it.
      if (box.flag.compare_exchange_strong(offered, 0, std::memory_order_acq_rel)) {
        box.snapshots.observe(copy.data(), copy.size());
        ctx.beat(++taken);
      }
    }
  }
  void check(sharebench::CheckContext& ctx) override {
    sharebench::check_consistent_snapshots(ctx, ctx.arena().lookup<Mailbox>("mailbox")->snapshots);
  }

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

SHAREBENCH_SCENARIO(LuckCounter, "luck-counter")
    ->Describe("workers add 1 to a shared counter: read, compute, write")
    ->Variant("locked", "the read-modify-write under a ProcessMutex")
    // Without --chaos a may-fail: on a loaded machine the workers may never overlap (docs/chaos.md
    // has the rates). Under --chaos the preemption timer pauses a worker inside its read-modify-write.
    ->KnownBug("unlocked", "the read-modify-write with no lock (no meeting point forces the overlap)",
               sharebench::Expectation{{}, {"lost-updates"}}, 2)
    ->MustFailUnderChaos({"lost-updates"});

SHAREBENCH_SCENARIO(LuckReinit, "luck-reinit")
    ->Describe("workers add under one shared lock, in a guarded section")
    ->Variant("init-once", "setup() constructs the lock; workers only use it")
    ->KnownBug("reinit", "every worker constructs the shared lock again as it starts",
               sharebench::Expectation{{"lock-init"}, {"mutual-exclusion", "lost-updates", "liveness"}});

SHAREBENCH_SCENARIO(LuckSeqlock, "luck-seqlock")
    ->Describe("one writer stamps versions under a sequence number now and then; readers copy")
    ->MinProcs(2)
    ->Variant("recheck", "the reader copies again when the sequence moved")
    ->KnownBug("no-recheck", "the reader trusts its copy without re-reading the sequence (no forced pause)",
               sharebench::Expectation{{}, {"consistent-snapshots"}})
    ->MustFailUnderChaos({"consistent-snapshots"});

SHAREBENCH_SCENARIO(LuckRing, "luck-ring")
    ->Describe("each rank takes two locks of a ring, over and over, with no barrier")
    ->MinProcs(2)
    ->Variant("ordered", "both locks in one global order")
    ->KnownBug("ring", "its own lock, then its neighbour's: a cycle the schedule may or may not close",
               sharebench::Expectation{{"lock-order"}, {"liveness", "deadlock-free"}});

SHAREBENCH_SCENARIO(LuckTally, "luck-tally")
    ->Describe("workers count into one shared int64 with `+= 1`, nothing in between")
    ->Variant("atomic", "the same count with fetch_add")
    // A single instruction's window: lost only while two workers run at once, which an idle
    // machine gives and a loaded one may not; under --chaos its overlap bursts keep them together.
    ->KnownBug("unlocked", "`tally += 1` on a plain shared int64", sharebench::Expectation{{}, {"lost-updates"}}, 2)
    ->MustFailUnderChaos({"lost-updates"});

SHAREBENCH_SCENARIO(LuckPair, "luck-pair")
    ->Describe("one writer updates an eight-number record under a lock; readers copy it")
    ->MinProcs(2)
    ->Variant("locked-read", "readers take the writer's lock to copy")
    ->KnownBug("unlocked-read", "readers copy the record without the lock",
               sharebench::Expectation{{}, {"consistent-snapshots"}}, 2)
    ->MustFailUnderChaos({"consistent-snapshots"});

SHAREBENCH_SCENARIO(LuckPublish, "luck-publish")
    ->Describe("one writer hands messages to the others through a mailbox with a ready flag")
    ->MinProcs(2)
    ->Variant("data-first", "the message, then the flag with a release store")
    ->KnownBug("flag-first", "the flag is raised before the message is written",
               sharebench::Expectation{{}, {"consistent-snapshots"}}, 2)
    ->MustFailUnderChaos({"consistent-snapshots"});
