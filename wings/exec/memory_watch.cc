// memory_watch: the supervisor's paced reads of memory, descriptors and /dev/shm use.
#include "wings/exec/memory_watch.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <climits>
#include <ctime>
#include <cstdio>
#include <utility>
#include <vector>

#include "harness/proc/memory_probe.h"
#include "harness/util/clock.h"
#include "harness/util/text.h"
#include "wings/exec/process_tree.h"

namespace sharebench {

namespace {
// A process holding this many descriptors has its RLIMIT_NOFILE read again at each look.
constexpr int kFdsWorthALimitRead = 32;

// This thread's CPU time: what a walk costs a core, not stretched when the thread waits for one on a
// loaded machine (the allowance would then run out on waiting).
std::int64_t thread_cpu_ns() { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }
}  // namespace

MemoryWatch::MemoryWatch(ExecBlock& b, std::int64_t t0_ns, std::function<TreeProcess*(pid_t)> find)
    : b_(b), t0_ns_(t0_ns), find_(std::move(find)) {
  for (std::string& name : list_dev_shm()) shm_at_start_.insert(std::move(name));
}

void MemoryWatch::poll(std::int64_t now, const std::set<pid_t>& live) {
  for (const pid_t pid : live) {  // a process seen for the first time is measured at once: it may not live to a round
    TreeProcess* p = find_(pid);
    if (p && !walked_[p].ever) walk(now, pid, *p, /*shm=*/false, nullptr);
  }
  if (now < next_cheap_) return;
  next_cheap_ = now + kEveryNs;
  cheap_reads(now, live);
  const bool news = new_shm_names();
  if (now - last_round_ >= kEveryNs && allowance_left(now)) {
    last_round_ = now;
    double pss_sum = 0;
    const bool shm = news || !unfound_shm_.empty();  // a name made before it was mapped is looked for again
    for (const pid_t pid : live) {
      TreeProcess* p = find_(pid);
      if (!p) continue;
      const Walked& w = walked_[p];
      if (w.ever && now - w.at_ns < kEveryNs && !shm) {  // walked since the last round (it grew, or was new)
        pss_sum += w.pss_mb;
        continue;
      }
      walk(now, pid, *p, shm, &pss_sum);
    }
    b_.pss_mb_total_peak = std::max(b_.pss_mb_total_peak, pss_sum);
  } else if (news) {  // off the allowance: a leaked segment's maker is named whatever the walks cost
    const std::int64_t start = thread_cpu_ns();
    for (const pid_t pid : live) look_for_shm(pid);
    lookup_ns_ += thread_cpu_ns() - start;
  }
  if (struct statvfs v{}; ::statvfs("/dev/shm", &v) == 0) {
    const double used = static_cast<double>(v.f_blocks - v.f_bfree) * static_cast<double>(v.f_frsize) / (1 << 20);
    b_.dev_shm_used_mb_peak = std::max(b_.dev_shm_used_mb_peak, used);
  }
}

void MemoryWatch::cheap_reads(std::int64_t now, const std::set<pid_t>& live) {
  for (const pid_t pid : live) {
    TreeProcess* p = find_(pid);
    if (!p) continue;
    const double resident = resident_mb(pid);
    p->rss_mb_peak = std::max(p->rss_mb_peak, resident);
    const Walked& w = walked_[p];
    if (w.ever && resident >= w.resident_mb + std::max(kGrowthWorthAWalkMb, kGrowthWorthAWalk * w.resident_mb) &&
        allowance_left(now)) {
      walk(now, pid, *p, /*shm=*/false, nullptr);
    }
    const int fds = count_descriptors(pid);
    p->fds_peak = std::max(p->fds_peak, fds);
    // The limit is read again once a process holds a few: a program may lower its own
    // (setrlimit), and the finding is about how near it came to the limit it had then.
    if (p->fd_limit == 0 || fds >= kFdsWorthALimitRead) {
      const auto limit = static_cast<std::int32_t>(std::min<long>(descriptor_limit(pid), INT32_MAX));
      if (limit > 0 && (p->fd_limit == 0 || static_cast<double>(fds) / limit >
                                                 static_cast<double>(p->fds_nearest_limit) / p->fd_limit)) {
        p->fd_limit = limit;
        p->fds_nearest_limit = fds;
      }
    }
  }
}

bool MemoryWatch::walk(std::int64_t now, pid_t pid, TreeProcess& p, bool shm, double* pss) {
  const std::int64_t start = thread_cpu_ns();
  Walked& w = walked_[&p];
  w.ever = true;
  const auto m = sample_memory(pid);
  w.at_ns = now;
  if (m) {
    w.resident_mb = m->rss_mb;
    w.pss_mb = m->pss_mb;
    p.rss_mb_peak = std::max(p.rss_mb_peak, m->rss_mb);
    p.pss_mb_peak = std::max(p.pss_mb_peak, m->pss_mb);
    p.uss_mb_peak = std::max(p.uss_mb_peak, m->uss_mb);
    p.shared_mb_peak = std::max(p.shared_mb_peak, m->shared_mb);
    if (pss) *pss += m->pss_mb;
    if (p.samples++ % p.stride == 0) {
      if (p.points == TreeProcess::kMaxPoints) {  // keep every other point, and keep half as many from now
        for (int i = 0; i < TreeProcess::kMaxPoints / 2; ++i) {
          p.point_s[i] = p.point_s[2 * i];
          p.point_uss_mb[i] = p.point_uss_mb[2 * i];
        }
        p.points = TreeProcess::kMaxPoints / 2;
        p.stride *= 2;
      }
      p.point_s[p.points] = static_cast<float>(static_cast<double>(now - t0_ns_) * 1e-9);
      p.point_uss_mb[p.points] = static_cast<float>(m->uss_mb);
      ++p.points;
    }
  }
  if (m && shm) look_for_shm(pid);
  walk_ns_ += thread_cpu_ns() - start;
  ++walks_;
  return m.has_value();
}

void MemoryWatch::look_for_shm(pid_t pid) {
  for (const std::string& name : shm_in_use(pid)) {
    unfound_shm_.erase(name);
    if (!seen_shm_.insert(name).second) continue;
    if (b_.sightings >= ExecBlock::kMaxSightings) {
      ++b_.sightings_dropped;
      continue;
    }
    ShmSighting& s = b_.shm[b_.sightings++];
    copy_text(s.name, sizeof s.name, name);
    s.pid = pid;
  }
}

bool MemoryWatch::allowance_left(std::int64_t now) const {
  return static_cast<double>(walk_ns_) <= static_cast<double>(kFirstAllowanceNs) + kWalkShare * static_cast<double>(now - t0_ns_);
}

// Names in /dev/shm that were not there at the start and no process was seen holding; true when one
// appeared since the last look. Those gone from /dev/shm are forgotten.
bool MemoryWatch::new_shm_names() {
  std::set<std::string> now_unfound;
  bool appeared = false;
  for (std::string& name : list_dev_shm()) {
    if (shm_at_start_.count(name) || seen_shm_.count(name)) continue;
    appeared = appeared || !unfound_shm_.count(name);
    now_unfound.insert(std::move(name));
  }
  unfound_shm_ = std::move(now_unfound);
  return appeared;
}

}  // namespace sharebench
