// The contexts a scenario sees: what a worker may publish, and what a checker may read and write.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/chaos/chaos_schedule.h"
#include "harness/scenario/scenario.h"
#include "harness/proc/memory_probe.h"

#include <chrono>
#include <thread>
#include "harness/util/clock.h"

namespace sharebench {

namespace {
constexpr std::int64_t kMemoryReadingIntervalNs = 250'000'000;
}  // namespace

std::string SetupContext::private_path(const std::string& name) const {
  if (private_dir_.empty()) throw std::logic_error("this setup context has no private directory");
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw std::invalid_argument(fmt::format("private_path('{}'): a plain file name is needed", name));
  }
  return private_dir_ + "/" + name;
}

WorkerContext::WorkerContext(const CellConfig& cell, SharedArena& arena, int rank)
    : cell_(cell), arena_(arena), rank_(rank) {
  block_ = arena.lookup<HarnessBlock>(HarnessBlock::kRegionName);
  if (rank < 0 || rank >= block_->procs) {
    throw std::out_of_range(fmt::format("worker rank {} outside 0..{}", rank, block_->procs - 1));
  }
  slot_ = &block_->slots[rank];
}

void WorkerContext::wait_for_start() {
  slot_->arrived_ns = monotonic_ns();
  slot_->last_beat_ns.store(slot_->arrived_ns, std::memory_order_release);
  chaos_at_start_barrier();
  block_->start_barrier.wait();
  slot_->started_ns = monotonic_ns();
  slot_->phase.store(static_cast<std::int32_t>(WorkerPhase::kRunning), std::memory_order_release);
}

void WorkerContext::beat(std::int64_t steps_done) {
  slot_->steps.store(steps_done, std::memory_order_relaxed);
  slot_->last_beat_ns.store(monotonic_ns(), std::memory_order_relaxed);
  if (slot_->warm_ns == 0 && steps_done >= std::max<std::int64_t>(1, cell_.workload.steps / 20)) {
    slot_->warm_steps = steps_done;
    slot_->warm_ns = monotonic_ns();
  }
  slot_->heartbeat.fetch_add(1, std::memory_order_release);
  // A worker process reads its own private memory now and then (every 250 ms; about 3 ms each with
  // LibTorch mapped, for smaps_rollup walks the page tables). Not one that runs a command: it only
  // supervises the program, whose processes are measured instead.
  if (cell_.start != StartMethod::kThread && cell_.command.empty()) {
    const std::int64_t now = monotonic_ns();
    if (next_memory_reading_ns_ == 0) {
      next_memory_reading_ns_ = now + kMemoryReadingIntervalNs;
    } else if (now >= next_memory_reading_ns_) {
      next_memory_reading_ns_ = now + kMemoryReadingIntervalNs;
      if (auto m = sample_memory(::getpid())) {
        slot_->uss_kb_while_working.store(static_cast<std::int64_t>(m->uss_mb * 1024), std::memory_order_relaxed);
      }
    }
  }
  chaos_point(ChaosSite::kBeat);
  // --step-delay-us slows every scenario alike: after each unit of progress, not inside it.
  if (cell_.workload.step_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(cell_.workload.step_delay_us));
#ifdef SHAREBENCH_PLANTED_STEP_SLEEP_US
  // A build slowed on purpose (CMake SHAREBENCH_PLANTED_STEP_SLEEP_US): the gate's test must catch it.
  std::this_thread::sleep_for(std::chrono::microseconds(SHAREBENCH_PLANTED_STEP_SLEEP_US));
#endif
}

bool WorkerContext::peer_failed() const {
  if (block_->failed_workers.load(std::memory_order_acquire) > 0) return true;
  for (int r = 0; r < block_->procs; ++r) {  // thread mode: a failed rank's thread says so itself
    if (r != rank_ && block_->slots[r].phase.load(std::memory_order_acquire) == static_cast<std::int32_t>(WorkerPhase::kFailed)) {
      return true;
    }
  }
  return false;
}

