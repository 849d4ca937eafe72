// Unit tests of `sharebench exec`'s parts that need no program: the progress channel, the process
// tree readers and the paced memory watch, a program's cell id and reproduce line, the per-process
// results round trip.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "wings/exec/memory_watch.h"
#include "wings/exec/process_tree.h"
#include "wings/exec/progress_channel.h"
#include "harness/housekeeping/private_dir.h"
#include "harness/results/results_json.h"
#include "reports/console_report.h"
#include "reports/report_writers.h"
#include "harness/plan/cell_flags.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"

namespace sharebench {
void link_exec_scenario();  // wings/exec/exec_scenario.cc: keeps the exec scenario in this binary
namespace {

std::string temp_path(const char* name) { return fmt::format("/tmp/sharebench-exec-unit-{}-{}", ::getpid(), name); }

TEST(ProgressChannel, SumsEachProcessLatestStepAcrossPartialAndForeignLines) {
  const std::string path = temp_path("progress");
  ProgressChannel::create(path);
  ProgressChannel channel(path);
  EXPECT_EQ(channel.poll(), 0);
  std::ofstream out(path, std::ios::app);
  out << "100 1\n100 2\n200 5\n300 7" << std::flush;  // the last line is not complete yet
  EXPECT_EQ(channel.poll(), 3);
  EXPECT_EQ(channel.total(), 2 + 5);
  out << "\nnot a line\n100 x\n-4 3\n100 9\n" << std::flush;
  EXPECT_EQ(channel.poll(), 5);
  EXPECT_EQ(channel.total(), 9 + 5 + 7);
  EXPECT_EQ(channel.malformed(), 3);
  EXPECT_EQ(channel.by_process().size(), 3u);
  ::unlink(path.c_str());
}

TEST(ProcessTree, SeesEveryDescendantWithItsParentAndItsSharedMemory) {
  const std::string name = fmt::format("/sharebench-exec-unit-{}", ::getpid());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(ready[0]);
    if (::fork() == 0) {  // a grandchild holding a segment mapped
      const int fd = ::shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
      if (fd < 0 || ::ftruncate(fd, 4096) != 0 || ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) _exit(1);
      if (::write(ready[1], "x", 1) != 1) _exit(1);
      ::pause();
      _exit(0);
    }
    ::pause();
    _exit(0);
  }
  ::close(ready[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  const std::vector<ProcStat> tree = live_descendants(::getpid());
  std::vector<ProcStat> ours;
  for (const ProcStat& s : tree) {
    if (s.pid == child || s.ppid == child) ours.push_back(s);
  }
  ASSERT_EQ(ours.size(), 2u);
  const auto grandchild = std::find_if(ours.begin(), ours.end(), [&](const ProcStat& s) { return s.ppid == child; });
  ASSERT_NE(grandchild, ours.end());
  const std::vector<std::string> used = shm_in_use(grandchild->pid);
  EXPECT_NE(std::find(used.begin(), used.end(), name.substr(1)), used.end());
  const auto listed = list_dev_shm();
  EXPECT_NE(std::find(listed.begin(), listed.end(), name.substr(1)), listed.end());
  EXPECT_GT(read_proc_stat(child)->start_ticks, 0u);
  EXPECT_FALSE(read_cmdline(child).empty());
  ::kill(grandchild->pid, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::shm_unlink(name.c_str());
  ::close(ready[0]);
}

TEST(ProcessTree, ScansSkipStrangersOlderThanTheProgramAndForgetThoseThatEnded) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    _exit(0);
  }
  auto has = [](const std::vector<ProcStat>& tree, pid_t pid) {
    return std::any_of(tree.begin(), tree.end(), [&](const ProcStat& s) { return s.pid == pid; });
  };
  // The child is the "program" here: found by every scan, full or not; this test's parent, older,
  // is a stranger.
  Strangers strangers;
  strangers.before_ticks = read_proc_stat(child)->start_ticks;
  for (int scan = 0; scan < Strangers::kFullEvery + 2; ++scan) {
    EXPECT_TRUE(has(live_descendants(::getpid(), &strangers), child)) << "scan " << scan;
    EXPECT_FALSE(strangers.pids.count(child));
  }
  EXPECT_TRUE(strangers.pids.count(::getppid())) << "this test's parent is older than it: a stranger";
  // Everything older than a time to come is a stranger: not read, so not found, and remembered
  // until it ends.
  Strangers all_older;
  all_older.before_ticks = ~0ULL;
  EXPECT_FALSE(has(live_descendants(::getpid(), &all_older), child));
  EXPECT_TRUE(all_older.pids.count(child));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  live_descendants(::getpid(), &all_older);
  EXPECT_FALSE(all_older.pids.count(child)) << "an ended process is forgotten, its pid free for a newcomer";
}

// A process that grows 512 MiB a while after it was first seen, then makes and maps a /dev/shm
// segment: the watch catches the growth and the segment although its rounds are paced, and its
// walks keep within their allowance.
TEST(MemoryWatch, CatchesGrowthAndNewSharedMemoryWithinItsAllowance) {
  const std::string name = fmt::format("sharebench-exec-unit-watch-{}", ::getpid());
  constexpr std::size_t kGrowth = 512u << 20;
  int told[2];
  ASSERT_EQ(::pipe2(told, O_NONBLOCK | O_CLOEXEC), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    ::usleep(300'000);
    auto* bytes = static_cast<char*>(::mmap(nullptr, kGrowth, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (bytes == MAP_FAILED) _exit(1);
    for (std::size_t i = 0; i < kGrowth; i += 4096) bytes[i] = 1;
    ::usleep(300'000);
    const int fd = ::shm_open(("/" + name).c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ::ftruncate(fd, 4096) != 0 || ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED) _exit(1);
    if (::write(told[1], "d", 1) != 1) _exit(1);  // grown and mapped
    ::pause();
    _exit(0);
  }
  ::close(told[1]);
  auto block = std::make_unique<ExecBlock>();
  TreeProcess& row = block->tree[0];
  row.pid = child;
  block->processes.store(1);
  const std::int64_t t0 = monotonic_ns();
  MemoryWatch watch(*block, t0, [&](pid_t pid) { return pid == child ? &row : nullptr; });
  std::int64_t now = t0, most_one_walk = 0, done = 0;
  // A walk comes when the resident size has grown by a tenth since the last one: a child that faults
  // its 512 MiB in slowly (a loaded machine) may be walked at 474 MiB and not again for the last 8 %.
  const double least_uss = 512 / 1.1 - 16;
  // 2.5 s, or a second past the child's saying it is done when that is later: on a loaded machine
  // (CI, 28 Nov) faulting 512 MiB in took the child more than the 2.5 s. At most 30 s. Past that
  // second, up to 10 s more for the walk its growth calls for: with both cores kept busy (28 Nov)
  // walks are slow, and the walk budget let the last one come only after the second.
  while (now - t0 < 2'500'000'000 || (done == 0 && now - t0 < 30'000'000'000) ||
         (done != 0 && now - done < 1'000'000'000) ||
         (done != 0 && row.uss_mb_peak < least_uss && now - done < 10'000'000'000)) {
    char byte;
    if (done == 0 && ::read(told[0], &byte, 1) == 1) done = monotonic_ns();
    const std::int64_t before = watch.walk_ns();
    watch.poll(now, {child});
    most_one_walk = std::max(most_one_walk, watch.walk_ns() - before);
    ::usleep(20'000);
    now = monotonic_ns();
  }
  const bool sighted = block->sightings == 1 && block->shm[0].pid == child && block->shm[0].name == name;
  ::close(told[0]);
  EXPECT_NE(done, 0) << "the child never said it had grown and mapped its segment";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::shm_unlink(("/" + name).c_str());
  EXPECT_GE(row.rss_mb_peak, 500) << "the resident size is read every 250 ms";
  EXPECT_GE(row.uss_mb_peak, least_uss) << "growth past the last walk's size calls for a walk";
  EXPECT_GE(row.samples, 2);
  EXPECT_TRUE(sighted) << "a name new in /dev/shm is looked for at once";
  const double allowance = static_cast<double>(MemoryWatch::kFirstAllowanceNs) +
                           MemoryWatch::kWalkShare * static_cast<double>(now - t0) + static_cast<double>(most_one_walk);
  EXPECT_LE(static_cast<double>(watch.walk_ns()), allowance)
      << watch.walks() << " walks took " << watch.walk_ns() / 1000 << " us; the largest " << most_one_walk / 1000 << " us";
}

TEST(PrivateDirectory, GoesWithSubdirectoriesAndNeverFollowsALinkOut) {
  const std::string outside = temp_path("outside");
  ::mkdir(outside.c_str(), 0700);
  std::ofstream(outside + "/keep") << "kept";
  std::string path;
  {
    const PrivateDirectory dir;
    path = dir.path();
    ::mkdir((path + "/exec").c_str(), 0700);
    ::mkdir((path + "/exec/stacks").c_str(), 0700);
    std::ofstream(path + "/exec/stacks/py-1.txt") << "stack";
    std::ofstream(path + "/exec/progress") << "1 2\n";
    ASSERT_EQ(::symlink(outside.c_str(), (path + "/exec/link").c_str()), 0);
  }
  struct stat st {};
  EXPECT_NE(::stat(path.c_str(), &st), 0) << path << " is still there";
  EXPECT_EQ(::stat((outside + "/keep").c_str(), &st), 0) << "a link was followed out of the directory";
  ::unlink((outside + "/keep").c_str());
  ::rmdir(outside.c_str());
}

TEST(ExecCell, IsNamedByItsProgramAndReproducedWithItsCommand) {
  EXPECT_EQ(command_name({"python3", "-u", "examples/python/hogwild.py", "--steps", "5"}), "hogwild.py");
  EXPECT_EQ(command_name({"/usr/bin/python3", "-m", "pkg.train"}), "pkg.train");
  EXPECT_EQ(command_name({"python3", "-c", "print(1)"}), "python-c");
  EXPECT_EQ(command_name({"./server"}), "server");
  EXPECT_EQ(command_name({"env", "A=1", "torchrun", "--standalone", "train.py"}), "train.py");
  EXPECT_EQ(command_name({"/bin/sh", "-c", "exit 0"}), "sh-c");
  EXPECT_EQ(command_name({"bash", "-c", "true"}), "bash-c");
  // Nothing a terminal, a Markdown table or a page would read as markup.
  EXPECT_EQ(command_name({"python3", "a|b`c <x>.py"}), "a_b_c__x_.py");
  EXPECT_EQ(command_name({"python3", "evil\x1b[2J.py"}), "evil_[2J.py");
  CellConfig c;
  c.scenario = "exec";
  c.variant = "spawn";  // exec's variants are the start methods it forces
  c.command = {"python3", "x/hogwild.py", "--name", "two words"};
  c.workdir = "/work";
  c.hang_timeout_s = 5;
  c.fault = FaultPlan::parse("kill:child@1");
  EXPECT_EQ(c.id(), "exec/hogwild.py@spawn:1~kill:child@1");
  c.variant = "own";
  EXPECT_EQ(c.id(), "exec/hogwild.py@own:1~kill:child@1");
  link_exec_scenario();  // the reproduce line comes from the scenario's RunsCommand("exec", "--mp-start")
  // exec's variants are "own" and the start methods --mp-start takes, in that order: one list.
  const ScenarioInfo* exec = ScenarioRegistry::instance().find("exec");
  ASSERT_NE(exec, nullptr);
  std::vector<std::string> variants, expected_variants{"own"};
  for (const VariantInfo& v : exec->variants()) variants.push_back(v.name);
  expected_variants.insert(expected_variants.end(), python_start_methods().begin(), python_start_methods().end());
  EXPECT_EQ(variants, expected_variants);
  EXPECT_EQ(repro_args(c, 1).at(1), "--workdir");  // the first variant is the default: no flag
  c.variant = "spawn";
  const std::vector<std::string> args = repro_args(c, 2);
  const std::vector<std::string> want{"exec", "--mp-start", "spawn", "--workdir", "/work", "--hang-timeout", "5",
                                      "--fault", "kill:child@1", "--repetitions", "2", "--", "python3", "x/hogwild.py",
                                      "--name", "two words"};
  EXPECT_EQ(args, want);
  EXPECT_EQ(CellConfig::from_json(c.to_json()), c);
}

// A cell of `exec` running `command`, as the exec command plans one.
CellResult program_cell(std::vector<std::string> command) {
  CellResult cell;
  cell.config.scenario = "exec";
  cell.config.variant = "default";
  cell.config.command = std::move(command);
  cell.kind = ScenarioKind::kProgram;
  return cell;
}

TEST(ExecResults, ProcessesRoundTripThroughJson) {
  RunResult run;
  run.run_id = "x";
  CellResult cell = program_cell({"sleep", "1"});
  Repetition rep;
  ProcessRecord p;
  p.pid = 42;
  p.birth = 1;
  p.role = "child";
  p.command = "python3 -c x";
  p.python_stack = "File \"x.py\", line 3 in get";
  p.uss_mb_peak = 12.5;
  rep.processes.push_back(p);
  cell.repetitions.push_back(rep);
  run.cells.push_back(cell);
  const RunResult back = results_from_json(results_to_json(run));
  ASSERT_EQ(back.cells.size(), 1u);
  EXPECT_EQ(back.cells[0].kind, ScenarioKind::kProgram);
  ASSERT_EQ(back.cells[0].repetitions[0].processes.size(), 1u);
  const ProcessRecord& q = back.cells[0].repetitions[0].processes[0];
  EXPECT_EQ(q.pid, 42);
  EXPECT_EQ(q.python_stack, p.python_stack);
  EXPECT_DOUBLE_EQ(q.uss_mb_peak, 12.5);
  EXPECT_EQ(back.cells[0].config.command, cell.config.command);
}

// exec's console opens with the answer: each program's result, then each check that went against it,
// one line each within 100 columns; the whole message follows below the tables.
TEST(ExecConsole, TheVerdictAndEachFindingComeFirstOneLineEach) {
  RunResult run;
  run.run_id = "x";
  run.status = "complete";
  CellResult cell = program_cell({"python3", "train.py"});
  Repetition rep;
  rep.verdict = Verdict::kFail;
  const std::string finding = "in test tests/test_x.py::test_y: pids 12, 13 (started at train.py:30 in run_workers) trained "
                              "its own copy of Sequential (args[1], 0 of 4 parameter tensors in shared memory): its updates "
                              "never reach the parent";
  rep.checks.push_back(Check{"updates-shared", Verdict::kFail, 1.0, finding, Exposure{2, "modules"}});
  rep.checks.push_back(Check{"liveness", Verdict::kPass, 0.0, "no hang", Exposure{100, "ms"}});
  cell.repetitions.push_back(rep);
  run.cells.push_back(cell);
  const std::string out = render_console(run, RenderOptions{});
  const std::string first = out.substr(0, out.find('\n'));
  EXPECT_EQ(first, cell.config.id() + ": UNEXPECTED") << out;
  const std::size_t second_end = out.find('\n', first.size() + 1);
  const std::string second = out.substr(first.size() + 1, second_end - first.size() - 1);
  EXPECT_EQ(second.rfind("  fail updates-shared: in test tests/test_x.py::test_y: pids 12, 13", 0), 0u) << out;
  EXPECT_LE(second.size(), 100u + 2) << second;  // "…" is three bytes, one column
  EXPECT_NE(second.find("…"), std::string::npos) << second;
  EXPECT_NE(out.find(finding), std::string::npos) << "the whole message follows: " << out;
}

}  // namespace
}  // namespace sharebench
