// The sharebench binary end to end: a real run and its results file, the exit codes, bad input
// answered with one line and exit 2, and SIGINT leaving partial results marked interrupted.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string out, err;
};

// Runs the binary with `args` through the shell; captures stdout and stderr.
Result run(const std::string& args) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("sbcli-{}", getpid());
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  const int status = std::system(fmt::format("{} {} >{} 2>{}", SHAREBENCH_BINARY, args, out, err).c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
}

std::string temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / fmt::format("sbcli-{}-{}", getpid(), name);
  fs::remove_all(p);
  return p.string();
}

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(Cli, ListsScenariosAsJson) {
  const Result r = run("list --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& s : j) names.push_back(s.at("name"));
  EXPECT_NE(std::find(names.begin(), names.end(), "locked"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "hogwild"), names.end());
}

TEST(Cli, RunWritesEveryCellWithFiguresAndVerdicts) {
  const std::string out = temp_dir("run");
  const Result r = run(fmt::format(
      "run --scenario locked,hogwild --start fork,spawn,forkserver,thread --procs 2 --steps 100 --blocks 0 --out {}", out));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("12 cells: 12 as expected"), std::string::npos) << r.out;
  const auto j = load(out + "/results.json");
  EXPECT_EQ(j.at("format"), "sharebench-results");
  EXPECT_EQ(j.at("schema_version"), 3);
  EXPECT_EQ(j.at("status"), "complete");
  EXPECT_FALSE(j.at("environment").at("blas").get<std::string>().empty());
  ASSERT_EQ(j.at("cells").size(), 12u);  // (locked: 2 clean variants + hogwild: 1) x 4 methods
  for (const auto& c : j.at("cells")) {
    EXPECT_TRUE(c.at("as_expected").get<bool>()) << c.at("id");
    const auto& rep = c.at("repetitions").at(0);
    EXPECT_GT(rep.at("metrics").at("steps_per_s").get<double>(), 0) << c.at("id");
    EXPECT_TRUE(rep.at("metrics").contains("heldout_loss")) << c.at("id");
    EXPECT_EQ(rep.at("verdict"), "pass") << c.at("id");
    EXPECT_FALSE(rep.at("series").empty());
  }
}

// A worker at one intra-op thread runs one thread. It ran two when the worker's own
// openblas_set_num_threads(1) restarted OpenBLAS's pool after fork: that pool's thread spun in
// sched_yield for about 0.1 s of every cell, beside the workers (docs/performance.md).
TEST(Cli, AWorkerAtOneThreadRunsOneThread) {
  const std::string out = temp_dir("threads");
  const Result r = run(fmt::format(
      "run --scenario inference/read-only,hogwild/lock-free --start fork,spawn,forkserver --procs 2 --steps 50 --out {}",
      out));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = load(out + "/results.json");
  ASSERT_EQ(j.at("cells").size(), 6u);
  for (const auto& c : j.at("cells")) {
    const auto& metrics = c.at("repetitions").at(0).at("metrics");
    ASSERT_TRUE(metrics.contains("worker_threads_max")) << c.at("id");
    EXPECT_EQ(metrics.at("worker_threads_max").get<double>(), 1) << c.at("id");
  }
}

// Each lock check says how often it was put to the test: at one process never (verdict
// not-exercised, and what to raise), at two the workers contend for the lock at least once in three
// repetitions; the run is still as expected. Every other check carries an exposure too (its own
// count, or the worker steps it watched).
TEST(Cli, LockChecksCarryTheirExposure) {
  const std::string out = temp_dir("exposure");
  const Result r = run(fmt::format(
      "run --scenario locked/whole-step --start fork --procs 1,2 --steps 300 --repetitions 3 --out {}", out));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = load(out + "/results.json");
  ASSERT_EQ(j.at("cells").size(), 2u);
  for (const auto& c : j.at("cells")) {
    double most = 0;
    for (const auto& rep : c.at("repetitions")) {
      for (const auto& check : rep.at("checks")) {
        ASSERT_TRUE(check.contains("exposure")) << "every check says how much it saw: " << check.dump();
        if (check.at("name") != "mutual-exclusion" && check.at("name") != "lost-updates") continue;
        const double count = check.at("exposure").at("count").get<double>();
        most = std::max(most, count);
        const std::string message = check.at("message");
        if (c.at("config").at("procs") == 1) {
          EXPECT_EQ(count, 0) << check.dump();
          EXPECT_EQ(check.at("verdict"), "not-exercised") << check.dump();
          EXPECT_NE(message.find("not exercised"), std::string::npos) << message;
        } else if (count > 0) {
          EXPECT_NE(message.find("exercised: "), std::string::npos) << message;
        }
      }
    }
    if (c.at("config").at("procs") == 2) EXPECT_GT(most, 0) << c.at("id");
  }
}