double WorkerContext::elapsed_s() const {
  return slot_->started_ns == 0 ? 0.0 : (monotonic_ns() - slot_->started_ns) * 1e-9;
}

void WorkerContext::metric(std::string_view name, double value) {
  WorkerSlot& s = *slot_;
  for (int i = 0; i < s.metric_count; ++i) {
    if (name == s.metrics[i].name) {
      s.metrics[i].value = value;
      return;
    }
  }
  if (s.metric_count >= WorkerSlot::kMaxMetrics) {
    throw std::length_error(fmt::format("more than {} worker metrics", WorkerSlot::kMaxMetrics));
  }
  if (name.size() >= WorkerSlot::kMaxName) {
    throw std::length_error(fmt::format("metric name '{}' too long", name));
  }
  auto& m = s.metrics[s.metric_count];
  std::memset(m.name, 0, sizeof m.name);
  std::memcpy(m.name, name.data(), name.size());
  m.value = value;
  ++s.metric_count;
}

void WorkerContext::record_point(double step, double value) {
  WorkerSlot& s = *slot_;
  if (s.point_count >= WorkerSlot::kMaxSeriesPoints) return;
  s.points[s.point_count] = WorkerSlot::Point{step, elapsed_s(), value};
  ++s.point_count;
}

void WorkerContext::finish() {
  if (slot_->finished_ns == 0) slot_->finished_ns = monotonic_ns();
}

double WorkerView::metric(std::string_view name, double fallback) const {
  for (int i = 0; i < slot->metric_count; ++i) {
    if (name == slot->metrics[i].name) return slot->metrics[i].value;
  }
  return fallback;
}

CheckContext::CheckContext(const CellConfig& cell, SharedArena& arena, Repetition& rep)
    : cell_(cell), arena_(arena), rep_(rep) {
  auto* block = arena.lookup<HarnessBlock>(HarnessBlock::kRegionName);
  for (int r = 0; r < block->procs; ++r) {
    const WorkerSlot& s = block->slots[r];
    const bool done = s.phase.load() == static_cast<std::int32_t>(WorkerPhase::kDone);
    const double run_s = (s.finished_ns > s.started_ns && s.started_ns > 0)
                             ? (s.finished_ns - s.started_ns) * 1e-9 : 0.0;
    workers_.push_back(WorkerView{r, done, s.steps.load(), run_s, &s});
  }
}

bool CheckContext::all_completed() const {
  return std::all_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.completed; });
}

double CheckContext::sum_metric(std::string_view name) const {
  double total = 0;
  for (const auto& w : workers_) total += w.metric(name);
  return total;
}

void CheckContext::check(std::string name, Verdict verdict, std::optional<double> value,
                         std::string message) {
  rep_.checks.push_back(Check{std::move(name), verdict, value, std::move(message)});
}

void CheckContext::check(std::string name, Verdict verdict, std::optional<double> value, std::string message,
                         const Exposure& exposure, const std::string& to_raise) {
  if (verdict == Verdict::kPass || verdict == Verdict::kNotExercised) message += "; " + exposure_text(exposure, to_raise);
  rep_.checks.push_back(Check{std::move(name), verdict, value, std::move(message), exposure});
}

void CheckContext::metric(std::string name, double value) { rep_.metrics[std::move(name)] = value; }

void CheckContext::series(Series s) { rep_.series.push_back(std::move(s)); }

void CheckContext::worker_series(const std::string& name, std::int64_t batch) {
  for (const auto& wv : workers_) {
    Series s{name, wv.rank, {}};
    for (int i = 0; i < wv.slot->point_count; ++i) {
      s.points.push_back(SeriesPoint{wv.slot->points[i].step, wv.slot->points[i].time_s, wv.slot->points[i].value});
    }
    series(std::move(s));
  }
  if (auto it = rep_.metrics.find("steps_per_s"); it != rep_.metrics.end()) {
    metric("samples_per_s", it->second * static_cast<double>(batch));
  }
}

}  // namespace sharebench
