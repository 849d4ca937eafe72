// Scenario `exec`: a user's own program (`sharebench exec [options] -- COMMAND [ARGS...]`), run as
// a cell. Its one worker is the program's supervisor (program_supervisor.h); the runner lays out
// the hooks (setup), inspects and kills a hung tree (before_teardown, tree_inspection.h) and turns
// what the supervisor recorded into checks, metrics and the per-process table (check):
//   exit-status     the program exited 0 (free under a --fault: ending with an error is the right
//                   answer to a dead worker; hanging is not, and liveness says so)
//   no-survivors    no process it started outlived it (a daemonised grandchild, a worker never
//                   joined): each is named, then killed
//   shm-reclaimed   no /dev/shm entry the program's processes made or used is left (torch_*,
//                   psm_*, sem.*): each is named with the process seen using it, then removed
//   fault-injected  with --fault: the planned child was found and killed or stalled
// and the checks of the Python hooks (sharing_findings.h: fork-safety, updates-shared,
// optimizer-state-shared, grads-delivered, deaths-noticed), each with its exposure, and their notes;
// on a hang or a failure, a diagnosis.
// plus the harness's own liveness (a hang: no beat, or no CPU time anywhere in the tree, for
// --hang-timeout) and no-leaks.
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/exec_block.h"
#include "wings/exec/exec_check_ids.h"
#include "wings/exec/process_tree.h"
#include "wings/exec/program_supervisor.h"
#include "harness/util/clock.h"
#include "wings/exec/progress_channel.h"
#include "wings/exec/sharing_findings.h"
#include "wings/exec/tree_inspection.h"
#include "harness/faults/nemesis.h"
#include "harness/util/interrupt.h"
#include "harness/scenario/scenario.h"
#include "harness/watchdog/process_probe.h"
#include "wings/exec/exec_python_files.h"


namespace sharebench {

namespace {
void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error(fmt::format("cannot create {}: {}", path, std::strerror(errno)));
  }
}

void write_bytes(const std::string& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::trunc | std::ios::binary);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

// The hooks, and each one's .pyc for the build's Python where there is one (exec_python_files.h).
void write_hooks(const std::string& dir) {
  const std::string cache_tag = exec_python_cache_tag();
  if (!cache_tag.empty()) make_dir(dir + "/__pycache__");
  for (const ExecPythonFile& file : exec_python_files()) {
    write_bytes(dir + "/" + file.name, file.source, std::strlen(file.source));
    if (cache_tag.empty() || file.bytecode == nullptr) continue;
    const std::string stem = std::string(file.name).substr(0, std::strlen(file.name) - 3);  // less ".py"
    write_bytes(fmt::format("{}/__pycache__/{}.{}.pyc", dir, stem, cache_tag),
                reinterpret_cast<const char*>(file.bytecode), file.bytecode_size);
  }
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? fmt::format("signal {} (SIG{})", sig, abbrev) : fmt::format("signal {}", sig);
}

// "torch_1234_567" holds pid 1234; so does "psm_1234" or "sem.x-1234": any run of digits equal to a
// pid of the tree, bounded by non-digits.
bool name_holds_pid(const std::string& name, const std::set<int>& pids) {
  for (std::size_t i = 0; i < name.size();) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
    if (j - i <= 9 && pids.count(std::stoi(name.substr(i, j - i)))) return true;
    i = j;
  }
  return false;
}

class ExecScenario : public Scenario {
 public:
  explicit ExecScenario(const CellConfig& cell) : cell_(cell) {}

  std::optional<std::string> unavailable() const override {
    if (cell_.command.empty()) return "the exec scenario runs a program: use `sharebench exec -- COMMAND`";
    return std::nullopt;
  }

  void setup(SetupContext& ctx) override {
    auto* b = ctx.arena().create<ExecBlock>(ExecBlock::kRegionName);
    const std::string dir = ctx.private_path("exec");
    make_dir(dir);
    make_dir(dir + "/python");
    make_dir(dir + "/stacks");
    write_hooks(dir + "/python");
    ProgressChannel::create(dir + "/progress");
    ProgressChannel::create(dir + "/events");
    std::snprintf(b->events_path, sizeof b->events_path, "%s/events", dir.c_str());
    std::snprintf(b->hooks_dir, sizeof b->hooks_dir, "%s/python", dir.c_str());
    std::snprintf(b->stacks_dir, sizeof b->stacks_dir, "%s/stacks", dir.c_str());
    std::snprintf(b->progress_path, sizeof b->progress_path, "%s/progress", dir.c_str());
    b->fault_planned = cell_.fault.targets_tree();
    shm_before_ = list_dev_shm();
    warn_if_dev_shm_is_small();
  }

