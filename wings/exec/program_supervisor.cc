// program_supervisor: the exec worker's loop. One thread, polling: reap, scan the tree, read
// progress, sample memory now and then, inject the fault, and after the program's end settle the
// rest of the tree. Its pace follows the tree: every kPollYoung with a scan every kScanYoungNs while
// processes come and go, then every kPollSettled with a scan every kScanSettledNs once the tree has
// not changed for kSettledAfterNs. A Python process wakes it at birth (python_births.h), so the
// slow pace misses only processes that are not Python and live less than kScanSettledNs. Each of
// its wakes takes a core from a program that keeps every core busy: beside a two-worker trainer of
// 4-5 s on 2 cores, the young pace throughout used 53-63 ms of CPU, and this pacing 33-43 ms
// (`supervisor_cpu_s`; docs/exec.md, "What exec costs, as the user pays it").
#include "wings/exec/program_supervisor.h"
#include "harness/util/find_executable.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "wings/exec/memory_watch.h"
#include "wings/exec/output_tail.h"
#include "wings/exec/process_tree.h"
#include "wings/exec/program_launch.h"
#include "wings/exec/progress_channel.h"
#include "wings/exec/python_births.h"
#include "harness/faults/nemesis.h"
#include "harness/scenario/scenario_option.h"
#include "harness/util/clock.h"
#include "harness/util/parent_death.h"
#include "harness/util/process_end.h"
#include "harness/util/text.h"

extern char** environ;

namespace sharebench {

namespace {
using namespace std::chrono_literals;
constexpr auto kPollYoung = 20ms;
constexpr auto kPollSettled = 100ms;
constexpr std::int64_t kScanYoungNs = 50'000'000;       // the tree, from /proc
constexpr std::int64_t kScanSettledNs = 250'000'000;
constexpr std::int64_t kSettledAfterNs = 500'000'000;  // without a birth or an end in the tree
constexpr std::int64_t kScanGapNs = 20'000'000;         // the least, however fast Python processes start
constexpr std::int64_t kSettleNs = 1'000'000'000;      // after the program's end, for the rest to end
constexpr std::int64_t kHelperGraceNs = static_cast<std::int64_t>(kHelperGraceS * 1e9);
constexpr std::int64_t kStopGraceNs = static_cast<std::int64_t>(kStopGraceS * 1e9);
constexpr std::int64_t kTermGraceNs = static_cast<std::int64_t>(kTermGraceS * 1e9);
constexpr std::int64_t kYoungNs = 2'000'000'000;       // a process's command line is re-read while young (exec)

// Helpers by design: multiprocessing's resource tracker and forkserver, and torch_shm_manager (the
// `file_system` sharing strategy's daemon, which outlives the program until its clients are gone,
// then reclaims their segments and exits).
bool is_helper_command(const std::string& cmd, std::string* marker) {
  for (const char* m : {"multiprocessing.resource_tracker", "multiprocessing.forkserver", "multiprocessing.semaphore_tracker",
                        "torch_shm_manager"}) {
    if (cmd.find(m) != std::string::npos) {
      *marker = m;
      return true;
    }
  }
  return false;
}

class Supervisor {
 public:
  Supervisor(WorkerContext& ctx, ExecBlock& b)
      : ctx_(ctx), b_(b), cell_(ctx.cell()), progress_(b.progress_path),
        rng_(cell_.workload.seed * 1000003ULL + static_cast<std::uint64_t>(cell_.repetition)) {}

