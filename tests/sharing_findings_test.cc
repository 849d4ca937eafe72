// Unit tests of exec's sharing rules (scenarios/exec/sharing_findings.h) on crafted events: each rule
// fails on the pattern it exists for and stays quiet on the correct twin, so a rule that cannot
// fail, or that fails on correct code, is caught here before any program runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scenarios/exec/sharing_findings.h"

namespace sharebench {
namespace {
using nlohmann::json;

const Check* find_check(const SharingFindings& f, const std::string& name) {
  for (const Check& c : f.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

json optimizer_state(const json& keys, int entries, double counter) {
  return json{{"entries", entries}, {"params", 2}, {"keys", keys}, {"counter", counter}};
}

// A parent (pid 10) hands an optimizer made at train.py:5 to two children (11, 12).
std::vector<json> handed_optimizer(const json& parent_keys, const json& child_keys, int child_entries,
                                   const json& child_end_keys) {
  std::vector<json> events;
  events.push_back({{"event", "start"}, {"pid", 10}, {"ppid", 1}, {"t", 0.0}, {"forked", false}});
  for (int child : {11, 12}) {
    events.push_back({{"event", "handoff"}, {"pid", 10}, {"t", 0.1}, {"child", child}, {"where", "train.py:9 in <module>"},
                      {"objects", json::array({{{"kind", "optimizer"}, {"class", "SharedAdam"}, {"origin", "10.1"},
                                                {"where", "train.py:5 in <module>"}, {"path", "args[1]"}, {"params", 2},
                                                {"shared", 2}, {"state", optimizer_state(parent_keys, 2, 0)}}})}});
    events.push_back({{"event", "start"}, {"pid", child}, {"ppid", 10}, {"t", 0.2}, {"forked", false}});
    events.push_back({{"event", "received"}, {"pid", child}, {"t", 0.3},
                      {"objects", json::array({{{"kind", "optimizer"}, {"class", "SharedAdam"}, {"origin", "10.1"},
                                                {"where", "train.py:5 in <module>"}, {"path", "args[1]"}, {"params", 2},
                                                {"shared", 2}, {"state", optimizer_state(child_keys, child_entries, 0)}}})}});
    events.push_back({{"event", "end"}, {"pid", child}, {"t", 1.0}, {"code", 0}, {"role", "child"}, {"intra_op", 1},
                      {"optimizers", json::array({{{"origin", "10.1"}, {"class", "SharedAdam"}, {"where", "train.py:5"},
                                                   {"steps", 100}, {"no_grad_steps", 0}, {"sampled", 9}, {"same_grad", 0},
                                                   {"params", 2}, {"shared", 2},
                                                   {"state", optimizer_state(child_end_keys, 2, 190)}}})}});
  }
  return events;
}

TEST(SharingFindings, SharedOptimizerStatePassesAndCountsLostIncrements) {
  const json shared = {{"step", {"shared"}}, {"exp_avg", {"shared"}}};
  const SharingFindings f = judge_sharing(handed_optimizer(shared, shared, 2, shared), {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kPass) << c->message;
  // 200 step() calls, the shared counter went from 0 to 190: 10 lost.
  EXPECT_EQ(f.metrics.at("optimizer_lost_increments"), 10);
  ASSERT_FALSE(f.notes.empty());
  EXPECT_NE(f.notes.front().find("10 increment(s) lost"), std::string::npos) << f.notes.front();
}

TEST(SharingFindings, PythonNumberStepFailsNamingTheOptimizerAndWhereItWasMade) {
  const json number_step = {{"step", {"number"}}, {"exp_avg", {"shared"}}};
  const SharingFindings f = judge_sharing(handed_optimizer(number_step, number_step, 2, number_step), {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("state['step'] is a Python number"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("train.py:5"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("pids 11, 12"), std::string::npos) << c->message;
}

TEST(SharingFindings, UnpickledNumberStepIsAPrivateTensorSaidAsSuch) {
  const SharingFindings f = judge_sharing(handed_optimizer({{"step", {"number"}}}, {{"step", {"private"}}}, 2, {{"step", {"private"}}}),
                                          {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("a Python number in the parent"), std::string::npos) << c->message;
}

TEST(SharingFindings, StateMadeLazilyInEachChildFails) {
  const SharingFindings f = judge_sharing(handed_optimizer(json::object(), json::object(), 0,
                                                           {{"step", {"private"}}, {"exp_avg", {"private"}}}),
                                          {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("its state was empty"), std::string::npos) << c->message;
}

TEST(SharingFindings, OwnOptimizersInEachWorkerAreNotSharedOptimizers) {
  // Hogwild's pattern: each worker makes its own SGD over the shared parameters. No optimizer was
  // handed over, so there is nothing for optimizer-state-shared to judge; gradients are judged.
  std::vector<json> events = {{{"event", "start"}, {"pid", 20}, {"ppid", 1}, {"t", 0.0}, {"forked", false}},
                              {{"event", "end"}, {"pid", 21}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                               {"optimizers", json::array({{{"origin", "21.1"}, {"class", "SGD"}, {"steps", 300},
                                                            {"sampled", 12}, {"same_grad", 0}, {"no_grad_steps", 0},
                                                            {"params", 4}, {"shared", 4}}})}}};
  const SharingFindings f = judge_sharing(events, {}, SharingContext{});
  EXPECT_EQ(find_check(f, "optimizer-state-shared"), nullptr);
  ASSERT_NE(find_check(f, "grads-delivered"), nullptr);
  EXPECT_EQ(find_check(f, "grads-delivered")->verdict, Verdict::kPass);
}

TEST(SharingFindings, TheSameGradientAtEverySampledStepFails) {
  std::vector<json> events = {{{"event", "end"}, {"pid", 31}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                               {"optimizers", json::array({{{"origin", "30.1"}, {"class", "SharedAdam"}, {"steps", 200},
                                                            {"sampled", 11}, {"same_grad", 10}, {"no_grad_steps", 0},
                                                            {"params", 4}, {"shared", 4}}})}}};
  const SharingFindings f = judge_sharing(events, {}, SharingContext{});
  ASSERT_NE(find_check(f, "grads-delivered"), nullptr);
  EXPECT_EQ(find_check(f, "grads-delivered")->verdict, Verdict::kFail);
}

TEST(SharingFindings, ForkWithTheOpenMPPoolFailsUnlessTheChildDroppedToOneThread) {
  const json fork = {{"where", "main.py:26 in <module>"}, {"pool_threads", 2}, {"library_threads", 1},
                     {"python_threads", json::array()}, {"intra_op", 2}, {"cuda", false}, {"torch", true}};
  std::vector<json> risky = {{{"event", "start"}, {"pid", 41}, {"ppid", 40}, {"t", 0.1}, {"forked", true}, {"fork", fork}},
                             {{"event", "end"}, {"pid", 41}, {"t", 0.5}, {"role", "child"}, {"code", 0}, {"intra_op", 2}}};
  const SharingFindings bad = judge_sharing(risky, {}, SharingContext{});
  ASSERT_NE(find_check(bad, "fork-safety"), nullptr);
  EXPECT_EQ(find_check(bad, "fork-safety")->verdict, Verdict::kFail);
  EXPECT_NE(find_check(bad, "fork-safety")->message.find("main.py:26"), std::string::npos);
  // DataLoader's workers call torch.set_num_threads(1) first thing.
  risky[1]["intra_op"] = 1;
  const SharingFindings fine = judge_sharing(risky, {}, SharingContext{});
  EXPECT_EQ(find_check(fine, "fork-safety")->verdict, Verdict::kPass);
}

TEST(SharingFindings, AChildTrainingAPrivateCopyFailsButADistributedOneIsANote) {
  std::vector<json> events = {
      {{"event", "received"}, {"pid", 51}, {"t", 0.1}, {"objects", json::array({{{"kind", "module"}, {"class", "Net"}}})}},
      {{"event", "end"}, {"pid", 51}, {"t", 1.0}, {"role", "child"}, {"code", 0}, {"distributed", false},
       {"changed", json::array({{{"path", "args[0]"}, {"kind", "module"}, {"class", "Net"}, {"params", 4}, {"shared", 0},
                                 {"by_optimizer", true}, {"state_dict_taken", false}}})}}};
  const SharingFindings bad = judge_sharing(events, {}, SharingContext{});
  ASSERT_NE(find_check(bad, "updates-shared"), nullptr);
  EXPECT_EQ(find_check(bad, "updates-shared")->verdict, Verdict::kFail);
  events[1]["distributed"] = true;
  const SharingFindings synced = judge_sharing(events, {}, SharingContext{});
  EXPECT_EQ(find_check(synced, "updates-shared")->verdict, Verdict::kPass);
  EXPECT_FALSE(synced.notes.empty());
}

TEST(SharingFindings, ShortLivedProcessesJoinTheTableWithHowTheyEnded) {
  std::vector<ProcessRecord> table(1);
  table[0].pid = 60;
  table[0].role = "program";
  table[0].end = "killed by the harness (the program did not end)";
  table[0].python_stack =
      "Current thread 0x1 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/connection.py\", line 378 in _recv\n"
      "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 103 in get\n"
      "  File \"/home/u/main.py\", line 117 in main\n";
  const std::vector<json> events = {
      {{"event", "start"}, {"pid", 61}, {"ppid", 60}, {"t", 100.2}, {"argv", {"main.py"}}, {"forked", true}},
      {{"event", "end"}, {"pid", 61}, {"t", 100.21}, {"code", 1}, {"error", "Traceback\nRuntimeError: boom"}}};
  merge_events_into_processes(events, 100.0, table);
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[1].pid, 61);
  EXPECT_EQ(table[1].end, "exited 1");
  EXPECT_NE(table[1].error.find("RuntimeError: boom"), std::string::npos);
  const std::string why = diagnose_program(table, /*hung=*/true);
  EXPECT_NE(why.find("waits in get (multiprocessing/queues.py:103), called from main.py:117 in main"), std::string::npos) << why;
  EXPECT_NE(why.find("pid 61 exited 1 (RuntimeError: boom)"), std::string::npos) << why;
}

}  // namespace
}  // namespace sharebench