TEST(Cli, LocalLockIsCaughtInEachOfTenRunsAndExitsZero) {
  const std::string out = temp_dir("local");
  const Result r = run(fmt::format(
      "run --scenario locked/local-lock --start fork --procs 2 --steps 200 --repetitions 10 --out {}", out));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = load(out + "/results.json");
  const auto& reps = j.at("cells").at(0).at("repetitions");
  ASSERT_EQ(reps.size(), 10u);
  for (const auto& rep : reps) {
    bool caught = false;
    for (const auto& c : rep.at("checks")) caught |= c.at("name") == "mutual-exclusion" && c.at("verdict") == "fail";
    EXPECT_TRUE(caught) << rep.dump();
  }
}

TEST(Cli, DefaultRunWritesARunDirectoryWithALatestLink) {
  const std::string root = temp_dir("cwd");
  fs::create_directories(root);
  const int status = std::system(
      fmt::format("cd {} && {} run --scenario hogwild --start fork --procs 1 --steps 20 --format none", root,
                  SHAREBENCH_BINARY).c_str());
  const Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", ""};
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(fs::path(root) / "runs" / "latest"));
  EXPECT_TRUE(fs::exists(fs::path(root) / "runs" / "latest" / "results.json"));
}

// A --disable-check name that matches no check is said after the run, with the name meant; the
// check it meant ran, and a name that matched warns nothing.
TEST(Cli, ADisabledCheckNameThatMatchedNothingIsSaid) {
  const std::string out = (fs::temp_directory_path() / fmt::format("sb-disable-{}", ::getpid())).string();
  const Result r = run("run --scenario locked/whole-step --start fork --procs 1 --steps 50 --format json "
                       "--disable-check livenes,lock-order --out " + out);
  fs::remove_all(out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--disable-check livenes: no cell had a check of that name (did you mean liveness?)"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--disable-check lock-order"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("\"name\": \"liveness\""), std::string::npos);
  EXPECT_EQ(r.out.find("\"name\": \"lock-order\""), std::string::npos);
}

struct BadInput {
  const char* args;
  const char* says;
};