  void run() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    b_.supervisor_pid.store(::getpid());
    t0_ns_ = monotonic_ns();  // until start() takes it again as it forks the program
    b_.t0_ns = t0_ns_;
    if (struct statvfs v{}; ::statvfs("/dev/shm", &v) == 0) {
      b_.dev_shm_size_mb = static_cast<double>(v.f_blocks) * static_cast<double>(v.f_frsize) / (1 << 20);
      b_.dev_shm_used_mb_before = static_cast<double>(v.f_blocks - v.f_bfree) * static_cast<double>(v.f_frsize) / (1 << 20);
    }
    program_ = start();
    b_.program_pid.store(program_);
    program_fd_ = open_process_end(program_);
    last_change_ns_ = t0_ns_;
    ctx_.beat(0);
    memory_.emplace(b_, t0_ns_, [this](pid_t pid) { return find(pid); });
    std::int64_t next_scan = 0, ended_ns = 0;
    for (;;) {
      reap();
      const std::int64_t now = monotonic_ns();
      if (births_.take()) {  // a Python process started: the tree is read as soon as the gap allows
        next_scan = std::min(next_scan, last_scan_ns_ + kScanGapNs);
        last_change_ns_ = now;
      }
      if (now >= next_scan) {
        scan(now);
        next_scan = now + (settled(now) ? kScanSettledNs : kScanYoungNs);
      }
      memory_->poll(now, live_);
      report_progress();
      watch_output();
      inject_fault(now);
      stop_after_duration(now);
      if (b_.program_ended.load()) {
        if (ended_ns == 0) ended_ns = now;
        if (live_.empty()) {
          scan(monotonic_ns());  // one more look: a process born since the last scan (a daemon) is ours to judge
          if (live_.empty()) break;
        }
        // Helpers by design get the time they need to finish; anything else a second.
        const bool only_helpers = std::all_of(live_.begin(), live_.end(), [&](pid_t pid) { return is_helper(pid); });
        if (!only_helpers && now - ended_ns >= kSettleNs) kill_survivors(/*helpers_too=*/false);
        if (only_helpers && now - ended_ns >= kHelperGraceNs) {
          kill_survivors(/*helpers_too=*/true);
          break;
        }
        if (only_helpers) ctx_.beat(progress_.total());  // waiting for helpers is not a hang of the program
      }
      wait_a_poll(now, next_scan);
    }
    if (ended_ns != 0) b_.tree_end_wait_s = static_cast<double>(monotonic_ns() - ended_ns) * 1e-9;
    if (program_fd_ >= 0) ::close(program_fd_);
    release_stall();
    report_progress();
    ctx_.beat(progress_.total());
    stand_the_guard_down();
    if (struct rusage self{}; ::getrusage(RUSAGE_SELF, &self) == 0) {
      b_.supervisor_cpu_s = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                            static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1e-6;
    }
    b_.memory_walk_s = static_cast<double>(memory_->walk_ns() + memory_->lookup_ns()) * 1e-9;
  }

 private:
  // --- starting the program ---------------------------------------------------------------------
  pid_t start() {
    std::string why;
    const std::string path = resolve_program(cell_.command, cell_.workdir, &why);
    if (path.empty()) throw std::runtime_error(why);
    std::vector<std::string> env;
    std::string pythonpath = b_.hooks_dir;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      const std::string key = entry.substr(0, entry.find('='));
      if (key == "PYTHONPATH") {
        if (entry.size() > key.size() + 1) pythonpath += ":" + entry.substr(key.size() + 1);
        continue;
      }
      if (key.rfind("SHAREBENCH_", 0) == 0) continue;  // the harness's own, replaced below
      env.push_back(entry);
    }
    env.push_back("PYTHONPATH=" + pythonpath);
    env.push_back(fmt::format("SHAREBENCH_PROGRESS={}", b_.progress_path));
    env.push_back(fmt::format("SHAREBENCH_STACKS_DIR={}", b_.stacks_dir));
    env.push_back(fmt::format("SHAREBENCH_STACK_SIGNAL={}", python_stack_signal()));
    if (!forced_start_method(cell_).empty()) env.push_back(fmt::format("SHAREBENCH_MP_START={}", forced_start_method(cell_)));
    if (option_text(cell_, "sharing-checks") == "on") env.push_back(fmt::format("SHAREBENCH_EVENTS={}", b_.events_path));
    const pid_t parent = ::getpid();
    t0_ns_ = monotonic_ns();  // the program's start: program_s and every time since it count from here
    b_.t0_ns = t0_ns_;
    const pid_t pid = launch_program(ProgramLaunch{path, cell_.command, std::move(env), cell_.workdir});
    TreeProcess& p = add(pid, parent, 0, 0);
    copy_text(p.command, sizeof p.command, read_cmdline(pid));
    if (auto s = read_proc_stat(pid)) strangers_.before_ticks = s->start_ticks;
    start_guard(pid);
    return pid;
  }