  // Before the program runs, once per run: a small /dev/shm (a container's default) is where shared
  // tensors die of SIGBUS. The results say it again as a note.
  static void warn_if_dev_shm_is_small() {
    static bool warned = false;
    struct statvfs v {};
    if (warned || ::statvfs("/dev/shm", &v) != 0) return;
    const double mb = static_cast<double>(v.f_blocks) * static_cast<double>(v.f_frsize) / (1 << 20);
    if (mb <= 0 || mb >= 512) return;
    warned = true;
    std::fprintf(stderr, "sharebench exec: warning: /dev/shm is only %.0f MiB; tensors shared between processes live "
                         "there, and past its size a worker dies of SIGBUS (docker run --shm-size=2g)\n", mb);
  }

  void work(WorkerContext& ctx) override {
    ctx.wait_for_start();
    supervise_program(ctx, *ctx.arena().lookup<ExecBlock>(ExecBlock::kRegionName));
    ctx.finish();
  }

  void before_teardown(SharedArena& arena) override {
    const ExecBlock& b = *arena.lookup<ExecBlock>(ExecBlock::kRegionName);
    // Not on Ctrl-C: the user wants out, not seconds of gdb per process (the /proc states and Python
    // stacks, which take no time, are still taken).
    const bool gdb = (cell_.stacks == "gdb" || (cell_.stacks == "auto" && gdb_available())) && !interrupt_requested();
    evidence_ = inspect_and_kill_tree(b, gdb);
    inspected_ = true;
  }