// Test names show the arguments, not the struct's bytes.
void PrintTo(const BadInput& b, std::ostream* os) { *os << b.args; }

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, OneClearLineAndExitTwo) {
  const Result r = run(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(GetParam().says), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, CliBadInput,
    ::testing::Values(BadInput{"run --no-such-flag", "no-such-flag"},
                      BadInput{"run --scenario nosuch", "unknown scenario 'nosuch'"},
                      BadInput{"run --scenario locked/nosuch", "has no variant 'nosuch'"},
                      BadInput{"run --start teleport", "unknown start method 'teleport'"},
                      BadInput{"run --procs 0", "--procs must be a whole number from 1 to 64, got '0'"},
                      BadInput{"run --procs 65", "--procs must be a whole number from 1 to 64"},
                      BadInput{"run --procs 1,,2", "--procs must be a comma-separated list without empty elements, got '1,,2'"},
                      BadInput{"run --seed -1", "--seed must be a whole number from 0"},
                      BadInput{"run --chaos -1", "--chaos must be a whole number from 0"},
                      BadInput{"soak --seed -1", "--seed: '-1' is not a whole number"},
                      BadInput{"soak --chaos 1x", "--chaos must be a whole number from 0"},  // the cell flag's own row
                      BadInput{"run --out ''", "--out was given an empty value"},
                      BadInput{"run --hang-timeout 30 --deadline 20", "--deadline (20 s) must be at least --hang-timeout"},
                      BadInput{"run --fault kill:4294967297@5", "the rank must be 0..63"},
                      BadInput{"run --shard 0/2", "--shard K must be a whole number from 1 to 2"},
                      BadInput{"run --lr nan", "--lr must be a number"},
                      BadInput{"run --tie-margin 80", "--tie-margin must be a number from 0 to 50, got '80'"},
                      BadInput{"compare /dev/null /dev/null --threshold nan", "--threshold must be a number"},
                      BadInput{"run --scenario ipc --procs 1", "scenario 'ipc' needs at least 2 processes"},
                      BadInput{"run --steps -5", "--steps must be"},
                      BadInput{"run --hang-timeout 0", "--hang-timeout must be"},
                      BadInput{"run --deadline 1e12", "--deadline must be"},
                      BadInput{"run --steps 10 --out /proc/sharebench-cannot", "cannot create output directory"},
                      BadInput{"run --fault explode:1@2", "unknown kind 'explode'"},
                      BadInput{"run --fault kill:1", "is not of the form"},
                      BadInput{"run --scenario locked --procs 2 --fault kill:2@5", "no process count has a rank 2"},
                      BadInput{"run --scenario locked --start thread --fault kill:0@5", "thread start method"},
                      BadInput{"run --scenario locked --steps 10 --fault kill:0@50", "beyond --steps 10"},
                      BadInput{"run --scenario locked/local-lock --fault kill:0@5", "clean variants only"},
                      BadInput{"run --known-bugs --fault kill:0@5", "clean variants only"},
                      BadInput{"run --scenario fork --start thread", "cannot run under 'thread'"},
                      BadInput{"frobnicate", "unknown command 'frobnicate'"}, BadInput{"rnu", "unknown command 'rnu' (did you mean run? "},
                      BadInput{"run --format htlm", "htlm not in {console,json,md,html,csv,junit,gbench,tap,none}: did you mean html?"},
                      BadInput{"exec --mp-start spwn -- true", "spwn not in {fork,spawn,forkserver}: did you mean spawn?"},
                      BadInput{"run --color sometimes", "sometimes not in {auto,always,never}"},
                      BadInput{"run --model mlp,,convnet-s", "--model 'mlp,,convnet-s': an empty name in the list"},
                      BadInput{"run --model mlp,resnet-9000", "--model 'resnet-9000' is neither a built-in model"},
                      // dash's printf writes the byte 0xff: not UTF-8, which a results file cannot hold
                      BadInput{"run --out \"$(printf '/tmp/o\\377')\"", "arguments must be UTF-8 text"},
                      BadInput{"run --disable-check \"$(printf 'x\\377')\"", "arguments must be UTF-8 text"},
                      // an escape sequence in an argument is shown escaped, never sent to the terminal
                      BadInput{"run --scenario \"$(printf 'x\\033[31m')\"", "unknown scenario 'x\\x1b[31m'"},
                      BadInput{"report /tmp", "is a directory; give its results.json"},
                      BadInput{"report /dev/null", "is not a readable JSON file"},
                      BadInput{"merge /dev/null --out /tmp/sbcli-never", "is not a readable JSON file"},
                      BadInput{"repro /dev/null locked/whole-step@fork:1", "is not a readable JSON file"}));

class CliInterrupt : public ::testing::TestWithParam<int> {};

// SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGQUIT each end a run alike: torn down,
// partial results marked interrupted, exit 128 + the signal, nothing left.
TEST_P(CliInterrupt, TearsDownAndWritesPartialResults) {
  const int sig = GetParam();
  const std::string out = temp_dir(fmt::format("signal-{}", sig));
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string dir_arg = out;
    execl(SHAREBENCH_BINARY, "sharebench", "run", "--scenario", "locked", "--start", "fork", "--procs", "2", "--steps",
          "200000", "--format", "none", "--out", dir_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the first cell is running, then interrupt.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(out + "/results.json") && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  kill(pid, sig);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
  const auto j = load(out + "/results.json");
  EXPECT_EQ(j.at("status"), "interrupted");
  ASSERT_GE(j.at("cells").size(), 1u);
  EXPECT_EQ(j.at("cells").at(0).at("repetitions").at(0).at("status"), "interrupted");
  // No worker of the run is left: none has the runner as parent any more, and none is alive.
  FILE* ps = popen(fmt::format("ps -eo ppid= | grep -c '^ *{}$'", pid).c_str(), "r");
  ASSERT_NE(ps, nullptr);
  std::array<char, 32> buf{};
  ASSERT_NE(fgets(buf.data(), buf.size(), ps), nullptr);
  pclose(ps);
  EXPECT_STREQ(buf.data(), "0\n");
}

INSTANTIATE_TEST_SUITE_P(Cli, CliInterrupt, ::testing::Values(SIGINT, SIGTERM, SIGHUP, SIGQUIT));

// Under umask 000 a run directory is still writable by its owner alone, and a temporary results
// file a killed writer left (results.json.tmp-<dead pid>) is removed by the next run into it.
TEST(Cli, RunDirectoryIsNotWorldWritableAndDebrisIsRemoved) {
  const std::string out = temp_dir("umask");
  const std::string args = fmt::format("run --scenario locked/whole-step --start fork --procs 1 --steps 10 --format none --out {}", out);
  Result r = run(fmt::format("--version >/dev/null; umask 000; {} {}", SHAREBENCH_BINARY, args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::perms p = fs::status(out).permissions();
  EXPECT_EQ(p & fs::perms::others_write, fs::perms::none);
  EXPECT_EQ(p & fs::perms::group_write, fs::perms::none);
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string debris = fmt::format("{}/results.json.tmp-{}", out, dead);
  std::ofstream(debris) << "{";
  r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(debris));
}

// A runner killed by SIGKILL cannot clean up: the next run reclaims what it left (its named
// segments and private directory), says so, and touches nothing of a live process.
// Gives this test process (and the runs it starts) a /dev/shm and a $TMPDIR of their own, in a
// mount namespace of their own (as root, or in a user namespace mapping this user to itself), so
// that no other sharebench run on the machine sweeps what a dead run of this test left before this
// test's own next run does. Returns "" when isolated, else why not.
std::string isolate_from_other_runs() {
  const uid_t uid = getuid();
  const gid_t gid = getgid();
  if (unshare(CLONE_NEWNS) != 0) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return fmt::format("unshare: {}", std::strerror(errno));
    auto write = [](const char* path, const std::string& text) {
      const int fd = open(path, O_WRONLY | O_CLOEXEC);
      const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      if (fd >= 0) close(fd);
      return ok;
    };
    write("/proc/self/setgroups", "deny");
    if (!write("/proc/self/uid_map", fmt::format("{} {} 1", uid, uid)) ||
        !write("/proc/self/gid_map", fmt::format("{} {} 1", gid, gid))) {
      return "cannot map this user into a user namespace";
    }
  }
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fmt::format("mount --make-rprivate /: {}", std::strerror(errno));
  if (mount("sharebench-test", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
    return fmt::format("mount tmpfs /dev/shm: {}", std::strerror(errno));
  }
  const fs::path tmp = fs::temp_directory_path() / fmt::format("sbcli-{}-own-tmp", getpid());
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  return "";
}

TEST(Cli, NextRunSweepsWhatAKilledRunnerLeft) {
  // Another sharebench run on the machine (CI's other tests, a user's runs) starts with the same
  // sweep, and could reclaim the dead run's leftovers before this test's run does.
  const std::string isolated = isolate_from_other_runs();
  if (!isolated.empty()) std::fprintf(stderr, "not isolated from other runs (%s): runs beside this test may sweep first\n", isolated.c_str());
  const std::string out = temp_dir("sigkill");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    execl(SHAREBENCH_BINARY, "sharebench", "run", "--scenario", "ipc/named-fresh,ipc/named-reuse", "--start", "fork",
          "--procs", "3", "--repetitions", "50", "--format", "none", "--out", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(out + "/results.json") && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  // Its workers end by themselves (parent-death signal); what they leave stays.
  const std::string prefix = fmt::format("sharebench-{}-", pid);
  auto left = [&] {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator("/dev/shm")) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) names.push_back(e.path().filename().string());
    }
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path())) {
      if (e.path().filename().string().rfind(prefix, 0) == 0) names.push_back(e.path().string());
    }
    return names;
  };
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // However the kill landed, the dead run has a segment and a private directory to reclaim, and a
  // live process (this test) has a segment named like a run's that must stay.
  std::ofstream(fmt::format("/dev/shm/{}planted", prefix)) << "x";
  fs::create_directories(fs::temp_directory_path() / fmt::format("{}abcdef", prefix));
  std::ofstream(fs::temp_directory_path() / fmt::format("{}abcdef", prefix) / "rank-0.stderr") << "x";
  const std::string live = fmt::format("/dev/shm/sharebench-{}-live", getpid());
  std::ofstream(live) << "x";
  ASSERT_GE(left().size(), 2u);

  const Result r = run(fmt::format("run --scenario locked/whole-step --start fork --procs 1 --steps 10 --format none --out {}",
                                   temp_dir("after-sigkill")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(left().empty()) << fmt::format("{}", fmt::join(left(), ", "));
  EXPECT_NE(r.err.find(fmt::format("left by run(s) whose runner died (pid {})", pid)), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(live));
  fs::remove(live);
}

}  // namespace