  // Whether the tree has been still long enough for the slow pace. Never while a fault waits to be
  // injected or released, nor once the program has ended (the rest of the tree is then awaited).
  bool settled(std::int64_t now) const {
    if (b_.program_ended.load() || b_.stopped_by_duration || stalled_ || births_.fd() < 0) return false;
    if (cell_.fault.targets_tree() && !fault_done_) return false;
    return now - last_change_ns_ >= kSettledAfterNs;
  }

  // A poll at the pace of the tree, or less when the program ends or a Python process starts
  // meanwhile (its end is seen, and program_s taken, at once), when the next scan is due (one a
  // birth brought forward), or when --duration falls due.
  void wait_a_poll(std::int64_t now, std::int64_t next_scan) {
    auto poll = settled(now) ? kPollSettled : kPollYoung;
    auto until = [&](std::int64_t at) {
      poll = std::min<std::chrono::milliseconds>(poll, std::chrono::milliseconds(std::max<std::int64_t>((at - now) / 1'000'000, 1)));
    };
    until(next_scan);
    if (duration_s_ > 0 && !b_.stopped_by_duration) until(t0_ns_ + static_cast<std::int64_t>(duration_s_ * 1e9));
    const int program_fd = b_.program_ended.load() ? -1 : program_fd_;
    if (!wait_for_an_end({program_fd, births_.fd()}, poll)) std::this_thread::sleep_for(poll);
  }