  void check(CheckContext& ctx) override {
    const ExecBlock& b = *ctx.arena().lookup<ExecBlock>(ExecBlock::kRegionName);
    Repetition& rep = ctx.repetition();
    record_processes(b, rep);
    const std::int64_t reading_from = monotonic_ns();
    const std::vector<nlohmann::json> events = read_sharing_events(b.events_path);
    merge_events_into_processes(events, static_cast<double>(b.t0_ns) * 1e-9, rep.processes);
    record_metrics(b, rep);
    if (inspected_) describe_hang(b, rep);
    judge_sharing_of(b, events, ctx);
    // What the end of a run costs beside the program (docs/exec.md, "What exec costs"): reading the
    // hooks' events and judging them, and waiting for the tree after the program's own end.
    rep.metrics["end_reading_s"] = static_cast<double>(monotonic_ns() - reading_from) * 1e-9;
    if (b.program_ended.load()) rep.metrics["tree_end_wait_s"] = b.tree_end_wait_s;
    for (Check& c : rep.checks) {
      if (c.name == checks::kLiveness && c.verdict == Verdict::kPass) c.message = "the program ended by itself, no hang";
    }

    // exit-status and no-survivors judge how a program ended: not run when it did not (liveness
    // says why).
    if (!b.program_ended.load()) {
    } else if (b.stopped_by_duration) {
      const double after = b.program_s - b.stop_sent_s;
      const std::string how = b.exited ? fmt::format("exited {}", b.exit_code) : fmt::format("was killed by {}", signal_name(b.signal));
      if (b.stop_escalated == 0) {
        ctx.check(checks::kExitStatus, Verdict::kPass, 0.0,
                  fmt::format("--duration {} s ran out: the program got SIGINT and {} {:.2f} s later, by itself",
                              option_double(cell_, "duration"), how, after));
      } else {
        ctx.check(checks::kExitStatus, Verdict::kFail, after,
                  fmt::format("--duration {} s ran out: the program got SIGINT and did not stop within {} s; {} then {}",
                              option_double(cell_, "duration"), kStopGraceS, b.stop_escalated == 1 ? "SIGTERM" : "SIGTERM and SIGKILL", how));
      }
    } else if (b.exited && b.exit_code == 0) {
      ctx.check(checks::kExitStatus, Verdict::kPass, 0.0, fmt::format("the program exited 0 after {:.2f} s", b.program_s));
    } else {
      const std::string how = b.exited ? fmt::format("exited {}", b.exit_code) : fmt::format("was killed by {}", signal_name(b.signal));
      const std::string said = rep.workers.empty() ? "" : rep.workers.front().stderr_tail;
      ctx.check(checks::kExitStatus, Verdict::kFail, b.exited ? b.exit_code : -b.signal,
                fmt::format("the program {} after {:.2f} s{}{}", how, b.program_s,
                            said.empty() ? "" : fmt::format("; its last output: {}", last_line(said)),
                            b.full_disk[0] == '\0' ? ""
                                                   : fmt::format("; {} while it ran: a write that failed there may be "
                                                                 "why (set TMPDIR to a roomier disk)",
                                                                 b.full_disk)));
    }

    // no-survivors
    if (b.survivors > 0) {
      std::vector<std::string> named;
      for (int i = 0; i < b.processes.load(); ++i) {
        if (b.tree[i].survivor) named.push_back(fmt::format("pid {} ({})", b.tree[i].pid, b.tree[i].command));
      }
      if (b.untracked_survivors[0] != '\0') named.emplace_back(b.untracked_survivors);
      ctx.check(checks::kNoSurvivors, Verdict::kFail, b.survivors,
                fmt::format("{} process(es) outlived the program and were killed: {}", b.survivors, fmt::join(named, "; ")));
    } else if (b.program_ended.load()) {
      ctx.check(checks::kNoSurvivors, Verdict::kPass, 0.0,
                fmt::format("all {} process(es) of the program ended with it", b.processes.load()));
    }

    check_shm(ctx, b);

    if (b.fault_planned) {
      ctx.check(checks::kFaultInjected, b.fault_injected ? Verdict::kPass : Verdict::kFail, std::nullopt,
                b.fault_injected ? std::string(b.fault_report)
                                 : fmt::format("not injected: the program never had the target of {} alive", cell_.fault.spec()));
      if (b.fault_injected) {
        for (Check& c : rep.checks) {
          if (c.name == checks::kLiveness) c.message += fmt::format(" [fault: {}]", b.fault_report);
        }
        rep.status_message += fmt::format(" [fault: {}]", b.fault_report);
      }
    }

    const bool hung = rep.status == RunStatus::kHang || rep.status == RunStatus::kDeadline;
    const bool failed = std::any_of(rep.checks.begin(), rep.checks.end(), [](const Check& c) {
      return c.verdict == Verdict::kFail && c.name == checks::kExitStatus;
    });
    if (hung || failed) rep.diagnosis = diagnose_program(rep.processes, hung);
  }

 private:
  static std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
  }

  void record_processes(const ExecBlock& b, Repetition& rep) const {
    rep.processes.clear();
    // The supervisor's own figures and series say nothing of the program: the tree's replace them.
    rep.series.erase(std::remove_if(rep.series.begin(), rep.series.end(), [](const Series& s) { return s.name == "uss-mb"; }),
                     rep.series.end());
    for (int i = 0; i < b.processes.load(); ++i) {
      const TreeProcess& t = b.tree[i];
      ProcessRecord p;
      p.pid = t.pid;
      p.ppid = t.ppid;
      p.birth = t.birth;
      p.command = t.command;
      p.role = t.birth == 0 ? "program" : t.helper ? "helper" : "child";
      p.python = t.python;
      p.first_seen_s = t.first_seen_s;
      p.last_seen_s = t.last_seen_s;
      p.cpu_s = static_cast<double>(t.cpu_ticks) / clock_ticks_per_s();
      p.steps = t.steps;
      p.rss_mb_peak = t.rss_mb_peak;
      p.pss_mb_peak = t.pss_mb_peak;
      p.uss_mb_peak = t.uss_mb_peak;
      p.shared_mb_peak = t.shared_mb_peak;
      const auto e = evidence_.find(t.pid);
      const bool caught_alive = e != evidence_.end() && !t.gone;
      if (caught_alive) {
        p.state = e->second.state;
        p.python_stack = e->second.python_stack;
        p.native_stack = e->second.native_stack;
      }
      if (t.faulted) p.end = nemesis_of(cell_.fault).kills() ? "killed by the fault" : "stalled by the fault";
      else if (t.survivor) p.end = t.helper ? fmt::format("helper, not finished {} s after the program: killed", kHelperGraceS)
                                            : "outlived the program: killed";
      else if (caught_alive) p.end = "killed by the harness (the program did not end)";
      else if (t.exit_status >= 0 && WIFEXITED(t.exit_status)) p.end = fmt::format("exited {}", WEXITSTATUS(t.exit_status));
      else if (t.exit_status >= 0 && WIFSIGNALED(t.exit_status)) p.end = fmt::format("killed by SIG{}", sigabbrev_np(WTERMSIG(t.exit_status)) ? sigabbrev_np(WTERMSIG(t.exit_status)) : "?");
      else p.end = "ended";
      if (t.stop_sent && !t.faulted && !t.survivor) p.end += " (after --duration's SIGINT)";
      p.fds_peak = t.fds_peak;
      p.fd_limit = t.fd_limit;
      p.fds_nearest_limit = t.fds_nearest_limit;
      rep.processes.push_back(std::move(p));
      Series s{"uss-mb", t.birth, {}};
      for (int k = 0; k < t.points; ++k) s.points.push_back(SeriesPoint{static_cast<double>(k), t.point_s[k], t.point_uss_mb[k]});
      if (!s.points.empty()) rep.series.push_back(std::move(s));
    }
  }

  void record_metrics(const ExecBlock& b, Repetition& rep) const {
    double uss = 0, rss = 0, pss = 0, shared = 0, cpu = 0;
    for (const ProcessRecord& p : rep.processes) {
      uss = std::max(uss, p.uss_mb_peak);
      rss = std::max(rss, p.rss_mb_peak);
      pss = std::max(pss, p.pss_mb_peak);
      shared = std::max(shared, p.shared_mb_peak);
      cpu += p.cpu_s;
    }
    rep.metrics["worker_uss_mb_peak"] = uss;  // the largest process's, as for workers elsewhere
    rep.metrics["worker_rss_mb_peak"] = rss;
    rep.metrics["worker_pss_mb_peak"] = pss;
    rep.metrics["worker_shared_mb_peak"] = shared;
    rep.metrics["tree_pss_mb_peak"] = b.pss_mb_total_peak;
    rep.metrics["processes"] = static_cast<double>(rep.processes.size()) + b.untracked;  // those its hooks alone saw too
    rep.metrics["processes_peak"] = b.processes_peak;
    rep.metrics["cpu_s"] = cpu;
    rep.metrics["progress_beats"] = static_cast<double>(b.beats);
    rep.metrics["beating_processes"] = b.beating_processes;
    if (b.program_ended.load()) rep.metrics["program_s"] = b.program_s;
    rep.metrics["supervisor_cpu_s"] = b.supervisor_cpu_s;  // what watching cost, beside the program's cpu_s
    rep.metrics["memory_walk_s"] = b.memory_walk_s;
    if (b.output_freed_bytes > 0) rep.metrics["output_dropped_mb"] = static_cast<double>(b.output_freed_bytes) / (1 << 20);
    if (b.beats == 0) {  // steps mean nothing without beats
      rep.metrics.erase("steps_per_s");
      rep.metrics.erase("steps_total");
    } else if (b.last_beat_s > b.first_beat_s) {
      // Over the span the program reported work in, not its start-up (imports, spawning workers).
      const auto steps = rep.metrics.find("steps_total");
      if (steps != rep.metrics.end()) rep.metrics["steps_per_s"] = steps->second / (b.last_beat_s - b.first_beat_s);
      rep.metrics["beating_s"] = b.last_beat_s - b.first_beat_s;
    }
  }

  // On a hang (or deadline, or interrupt): the supervisor's own stall and stacks mean nothing;
  // rank 0's record holds the program's instead, so every report shows them.
  void describe_hang(const ExecBlock& b, Repetition& rep) const {
    // Every process's Python stacks first (short, and where a Python program waits), then the
    // native ones: a report that shows only the first lines still shows each process's.
    std::string stall, python, native;
    for (const ProcessRecord& p : rep.processes) {
      if (p.state.empty() && p.python_stack.empty() && p.native_stack.empty()) continue;
      const std::string who = fmt::format("pid {} [{}{}] {}", p.pid, p.role, p.python ? ", python" : "", p.command);
      stall += fmt::format("{}{}: {}", stall.empty() ? "" : "; ", who, p.state);
      if (!p.python_stack.empty()) python += fmt::format("== {}: Python stacks (faulthandler)\n{}", who, p.python_stack);
      if (!p.native_stack.empty()) native += fmt::format("== {}: native stacks (gdb)\n{}\n", who, p.native_stack);
    }
    const std::string stacks = python + native;
    if (!rep.workers.empty()) {
      rep.workers.front().stall = stall;
      rep.workers.front().stacks = stacks;
    }
    if (rep.status == RunStatus::kHang) {
      const std::string by = b.beats > 0 ? fmt::format("no progress beat from any of its processes")
                                         : std::string("no CPU time used by any of its processes (it sent no progress beats)");
      const std::string what = fmt::format("the program hung: {} for {} s; its {} live process(es) were frozen, their "
                                           "stacks taken, then killed",
                                           by, cell_.hang_timeout_s, evidence_.size());
      rep.status_message = what;
      for (Check& c : rep.checks) {
        if (c.name == checks::kLiveness) c.message = "hang: " + what;
      }
    }
  }

  void judge_sharing_of(const ExecBlock& b, const std::vector<nlohmann::json>& events, CheckContext& ctx) const {
    Repetition& rep = ctx.repetition();
    SharingContext machine;
    machine.forced_start = forced_start_method(cell_);
    machine.harness_ended_it = inspected_ || b.stopped_by_duration || cell_.fault.targets_tree() ||
                               rep.status != RunStatus::kCompleted;
    machine.cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
    machine.dev_shm_size_mb = b.dev_shm_size_mb;
    machine.dev_shm_used_mb_before = b.dev_shm_used_mb_before;
    machine.dev_shm_used_mb_peak = b.dev_shm_used_mb_peak;
    SharingFindings f = judge_sharing(events, rep.processes, machine);
    for (Check& c : f.checks) {
      const auto raise = f.to_raise.find(c.name);
      if (!c.exposure) ctx.check(c.name, c.verdict, c.value, c.message);
      else ctx.check(c.name, c.verdict, c.value, c.message, *c.exposure, raise != f.to_raise.end() ? raise->second : "a run where it happens");
      ctx.repetition().checks.back().tests = c.tests;  // a test runner's tests its findings happened in
    }
    for (const auto& [k, v] : f.metrics) rep.metrics[k] = v;
    rep.notes.insert(rep.notes.end(), f.notes.begin(), f.notes.end());
    if (b.guard_killed_by != 0) {
      rep.notes.push_back(fmt::format("exec's guard process (pid {}) {} while the program ran, not by sharebench: a "
                                      "`kill` or `pkill` of the program's reached it. Had the runner died meanwhile, the "
                                      "program's processes would have run on, orphaned",
                                      b.guard_pid, b.guard_killed_by > 0 ? "was killed by " + signal_name(b.guard_killed_by)
                                                                         : std::string("ended")));
    }
    if (b.helpers_killed > 0) {
      rep.notes.push_back(fmt::format("{} helper(s) by design (resource tracker, forkserver, torch_shm_manager) had not "
                                      "finished {} s after the program and were killed",
                                      b.helpers_killed, kHelperGraceS));
    }
  }

  void check_shm(CheckContext& ctx, const ExecBlock& b) const {
    std::set<int> pids;
    std::map<std::string, int> holder;
    for (int i = 0; i < b.processes.load(); ++i) pids.insert(b.tree[i].pid);
    for (int i = 0; i < b.sightings; ++i) holder[b.shm[i].name] = b.shm[i].pid;
    // A process the fault SIGKILLed cannot clean up: a segment named after it that no scan ever saw
    // in use was being made at the kill (torch's file_descriptor strategy names one, then unlinks it
    // a moment later) and is the fault's doing. One it made and used (seen held) is a leak.
    std::set<int> killed;
    for (int i = 0; i < b.processes.load(); ++i) {
      if (b.tree[i].faulted && nemesis_of(cell_.fault).kills()) killed.insert(b.tree[i].pid);
    }
    std::vector<std::string> leaked, killed_left, tracker_left;
    const std::set<std::string> before(shm_before_.begin(), shm_before_.end());
    for (const std::string& name : list_dev_shm()) {
      if (before.count(name)) continue;
      const auto h = holder.find(name);
      const bool ours = h != holder.end() || name_holds_pid(name, pids);
      if (!ours) continue;  // another program's, made meanwhile: not this run's to judge or remove
      if (h == holder.end() && name_holds_pid(name, killed)) {  // never seen in use: still being made
        ::unlink(("/dev/shm/" + name).c_str());
        killed_left.push_back("/dev/shm/" + name);
        continue;
      }
      // multiprocessing's own semaphores (sem.mp-*): its resource tracker removes them when the
      // program dies plainly; when the harness killed the tree (a hang), it killed the tracker too.
      if (inspected_ && name.rfind("sem.mp-", 0) == 0) {
        ::unlink(("/dev/shm/" + name).c_str());
        tracker_left.push_back("/dev/shm/" + name);
        continue;
      }
      std::string who;
      if (h != holder.end()) {
        for (int i = 0; i < b.processes.load(); ++i) {
          if (b.tree[i].pid == h->second) who = fmt::format(", used by pid {} ({})", h->second, b.tree[i].command);
        }
      } else {
        who = ", named after a process of the program";
      }
      const bool removed = ::unlink(("/dev/shm/" + name).c_str()) == 0;
      leaked.push_back(fmt::format("/dev/shm/{}{}{}", name, who, removed ? "" : " (could not be removed)"));
    }
    if (!tracker_left.empty()) {
      ctx.repetition().notes.push_back(fmt::format(
          "removed {} semaphore(s) of multiprocessing ({}) that its resource tracker would have removed had the harness "
          "not killed the program's tree",
          tracker_left.size(), fmt::join(tracker_left, ", ")));
    }
    if (!leaked.empty()) {
      ctx.check(checks::kShmReclaimed, Verdict::kFail, static_cast<double>(leaked.size()),
                fmt::format("{} /dev/shm entr{} the program made or used outlived it (removed now): {}", leaked.size(),
                            leaked.size() == 1 ? "y" : "ies", fmt::join(leaked, "; ")));
    } else {
      ctx.check(checks::kShmReclaimed, Verdict::kPass, 0.0,
                fmt::format("nothing the program's processes made in /dev/shm is left ({} entr{} seen in use while it ran{}){}",
                            b.sightings, b.sightings == 1 ? "y" : "ies",
                            b.sightings_dropped > 0 ? fmt::format(", {} more not recorded", b.sightings_dropped) : "",
                            killed_left.empty() ? ""
                                                : fmt::format("; removed what the process the fault killed was making: {}",
                                                              fmt::join(killed_left, ", "))));
    }
  }

  CellConfig cell_;
  std::vector<std::string> shm_before_;
  std::map<pid_t, ProcessEvidence> evidence_;
  bool inspected_ = false;
};
}  // namespace