  // --- the guard --------------------------------------------------------------------------------
  // If this supervisor dies (the runner SIGKILLed, and its workers with it by PR_SET_PDEATHSIG),
  // the program goes too (its own PR_SET_PDEATHSIG), but its workers would be re-parented and run
  // on, orphaned. A guard outlives it: it waits on a pipe only this process writes, and an end of
  // file with no word first means the supervisor died: it SIGKILLs the program's process group,
  // then exits. In a group of its own, no signal meant for the program or the runner reaches it;
  // the scans leave it out of the tree.
  void start_guard(pid_t program) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return;  // no guard: the program's own death signal still holds
    const pid_t guard = ::fork();
    if (guard < 0) {
      ::close(p[0]);
      ::close(p[1]);
      return;
    }
    if (guard == 0) {  // async-signal-safe calls only
      ::close(p[1]);
      ::setpgid(0, 0);
      char word = 0;
      ssize_t n;
      do n = ::read(p[0], &word, 1); while (n < 0 && errno == EINTR);
      if (n <= 0) ::kill(-program, SIGKILL);
      ::_exit(0);
    }
    ::close(p[0]);
    ::signal(SIGPIPE, SIG_IGN);  // a dead guard's pipe is an EPIPE (stand_the_guard_down)
    guard_ = guard;
    guard_fd_ = p[1];
    b_.guard_pid = guard;
  }

  // The supervisor is ending by itself: the guard leaves the program's group alone. A guard the
  // program killed (it is a process like any other to a `kill -9 -1` or a pkill) makes the write
  // fail with EPIPE, not kill this supervisor with SIGPIPE (ignored in start_guard): the run goes on,
  // and says so.
  void stand_the_guard_down() {
    if (guard_fd_ < 0) return;
    const char word = 1;
    if (::write(guard_fd_, &word, 1) < 0) {}
    ::close(guard_fd_);
    guard_fd_ = -1;
    int status = 0;
    if (guard_ > 0 && ::waitpid(guard_, &status, 0) == guard_ && WIFSIGNALED(status)) b_.guard_killed_by = WTERMSIG(status);
  }

  // This process's live descendants, the guard left out: the program's tree.
  std::vector<ProcStat> tree_now() const {
    std::vector<ProcStat> found = live_descendants(::getpid(), &strangers_);
    found.erase(std::remove_if(found.begin(), found.end(), [&](const ProcStat& s) { return s.pid == guard_; }), found.end());
    return found;
  }

  // --- the tree ---------------------------------------------------------------------------------
  TreeProcess& add(pid_t pid, pid_t ppid, std::uint64_t start_ticks, std::int64_t now) {
    const int n = b_.processes.load();
    if (n >= ExecBlock::kMaxProcesses) {
      ++b_.untracked;
      overflow_ = TreeProcess{};
      return overflow_;
    }
    TreeProcess& p = b_.tree[n];
    p.pid = pid;
    p.ppid = ppid;
    p.birth = next_birth_++;
    p.start_ticks = start_ticks;
    p.first_seen_s = p.last_seen_s = static_cast<double>(std::max<std::int64_t>(now - t0_ns_, 0)) * 1e-9;
    b_.processes.store(n + 1);
    index_[pid] = n;
    return p;
  }

  TreeProcess* find(pid_t pid) {
    auto it = index_.find(pid);
    return it == index_.end() ? nullptr : &b_.tree[it->second];
  }

  // A helper by design, whether it has a row or was seen past the table's end.
  bool is_helper(pid_t pid) {
    if (const TreeProcess* p = find(pid)) return p->helper;
    const auto u = untracked_.find(pid);
    return u != untracked_.end() && u->second.helper;
  }

  void scan(std::int64_t now) {
    std::vector<ProcStat> found = tree_now();
    std::sort(found.begin(), found.end(), [](const ProcStat& a, const ProcStat& b) {
      return a.start_ticks != b.start_ticks ? a.start_ticks < b.start_ticks : a.pid < b.pid;
    });
    std::set<pid_t> alive;
    for (const ProcStat& s : found) {
      TreeProcess* p = find(s.pid);
      if (p && p->start_ticks != 0 && p->start_ticks != s.start_ticks) {  // the pid was reused
        p->gone = true;
        index_.erase(s.pid);
        p = nullptr;
      }
      if (!p) {
        if (b_.processes.load() >= ExecBlock::kMaxProcesses) {
          // No row left for its figures, but it is still watched: alive, ended, a helper or a
          // survivor (a program of hundreds of short workers starts torch_shm_manager late).
          auto [u, first] = untracked_.try_emplace(s.pid, Untracked{s.start_ticks, false});
          std::string marker;
          if (first || u->second.start_ticks != s.start_ticks) {
            if (first) ++b_.untracked;
            u->second = Untracked{s.start_ticks, is_helper_command(read_cmdline(s.pid), &marker), false, now};
          } else if (!u->second.helper && now - u->second.first_seen_ns < kYoungNs) {
            // Seen before its exec (`bash -c "exec -a torch_shm_manager ..."`, a Popen's child): its
            // command line is read again while it is young, as a row's is.
            u->second.helper = is_helper_command(read_cmdline(s.pid), &marker);
          }
          alive.insert(s.pid);
          continue;
        }
        p = &add(s.pid, s.ppid, s.start_ticks, now);
        last_change_ns_ = now;
      }
      if (p->start_ticks == 0) p->start_ticks = s.start_ticks;  // the program itself, added at fork
      alive.insert(s.pid);
      p->ppid = s.ppid;
      p->cpu_ticks = std::max<std::int64_t>(p->cpu_ticks, s.cpu_ticks);
      p->threads_peak = std::max(p->threads_peak, s.threads);
      p->last_seen_s = static_cast<double>(now - t0_ns_) * 1e-9;
      p->gone = false;
      if (p->command[0] == '\0' || now - t0_ns_ - static_cast<std::int64_t>(p->first_seen_s * 1e9) < kYoungNs) {
        if (std::string cmd = read_cmdline(s.pid); !cmd.empty()) copy_text(p->command, sizeof p->command, cmd);
      }
      if (!p->python) {
        struct stat st{};
        p->python = ::stat(fmt::format("{}/py-{}.txt", b_.stacks_dir, s.pid).c_str(), &st) == 0;
      }
    }
    // Helpers: multiprocessing's resource tracker and forkserver (not the processes the forkserver
    // forks, which carry its command line too).
    for (const ProcStat& s : found) {
      TreeProcess* p = find(s.pid);
      if (!p) continue;
      std::string marker, parent_marker;
      const TreeProcess* parent = find(s.ppid);
      p->helper = is_helper_command(p->command, &marker) &&
                  !(parent && is_helper_command(parent->command, &parent_marker) && parent_marker == marker);
    }
    for (auto& [pid, i] : index_) {
      if (alive.count(pid)) continue;
      TreeProcess& p = b_.tree[i];
      p.gone = true;
      if (p.exit_status < 0) {  // a zombie its parent has not reaped yet still says how it ended
        if (auto z = read_proc_stat(pid); z && z->state == 'Z' && z->start_ticks == p.start_ticks) p.exit_status = z->exit_status;
      }
    }
    if (alive != live_) last_change_ns_ = now;
    live_ = alive;
    last_scan_ns_ = now;
    b_.processes_peak = std::max<std::int32_t>(b_.processes_peak, static_cast<std::int32_t>(alive.size()));
    // CPU time anywhere in the tree, for progress when the program sends no beats.
    std::int64_t cpu = 0;
    for (int i = 0; i < b_.processes.load(); ++i) cpu += b_.tree[i].cpu_ticks;
    tree_cpu_ticks_ = cpu;
  }

  void reap() {
    int status = 0;
    for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;) {
      last_change_ns_ = monotonic_ns();
      if (TreeProcess* p = find(pid)) {
        p->gone = true;
        p->exit_status = status;
      }
      live_.erase(pid);
      if (pid == guard_ && guard_fd_ >= 0) {  // gone before it was stood down: something killed it
        b_.guard_killed_by = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
        guard_ = -1;
      }
      if (pid == program_) {
        b_.exited = WIFEXITED(status);
        b_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
        b_.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
        b_.program_s = static_cast<double>(monotonic_ns() - t0_ns_) * 1e-9;
        b_.program_ended.store(true);
      }
    }
  }

  // --- progress ---------------------------------------------------------------------------------
  void report_progress() {
    const int lines = progress_.poll();
    b_.beats = progress_.lines();
    b_.beating_processes = static_cast<std::int32_t>(progress_.by_process().size());
    for (const auto& [pid, step] : progress_.by_process()) {
      if (TreeProcess* p = find(pid)) p->steps = step;
    }
    if (lines > 0) {
      const double now_s = static_cast<double>(monotonic_ns() - t0_ns_) * 1e-9;
      if (b_.first_beat_s < 0) b_.first_beat_s = now_s;
      b_.last_beat_s = now_s;
      ctx_.beat(progress_.total());
    } else if (progress_.lines() == 0 && tree_cpu_ticks_ > last_cpu_ticks_) {
      ctx_.beat(0);  // no beats yet: CPU time used anywhere in the tree is progress
    }
    last_cpu_ticks_ = tree_cpu_ticks_;
  }

  // --- the fault --------------------------------------------------------------------------------
  void inject_fault(std::int64_t now) {
    const FaultPlan& f = cell_.fault;
    if (!f.targets_tree() || fault_done_) {
      if (stalled_ && now >= stall_until_ns_) release_stall();
      return;
    }
    TreeProcess* target = nullptr;
    if (f.target == FaultTarget::kChild) {
      int n = 0;
      for (int i = 0; i < b_.processes.load() && !target; ++i) {
        TreeProcess& p = b_.tree[i];
        if (p.birth == 0 || p.helper) continue;
        if (++n == f.child) target = &p;
      }
      if (!target || target->gone) return;
      // At least 100 ms old: a command line read before its exec is corrected by then (a helper).
      if (now - t0_ns_ < static_cast<std::int64_t>((target->first_seen_s + std::max(f.at_s, 0.1)) * 1e9)) return;
    } else {
      if (now - t0_ns_ < static_cast<std::int64_t>(f.at_s * 1e9)) return;
      std::vector<TreeProcess*> candidates;
      for (int i = 0; i < b_.processes.load(); ++i) {
        TreeProcess& p = b_.tree[i];
        const bool settled = now - t0_ns_ >= static_cast<std::int64_t>((p.first_seen_s + 0.1) * 1e9);
        if (p.birth != 0 && !p.helper && !p.gone && settled) candidates.push_back(&p);
      }
      if (candidates.empty()) return;
      target = candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
    }
    fault_done_ = true;
    target->faulted = true;
    const double after = static_cast<double>(now - t0_ns_) * 1e-9 - target->first_seen_s;
    const std::string who = fmt::format("{} (pid {}: {})",
                                        f.target == FaultTarget::kChild ? fmt::format("child {}", f.child)
                                                                        : fmt::format("child {} drawn at random", target->birth),
                                        target->pid, target->command);
    const Nemesis& nemesis = nemesis_of(f);
    if (nemesis.strike(f, FaultVictim{target->pid, nullptr}) == Strike::kHeld) {
      stalled_ = target->pid;
      stall_until_ns_ = now + static_cast<std::int64_t>(f.hold_s * 1e9);
    }
    copy_text(b_.fault_report, sizeof b_.fault_report, nemesis.describe_process(f, who, after));
    b_.fault_injected = true;
  }

  // --duration: SIGINT to the program's process group, as a Ctrl-C would; after the grace, SIGTERM;
  // after that, SIGKILL. Every process then in the tree is marked as having been told to stop.
  // The program's output (this process's stderr, which the program inherited) kept to its tail,
  // and a full disk remembered for the exit-status check (output_tail.h).
  void watch_output() {
    b_.output_freed_bytes += keep_only_tail(STDERR_FILENO);
    if (b_.full_disk[0] == '\0') {
      const std::string full = full_disk_of(STDERR_FILENO);
      if (!full.empty()) std::snprintf(b_.full_disk, sizeof b_.full_disk, "%s", full.c_str());
    }
  }

  void stop_after_duration(std::int64_t now) {
    if (duration_s_ <= 0 || b_.program_ended.load()) return;
    const std::int64_t at = static_cast<std::int64_t>(duration_s_ * 1e9);
    const std::int64_t since = now - t0_ns_;
    if (since < at) return;
    int signal = 0;
    if (!b_.stopped_by_duration) {
      signal = SIGINT;
      b_.stopped_by_duration = true;
      b_.stop_sent_s = static_cast<double>(since) * 1e-9;
    } else if (b_.stop_escalated == 0 && since >= at + kStopGraceNs) {
      signal = SIGTERM;
      b_.stop_escalated = 1;
    } else if (b_.stop_escalated == 1 && since >= at + kStopGraceNs + kTermGraceNs) {
      signal = SIGKILL;
      b_.stop_escalated = 2;
    }
    if (signal == 0) {
      ctx_.beat(progress_.total());  // shutting down within the grace is not a hang
      return;
    }
    if (::kill(-program_, signal) != 0) ::kill(program_, signal);
    for (const pid_t pid : live_) {
      if (TreeProcess* p = find(pid)) p->stop_sent = true;
    }
    ctx_.beat(progress_.total());
  }

  void release_stall() {
    if (stalled_ > 0) nemesis_of(cell_.fault).release(stalled_);
    stalled_ = 0;
  }

  // --- the end ----------------------------------------------------------------------------------
  // Kills what is left of the tree, helpers by design only with `helpers_too`, and marks each.
  void kill_survivors(bool helpers_too) {
    std::vector<ProcStat> left = tree_now();
    for (const ProcStat& s : left) {
      TreeProcess* known = find(s.pid);
      const auto untracked = untracked_.find(s.pid);
      if (known && known->survivor) continue;
      if (!known && untracked != untracked_.end() && untracked->second.survivor) continue;
      if (is_helper(s.pid) && !helpers_too) continue;
      const std::string command = known ? std::string() : read_cmdline(s.pid);  // before it is gone
      ::kill(s.pid, SIGKILL);
      if (TreeProcess* p = known) {
        p->survivor = true;
        if (p->helper) ++b_.helpers_killed;
      } else if (b_.processes.load() < ExecBlock::kMaxProcesses) {
        TreeProcess& q = add(s.pid, s.ppid, s.start_ticks, monotonic_ns());
        copy_text(q.command, sizeof q.command, command);
        q.survivor = true;
      } else {  // no row left: named in a line of its own
        untracked_[s.pid].survivor = true;
        const std::string said = b_.untracked_survivors;
        copy_text(b_.untracked_survivors, sizeof b_.untracked_survivors,
                  fmt::format("{}{}pid {} ({})", said, said.empty() ? "" : "; ", s.pid, command));
      }
      ++b_.survivors;
    }
    if (!helpers_too) return;  // the loop goes on scanning and reaping while the helpers finish
    // Orphans are ours to reap (a subreaper); the rest go with their parents.
    const std::int64_t until = monotonic_ns() + 2'000'000'000;
    while (!tree_now().empty() && monotonic_ns() < until) {
      reap();
      std::this_thread::sleep_for(kPollYoung);
    }
    reap();
  }

  WorkerContext& ctx_;
  ExecBlock& b_;
  const CellConfig& cell_;
  ProgressChannel progress_;
  std::mt19937_64 rng_;
  std::int64_t t0_ns_ = 0;
  pid_t program_ = 0;
  pid_t guard_ = -1;
  int program_fd_ = -1;  // the program's pidfd: the poll wakes when it ends
  int guard_fd_ = -1;
  int next_birth_ = 0;
  std::map<pid_t, int> index_;
  std::set<pid_t> live_;
  PythonBirths births_{b_.stacks_dir};
  std::int64_t last_change_ns_ = 0;  // a process seen born or gone (at a scan)
  std::int64_t last_scan_ns_ = 0;
  // Processes seen once the table was full (ExecBlock::kMaxProcesses): no figures, but their
  // liveness and whether they are helpers still decide when the program's tree has ended.
  struct Untracked {
    std::uint64_t start_ticks = 0;
    bool helper = false;
    bool survivor = false;  // killed at the end: counted once
    std::int64_t first_seen_ns = 0;
  };
  std::map<pid_t, Untracked> untracked_;
  std::optional<MemoryWatch> memory_;  // made as the program starts
  mutable Strangers strangers_;        // processes older than the program: never of its tree
  std::int64_t tree_cpu_ticks_ = 0, last_cpu_ticks_ = 0;
  bool fault_done_ = false;
  pid_t stalled_ = 0;
  const double duration_s_ = option_double(cell_, "duration");  // --duration: 0 none
  std::int64_t stall_until_ns_ = 0;
  TreeProcess overflow_;
};
}  // namespace

std::string resolve_program(const std::vector<std::string>& command, const std::string& workdir, std::string* why) {
  if (command.empty() || command.front().empty()) {
    *why = "no command to run";
    return {};
  }
  const std::string& name = command.front();
  const std::string path = find_executable(name, workdir);
  if (!path.empty()) return path;
  if (name.find('/') != std::string::npos) {
    *why = fmt::format("cannot run '{}': not an executable file", name);
    return {};
  }
  *why = fmt::format("cannot run '{}': not found on PATH", name);
  return {};
}

void supervise_program(WorkerContext& ctx, ExecBlock& block) { Supervisor(ctx, block).run(); }

}  // namespace sharebench