void link_exec_scenario() {}

SHAREBENCH_SCENARIO(ExecScenario, "exec")
    ->Describe("a user's own program (sharebench exec -- COMMAND): its whole process tree supervised")
    ->Kind(ScenarioKind::kProgram)
    ->RunsCommand("exec", "--mp-start")
    ->DoubleOption("duration", 0, 0, 24 * 3600,
                   "for a program that runs until stopped: after this many seconds it gets SIGINT, as a Ctrl-C would "
                   "give it, then a grace to shut down (then SIGTERM, SIGKILL); 0: none")
    ->ChoiceOption("sharing-checks", "on", {"on", "off"},
                   "on: watch forks, what children receive and shared optimizers in every Python process of the "
                   "program (docs/exec.md); off: no Python hooks but the stacks and the start method")
    ->Starts({StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver})
    ->Variant(kOwnStartMethod, "the program as given: its own start method (multiprocessing's default unless it sets one)")
    ->NoRandomFaults("runs a user's program: `sharebench exec`")
    ->Variant("fork", "--mp-start fork: fork forced in every Python process of the program")
    ->NoRandomFaults("runs a user's program: `sharebench exec`")
    ->Variant("spawn", "--mp-start spawn: spawn forced in every Python process of the program")
    ->NoRandomFaults("runs a user's program: `sharebench exec`")
    ->Variant("forkserver", "--mp-start forkserver: forkserver forced in every Python process of the program")
    ->NoRandomFaults("runs a user's program: `sharebench exec`")
    ->MustPassUnderFault({std::string(checks::kNoSurvivors), std::string(checks::kShmReclaimed)})
    ->OptOut(checks::kMemory, "each process of the program's tree is measured instead (`processes` in the results)")
    ->OptOut("stacks", "the program's processes' stacks are taken on a hang, not its supervisor's");

}  // namespace sharebench
