// Unit tests of exec's sharing rules (wings/exec/sharing_findings.h) on crafted events: each rule
// fails on the pattern it exists for and stays quiet on the correct twin, so a rule that cannot
// fail, or that fails on correct code, is caught here before any program runs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "wings/exec/sharing_findings.h"
#include "wings/exec/test_attribution.h"

namespace sharebench {
namespace {
using nlohmann::json;

const Check* find_check(const SharingFindings& f, const std::string& name) {
  for (const Check& c : f.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// The rules judge what torch did: every crafted program imported it (a "torch" event first).
SharingFindings judge_with_torch(std::vector<json> events, const std::vector<ProcessRecord>& processes,
                                 const SharingContext& machine) {
  events.insert(events.begin(), json{{"event", "torch"}, {"pid", 1}, {"t", 0.0}, {"intra_op", 1}});
  return sharebench::judge_sharing(events, processes, machine);
}

json optimizer_state(const json& keys, int entries, double counter) {
  return json{{"entries", entries}, {"params", 2}, {"keys", keys}, {"counter", counter}};
}

// A parent (pid 10) hands an optimizer made at train.py:5 to two children (11, 12).
std::vector<json> handed_optimizer(const json& parent_keys, const json& child_keys, int child_entries,
                                   const json& child_end_keys) {
  std::vector<json> events;
  events.push_back({{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", 10}, {"ppid", 1}, {"t", 0.0}, {"forked", false}});
  for (int child : {11, 12}) {
    events.push_back({{"event", "handoff"}, {"pid", 10}, {"t", 0.1}, {"child", child}, {"where", "train.py:9 in <module>"},
                      {"objects", json::array({{{"kind", "optimizer"}, {"class", "SharedAdam"}, {"origin", "10.1"},
                                                {"where", "train.py:5 in <module>"}, {"path", "args[1]"}, {"params", 2},
                                                {"shared", 2}, {"state", optimizer_state(parent_keys, 2, 0)}}})}});
    events.push_back({{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", child}, {"ppid", 10}, {"t", 0.2}, {"forked", false}});
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
  const SharingFindings f = judge_with_torch(handed_optimizer(shared, shared, 2, shared), {}, SharingContext{});
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
  const SharingFindings f = judge_with_torch(handed_optimizer(number_step, number_step, 2, number_step), {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("state['step'] is a Python number"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("train.py:5"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("pids 11, 12"), std::string::npos) << c->message;
}

TEST(SharingFindings, UnpickledNumberStepIsAPrivateTensorSaidAsSuch) {
  const SharingFindings f = judge_with_torch(handed_optimizer({{"step", {"number"}}}, {{"step", {"private"}}}, 2, {{"step", {"private"}}}),
                                          {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("a Python number in the parent"), std::string::npos) << c->message;
}

TEST(SharingFindings, StateMadeLazilyInEachChildFails) {
  const SharingFindings f = judge_with_torch(handed_optimizer(json::object(), json::object(), 0,
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
  std::vector<json> events = {{{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", 20}, {"ppid", 1}, {"t", 0.0}, {"forked", false}},
                              {{"event", "end"}, {"pid", 21}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                               {"optimizers", json::array({{{"origin", "21.1"}, {"class", "SGD"}, {"steps", 300},
                                                            {"sampled", 12}, {"same_grad", 0}, {"no_grad_steps", 0},
                                                            {"params", 4}, {"shared", 4}}})}}};
  const SharingFindings f = judge_with_torch(events, {}, SharingContext{});
  ASSERT_NE(find_check(f, "optimizer-state-shared"), nullptr);  // said, with nothing compared: not exercised
  EXPECT_EQ(find_check(f, "optimizer-state-shared")->exposure->count, 0);
  ASSERT_NE(find_check(f, "grads-delivered"), nullptr);
  EXPECT_EQ(find_check(f, "grads-delivered")->verdict, Verdict::kPass);
}

TEST(SharingFindings, TheSameGradientAtEverySampledStepFails) {
  std::vector<json> events = {{{"event", "end"}, {"pid", 31}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                               {"optimizers", json::array({{{"origin", "30.1"}, {"class", "SharedAdam"}, {"steps", 200},
                                                            {"sampled", 11}, {"same_grad", 10}, {"no_grad_steps", 0},
                                                            {"params", 4}, {"shared", 4}}})}}};
  const SharingFindings f = judge_with_torch(events, {}, SharingContext{});
  ASSERT_NE(find_check(f, "grads-delivered"), nullptr);
  EXPECT_EQ(find_check(f, "grads-delivered")->verdict, Verdict::kFail);
}

TEST(SharingFindings, ForkWithTheOpenMPPoolFailsUnlessTheChildDroppedToOneThread) {
  const json fork = {{"where", "main.py:26 in <module>"}, {"pool_threads", 2}, {"library_threads", 1},
                     {"python_threads", json::array()}, {"intra_op", 2}, {"cuda", false}, {"torch", true}};
  std::vector<json> risky = {{{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", 41}, {"ppid", 40}, {"t", 0.1}, {"forked", true}, {"fork", fork}},
                             {{"event", "end"}, {"pid", 41}, {"t", 0.5}, {"role", "child"}, {"code", 0}, {"intra_op", 2}}};
  const SharingFindings bad = judge_with_torch(risky, {}, SharingContext{});
  ASSERT_NE(find_check(bad, "fork-safety"), nullptr);
  EXPECT_EQ(find_check(bad, "fork-safety")->verdict, Verdict::kFail);
  EXPECT_NE(find_check(bad, "fork-safety")->message.find("main.py:26"), std::string::npos);
  // DataLoader's workers call torch.set_num_threads(1) first thing.
  risky[1]["intra_op"] = 1;
  const SharingFindings fine = judge_with_torch(risky, {}, SharingContext{});
  EXPECT_EQ(find_check(fine, "fork-safety")->verdict, Verdict::kPass);
}

TEST(SharingFindings, AChildTrainingAPrivateCopyFailsButADistributedOneIsANote) {
  std::vector<json> events = {
      {{"event", "received"}, {"pid", 51}, {"t", 0.1}, {"objects", json::array({{{"kind", "module"}, {"class", "Net"}}})}},
      {{"event", "end"}, {"pid", 51}, {"t", 1.0}, {"role", "child"}, {"code", 0}, {"distributed", false},
       {"changed", json::array({{{"path", "args[0]"}, {"kind", "module"}, {"class", "Net"}, {"params", 4}, {"shared", 0},
                                 {"by_optimizer", true}, {"state_dict_taken", false}}})}}};
  const SharingFindings bad = judge_with_torch(events, {}, SharingContext{});
  ASSERT_NE(find_check(bad, "updates-shared"), nullptr);
  EXPECT_EQ(find_check(bad, "updates-shared")->verdict, Verdict::kFail);
  events[1]["distributed"] = true;
  const SharingFindings synced = judge_with_torch(events, {}, SharingContext{});
  EXPECT_EQ(find_check(synced, "updates-shared")->verdict, Verdict::kPass);
  EXPECT_FALSE(synced.notes.empty());
}

// Hand-written SGD that rebinds: a child received the module shared and ended with private
// parameters it changed, no optimizer involved. Received private (under fork, never shared), the same
// change is a note: a child may perturb its own copy on purpose (evolution strategies).
TEST(SharingFindings, AChildThatReboundSharedParametersFailsButAPrivateCopyChangedIsANote) {
  std::vector<json> events = {
      {{"event", "received"}, {"pid", 52}, {"t", 0.1},
       {"objects", json::array({{{"kind", "module"}, {"class", "Policy"}, {"path", "args[1]"}, {"params", 4}, {"shared", 4}}})}},
      {{"event", "end"}, {"pid", 52}, {"t", 1.0}, {"role", "child"}, {"code", 0}, {"distributed", false},
       {"changed", json::array({{{"path", "args[1]"}, {"kind", "module"}, {"class", "Policy"}, {"params", 4}, {"shared", 0},
                                 {"by_optimizer", false}, {"state_dict_taken", false}}})}}};
  const SharingFindings rebound = judge_with_torch(events, {}, SharingContext{});
  const Check* c = find_check(rebound, "updates-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("received Policy (args[1]) with its 4 parameter tensors in shared memory, and by its end 0 of "
                            "them were there"),
            std::string::npos) << c->message;
  EXPECT_NE(c->message.find("p.data.sub_(lr * p.grad)"), std::string::npos) << c->message;
  EXPECT_EQ(c->exposure->count, 1);
  events[0]["objects"][0]["shared"] = 0;
  const SharingFindings private_copy = judge_with_torch(events, {}, SharingContext{});
  EXPECT_EQ(find_check(private_copy, "updates-shared")->verdict, Verdict::kPass);
  EXPECT_FALSE(private_copy.notes.empty());
  // Changed in place, still shared: exercised and clean.
  events[0]["objects"][0]["shared"] = 4;
  events[1]["changed"][0]["shared"] = 4;
  const SharingFindings in_place = judge_with_torch(events, {}, SharingContext{});
  EXPECT_EQ(find_check(in_place, "updates-shared")->verdict, Verdict::kPass);
  EXPECT_EQ(find_check(in_place, "updates-shared")->exposure->count, 1);
}

// Gradients in shared memory, stepped on by two children: their backward() calls add into the same
// buffers. One child alone shares them with nobody.
TEST(SharingFindings, TwoChildrenSteppingOnSharedGradientsFailGradsDelivered) {
  const auto child = [](int pid, int shared_grad_steps) {
    return json{{"event", "end"}, {"pid", pid}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                {"optimizers", json::array({{{"class", "SGD"}, {"where", "hog.py:26 in train"}, {"steps", 200}, {"params", 4},
                                             {"shared", 4}, {"sampled", 11}, {"same_grad", 0}, {"no_grad_steps", 0},
                                             {"zero_grad_steps", 0}, {"carried", 0}, {"carry_checks", 0}, {"backwards", 200},
                                             {"shared_grad_steps", shared_grad_steps}}})}};
  };
  const SharingFindings two = judge_with_torch({child(71, 11), child(72, 11)}, {}, SharingContext{});
  const Check* c = find_check(two, "grads-delivered");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("SGD (made at hog.py:26 in train) in pids 71, 72 stepped on gradients in shared memory"),
            std::string::npos) << c->message;
  EXPECT_EQ(find_check(judge_with_torch({child(71, 11), child(72, 0)}, {}, SharingContext{}), "grads-delivered")->verdict,
            Verdict::kPass);
  // Shared gradients that stayed zero at every sampled step while the process ran backward(): its
  // backward() wrote elsewhere, into a replica deep-copied with the .grad it found.
  auto zeroed = [&](int pid) {
    json e = child(pid, 11);
    e["optimizers"][0]["zero_grad_steps"] = 11;
    return e;
  };
  const Check* z = find_check(judge_with_torch({zeroed(71), zeroed(72)}, {}, SharingContext{}), "grads-delivered");
  EXPECT_EQ(z->verdict, Verdict::kFail);
  EXPECT_NE(z->message.find("in pids 71, 72 stepped on gradients in shared memory that were zero at every step it was "
                            "sampled at (11 of 200 steps) while the process ran backward() 200 times"),
            std::string::npos) << z->message;
  EXPECT_NE(z->message.find("copy.deepcopy(shared_model)"), std::string::npos) << z->message;
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
      {{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", 61}, {"ppid", 60}, {"t", 100.2}, {"argv", {"main.py"}}, {"forked", true}},
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

// --- the oracles: counters, lazily made state, running sums, deaths, exposure ------------------------

// A counter in param_groups: [value, kind] where the parent handed it over, where each child received
// it and ended, and where the parent ended.
std::vector<json> group_counter(double parent_end, const std::string& kind) {
  auto with_counter = [&](double value) {
    json state = optimizer_state({{"exp_avg", {"shared"}}}, 2, 0);
    state["counters"] = {{"param_groups[0]['step']", {value, kind}}, {"param_groups[0]['lr']", {0.001, "number"}}};
    return state;
  };
  std::vector<json> events = handed_optimizer({{"exp_avg", {"shared"}}}, {{"exp_avg", {"shared"}}}, 2, {{"exp_avg", {"shared"}}});
  for (json& e : events) {
    const std::string kind_of = e["event"];
    if (kind_of == "handoff" || kind_of == "received") e["objects"][0]["state"] = with_counter(0);
    if (kind_of == "end") e["optimizers"][0]["state"] = with_counter(100);
  }
  events.push_back({{"event", "end"}, {"pid", 10}, {"t", 2.0}, {"code", nullptr}, {"role", "program"},
                    {"handed", json::array({{{"origin", "10.1"}, {"state", with_counter(parent_end)}}})}});
  return events;
}

TEST(SharingFindings, ACounterThatAdvancedInTheChildrenAndNotInTheParentIsPrivateWhereverItLives) {
  const SharingFindings bad = judge_with_torch(group_counter(0, "number"), {}, SharingContext{});
  const Check* c = find_check(bad, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail) << c->message;
  EXPECT_NE(c->message.find("param_groups[0]['step'] advanced in pids 11, 12 (200 in all)"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("a Python number in each process"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("train.py:5"), std::string::npos) << c->message;
  // The twin: a shared tensor the parent sees advance (by fewer than 200: lost increments are a note).
  const SharingFindings fine = judge_with_torch(group_counter(190, "shared"), {}, SharingContext{});
  EXPECT_EQ(find_check(fine, "optimizer-state-shared")->verdict, Verdict::kPass) << find_check(fine, "optimizer-state-shared")->message;
  EXPECT_GT(find_check(fine, "optimizer-state-shared")->exposure->count, 0);
}

TEST(SharingFindings, EmptyPerParameterDictsFilledByEachChildFail) {
  std::vector<json> events = handed_optimizer(json::object(), json::object(), 2, {{"square_avg", {"private"}}});
  for (json& e : events) {
    if (e["event"] == "received") e["objects"][0]["state"]["empty_entries"] = 2;
  }
  const SharingFindings f = judge_with_torch(events, {}, SharingContext{});
  const Check* c = find_check(f, "optimizer-state-shared");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("its 2 per-parameter state dict(s) were empty when pids 11, 12 received them"), std::string::npos)
      << c->message;
  EXPECT_NE(c->message.find("state['square_avg']"), std::string::npos) << c->message;
}

json child_optimizer(int sampled, int zero, int carried, int carry_checks) {
  return {{"origin", "70.1"}, {"class", "SGD"}, {"where", "train.py:40 in train"}, {"steps", 150}, {"sampled", sampled},
          {"same_grad", 0}, {"no_grad_steps", 0}, {"zero_grad_steps", zero}, {"carried", carried},
          {"carry_checks", carry_checks}, {"backwards", 150}, {"params", 4}, {"shared", 4}};
}

TEST(SharingFindings, ARunningSumOrAllZeroGradientsFailGradsDelivered) {
  auto judge_one = [](const json& optimizer) {
    return judge_with_torch({{{"event", "end"}, {"pid", 71}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                           {"optimizers", json::array({optimizer})}}},
                         {}, SharingContext{});
  };
  const SharingFindings sum = judge_one(child_optimizer(10, 0, 9, 9));
  EXPECT_EQ(find_check(sum, "grads-delivered")->verdict, Verdict::kFail);
  EXPECT_NE(find_check(sum, "grads-delivered")->message.find("applied a running sum: at 9 of the 9 steps compared"),
            std::string::npos);
  const SharingFindings zero = judge_one(child_optimizer(10, 10, 0, 0));
  EXPECT_EQ(find_check(zero, "grads-delivered")->verdict, Verdict::kFail);
  EXPECT_NE(find_check(zero, "grads-delivered")->message.find("all-zero gradients"), std::string::npos);
  // One carried step (a GAN's other loss, say) is not a running sum.
  const SharingFindings fine = judge_one(child_optimizer(10, 0, 1, 3));
  EXPECT_EQ(find_check(fine, "grads-delivered")->verdict, Verdict::kPass);
  EXPECT_EQ(find_check(fine, "grads-delivered")->exposure->count, 13);
}

std::vector<ProcessRecord> program_and_children(const std::string& program_end, const std::string& child_end) {
  std::vector<ProcessRecord> table(3);
  table[0].pid = 80, table[0].role = "program", table[0].end = program_end;
  for (int i : {1, 2}) {
    table[i].pid = 80 + i, table[i].role = "child", table[i].end = child_end;
    if (child_end == "exited 1") table[i].error = "Traceback\nRuntimeError: mat1 and mat2 shapes cannot be multiplied";
  }
  return table;
}

TEST(SharingFindings, AChildThatDiedUnnoticedFailsDeathsNoticedUnlessTheProgramLooked) {
  const std::vector<json> events = {{{"event", "handoff"}, {"pid", 80}, {"t", 0.1}, {"child", 81}, {"where", "main.py:30 in <module>"}}};
  const SharingFindings bad = judge_with_torch(events, program_and_children("exited 0", "exited 1"), SharingContext{});
  const Check* c = find_check(bad, "deaths-noticed");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("pid 81 (started at main.py:30 in <module>) exited 1: RuntimeError: mat1"), std::string::npos)
      << c->message;
  // The program read both exit codes: noticed.
  std::vector<json> looked = events;
  looked.push_back({{"event", "observed"}, {"pid", 80}, {"t", 1.0}, {"child", 81}, {"code", 1}});
  looked.push_back({{"event", "observed"}, {"pid", 80}, {"t", 1.0}, {"child", 82}, {"code", 1}});
  EXPECT_EQ(find_check(judge_with_torch(looked, program_and_children("exited 0", "exited 1"), SharingContext{}), "deaths-noticed")->verdict,
            Verdict::kPass);
  // Pool's terminate(): the program's own signal is no death.
  std::vector<json> terminated = events;
  terminated.push_back({{"event", "terminated"}, {"pid", 80}, {"t", 1.0}, {"child", 81}, {"how", "terminate"}});
  terminated.push_back({{"event", "terminated"}, {"pid", 80}, {"t", 1.0}, {"child", 82}, {"how", "terminate"}});
  EXPECT_EQ(find_check(judge_with_torch(terminated, program_and_children("exited 0", "killed by SIGTERM"), SharingContext{}),
                       "deaths-noticed")
                ->verdict,
            Verdict::kPass);
  // A DataLoader's parent raised naming its dead worker (torch read the worker's end itself, from
  // its SIGCHLD handler): noticed. A pid that merely contains the child's digits is not its name.
  std::vector<ProcessRecord> loader = program_and_children("exited 0", "killed by SIGSEGV");
  loader[1].ppid = 80, loader[2].ppid = 80;
  loader[0].error = "RuntimeError: DataLoader worker (pid 81) is killed by signal: Segmentation fault.";
  const SharingFindings raised = judge_with_torch(events, loader, SharingContext{});
  EXPECT_EQ(find_check(raised, "deaths-noticed")->verdict, Verdict::kFail);  // pid 82 was not named
  EXPECT_NE(find_check(raised, "deaths-noticed")->message.find("pid 82"), std::string::npos);
  EXPECT_EQ(find_check(raised, "deaths-noticed")->message.find("pid 81 "), std::string::npos);
  loader[0].error = "RuntimeError: DataLoader worker (pid(s) 81, 82) exited unexpectedly";
  EXPECT_EQ(find_check(judge_with_torch(events, loader, SharingContext{}), "deaths-noticed")->verdict, Verdict::kPass);
  loader[0].error = "RuntimeError: worker 810 and 182 failed";
  EXPECT_EQ(find_check(judge_with_torch(events, loader, SharingContext{}), "deaths-noticed")->verdict, Verdict::kFail);
  // Workers of a worker (PyTorch's test_dataloader under spawn: the loader's process raised naming
  // one dead worker, 83, not the other, 84, and exited 1): its failure noticed both; the program
  // read that process's exit code, so it noticed it in turn.
  std::vector<ProcessRecord> nested = program_and_children("exited 0", "exited 1");
  nested[1].ppid = nested[2].ppid = 80;
  nested.resize(5);
  nested[3].pid = 83, nested[4].pid = 84;
  for (int i : {3, 4}) nested[i].ppid = 81, nested[i].role = "child";
  nested[3].end = "exited 1", nested[3].error = "RuntimeError";
  nested[4].end = "killed by SIGSEGV";
  nested[1].error = "RuntimeError: DataLoader worker (pid(s) 83) exited unexpectedly";
  std::vector<json> read_both = events;
  read_both.push_back({{"event", "observed"}, {"pid", 80}, {"t", 1.0}, {"child", 81}, {"code", 1}});
  read_both.push_back({{"event", "observed"}, {"pid", 80}, {"t", 1.0}, {"child", 82}, {"code", 1}});
  EXPECT_EQ(find_check(judge_with_torch(read_both, nested, SharingContext{}), "deaths-noticed")->verdict, Verdict::kPass);
  // The same loader process swallowing the failure and exiting 0: the dead worker 84 went unnoticed.
  nested[1].end = "exited 0", nested[1].error.clear();
  const Check* swallowed = find_check(judge_with_torch(read_both, nested, SharingContext{}), "deaths-noticed");
  EXPECT_EQ(swallowed->verdict, Verdict::kFail);
  EXPECT_NE(swallowed->message.find("pid 84"), std::string::npos) << swallowed->message;
  // The program failed itself: exit-status says so, this check does not repeat it.
  EXPECT_EQ(find_check(judge_with_torch(events, program_and_children("exited 1", "exited 1"), SharingContext{}), "deaths-noticed")->verdict,
            Verdict::kPass);
  // The harness ended the run (a hang, --duration): its kills are not deaths.
  SharingContext stopped;
  stopped.harness_ended_it = true;
  EXPECT_EQ(find_check(judge_with_torch(events, program_and_children("exited 0", "killed by SIGKILL"), stopped), "deaths-noticed")->verdict,
            Verdict::kPass);
}

TEST(SharingFindings, EveryCheckIsSaidWithItsExposureAndNoneWithoutTorch) {
  const SharingFindings nothing = judge_with_torch({}, {}, SharingContext{});
  for (const char* name : {"fork-safety", "updates-shared", "optimizer-state-shared", "grads-delivered"}) {
    const Check* c = find_check(nothing, name);
    ASSERT_NE(c, nullptr) << name;
    ASSERT_TRUE(c->exposure.has_value()) << name;
    EXPECT_EQ(c->exposure->count, 0) << name;
    EXPECT_FALSE(c->exposure->what.empty()) << name;
    EXPECT_FALSE(nothing.to_raise.at(name).empty()) << name;
  }
  // A program that never imported torch gets no sharing check at all.
  const SharingFindings no_torch = sharebench::judge_sharing({{{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", 1}, {"t", 0.0}}}, {}, SharingContext{});
  EXPECT_EQ(find_check(no_torch, "grads-delivered"), nullptr);
  ASSERT_NE(find_check(no_torch, "deaths-noticed"), nullptr);
}

TEST(SharingFindings, AHangInJoinNamesTheUsersLineNotTheHarnessHook) {
  std::vector<ProcessRecord> table(1);
  table[0].pid = 90;
  table[0].role = "program";
  table[0].python_stack =
      "Current thread 0x1 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/popen_fork.py\", line 27 in poll\n"
      "  File \"/tmp/sb/exec-hooks/sharebench_watch.py\", line 515 in patched\n"
      "  File \"/usr/lib/python3.11/multiprocessing/popen_fork.py\", line 43 in wait\n"
      "  File \"/usr/lib/python3.11/multiprocessing/process.py\", line 149 in join\n"
      "  File \"/home/u/train.py\", line 88 in main\n";
  const std::string why = diagnose_program(table, /*hung=*/true);
  EXPECT_NE(why.find("waits in join (multiprocessing/process.py:149), called from train.py:88 in main"), std::string::npos) << why;
  EXPECT_EQ(why.find("sharebench_watch"), std::string::npos) << why;
  // A queue's get, wrapped by the send-and-receive hooks: the program's line, not the hook's.
  table[0].python_stack =
      "Current thread 0x1 (most recent call first):\n"
      "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 103 in get\n"
      "  File \"/tmp/sb/exec-hooks/sharebench_sends.py\", line 167 in wrapped\n"
      "  File \"/home/u/early_crash.py\", line 30 in main\n";
  const std::string queue = diagnose_program(table, /*hung=*/true);
  EXPECT_NE(queue.find("waits in get (multiprocessing/queues.py:103), called from early_crash.py:30 in main"), std::string::npos) << queue;
}

TEST(SharingFindings, ASigbusDeathIsDiagnosedAsDevShmRunningOut) {
  std::vector<ProcessRecord> table(2);
  table[0].pid = 95, table[0].role = "program", table[0].end = "exited 1";
  table[1].pid = 96, table[1].role = "child", table[1].end = "killed by SIGBUS";
  EXPECT_NE(diagnose_program(table, false).find("/dev/shm running out"), std::string::npos);
}

TEST(SharingFindings, ASmallDevShmIsSaidBeforeAnythingFails) {
  SharingContext docker;
  docker.dev_shm_size_mb = 64;
  const SharingFindings small = judge_with_torch({}, {}, docker);
  ASSERT_FALSE(small.notes.empty());
  EXPECT_NE(small.notes.front().find("/dev/shm is only 64 MiB"), std::string::npos) << small.notes.front();
  SharingContext roomy;
  roomy.dev_shm_size_mb = 12000;
  for (const std::string& note : judge_with_torch({}, {}, roomy).notes) EXPECT_EQ(note.find("/dev/shm"), std::string::npos) << note;
}

// PyTorch's test_dataloader: a long-lived process beside a hundred short workers that ran one after
// another is not a hundred workers at once; two that did meet are counted together.
TEST(SharingFindings, ThreadsAreCountedAmongProcessesAliveAtTheSameMoment) {
  const auto note_of = [](const SharingFindings& f) {
    for (const std::string& n : f.notes) {
      if (n.find("intra-op threads") != std::string::npos) return n;
    }
    return std::string();
  };
  SharingContext two_cores;
  two_cores.cores = 2;
  std::vector<json> one_after_another = {{{"event", "torch"}, {"pid", 500}, {"t", 0.0}, {"intra_op", 1}},
                                         {{"event", "end"}, {"pid", 500}, {"t", 100.0}, {"intra_op", 1}}};
  for (int i = 0; i < 100; ++i) {
    one_after_another.push_back({{"event", "torch"}, {"pid", 600 + i}, {"t", i + 0.1}, {"intra_op", 1}});
    one_after_another.push_back({{"event", "end"}, {"pid", 600 + i}, {"t", i + 0.5}, {"intra_op", 1}});
  }
  EXPECT_EQ(note_of(sharebench::judge_sharing(one_after_another, {}, two_cores)), "");
  std::vector<json> together = one_after_another;
  together.push_back({{"event", "torch"}, {"pid", 700}, {"t", 3.2}, {"intra_op", 4}});
  together.push_back({{"event", "end"}, {"pid", 700}, {"t", 3.3}, {"intra_op", 4}});
  EXPECT_NE(note_of(sharebench::judge_sharing(together, {}, two_cores)).find("up to 6 intra-op threads"), std::string::npos)
      << note_of(sharebench::judge_sharing(together, {}, two_cores));
}

// Each process against its own limit as it stood when it came nearest it.
TEST(SharingFindings, DescriptorsAreJudgedAgainstEachProcesssOwnLimit) {
  std::vector<ProcessRecord> table(2);
  table[0].pid = 50, table[0].role = "program", table[0].fds_peak = 230, table[0].fd_limit = 1024,
  table[0].fds_nearest_limit = 230;  // a process that held 230 under 1024, then lowered its limit to 100
  table[1].pid = 51, table[1].role = "child", table[1].fds_peak = 95, table[1].fd_limit = 100,
  table[1].fds_nearest_limit = 95;
  const SharingFindings f = judge_with_torch({}, table, SharingContext{});
  std::string note;
  for (const std::string& n : f.notes) {
    if (n.find("RLIMIT_NOFILE") != std::string::npos) note = n;
  }
  EXPECT_NE(note.find("pid 51 held 95 of its 100"), std::string::npos) << note;
  EXPECT_EQ(note.find("pid 50"), std::string::npos) << note;
}

TEST(SharingFindings, EventsOfAnotherProtocolAreNotJudged) {
  const std::vector<json> old_hooks = {{{"event", "start"}, {"pid", 1}, {"t", 0.0}, {"ppid", 0}, {"forked", false}},
                                       {{"event", "end"}, {"pid", 2}, {"t", 1.0}, {"role", "child"}, {"code", 0},
                                        {"optimizers", json::array({child_optimizer(10, 0, 9, 9)})}}};
  const SharingFindings f = judge_with_torch(old_hooks, {}, SharingContext{});
  ASSERT_NE(find_check(f, "grads-delivered"), nullptr);
  EXPECT_EQ(find_check(f, "grads-delivered")->verdict, Verdict::kUnknown);
  EXPECT_NE(find_check(f, "grads-delivered")->message.find("protocol 0"), std::string::npos);
  std::vector<json> current = old_hooks;
  current[0]["protocol"] = kExecEventsProtocol;
  EXPECT_EQ(find_check(judge_with_torch(current, {}, SharingContext{}), "grads-delivered")->verdict, Verdict::kFail);
}


// --- races on shared state (wings/exec/checks/) ----------------------------------------------------
namespace races {

json start(int pid, double t) { return {{"event", "start"}, {"protocol", kExecEventsProtocol}, {"pid", pid}, {"ppid", 1}, {"t", t}, {"forked", true}}; }

json state(int pid, double t, json places, json holds = json::array()) {
  return {{"event", "shared-state"}, {"pid", pid}, {"t", t}, {"places", std::move(places)}, {"holds", std::move(holds)}};
}

// A counter at key K incremented `n` times by pid, from t0 to t1, under `guards`, ending at `value`.
json counter(double t0, double t1, int n, json guards, double value, double first_value = 0) {
  return {{"key", "K"}, {"what", "Value('i')"}, {"made", nullptr}, {"rmw", n}, {"unguarded", guards.empty() ? n : 0},
          {"guards", std::move(guards)}, {"delta", n}, {"first", {t0, first_value}}, {"last_t", t1}, {"plain_after", 0},
          {"sites", {"train.py:30 in train"}}, {"value", value}};
}

json end(int pid, double t) { return {{"event", "end"}, {"pid", pid}, {"t", t}, {"code", 0}, {"error", nullptr}}; }

TEST(ExecRaces, TwoWorkersCountingWithoutACommonLockLoseUpdatesAndSaySoWithBothLines) {
  const std::vector<json> events = {start(11, 0), start(12, 0.1), state(11, 2, json::array({counter(1, 1.9, 100, json::array(), 170)})),
                                    state(12, 2.1, json::array({counter(1.1, 2.0, 100, json::array(), 180)})), end(11, 2.05), end(12, 2.2)};
  const SharingFindings f = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(f, "lost-updates");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("pid 11 at train.py:30 in train; pid 12 at train.py:30 in train"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("200 increment(s) made, 180 landed: 20 lost"), std::string::npos) << c->message;
  EXPECT_EQ(c->exposure->count, 200);
}

TEST(ExecRaces, OneSharedLockHeldByEveryWriterIsClean) {
  const json lock = json::array({"0:5:77+0"});
  const std::vector<json> events = {start(11, 0), start(12, 0.1), state(11, 2, json::array({counter(1, 1.9, 100, lock, 200)})),
                                    state(12, 2.1, json::array({counter(1.1, 2.0, 100, lock, 200)}))};
  const SharingFindings found_c = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(found_c, "lost-updates");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kPass) << c->message;
  EXPECT_EQ(c->exposure->count, 200);
}

TEST(ExecRaces, AParentCountingAfterItJoinedItsWorkerRacesWithNoOne) {
  std::vector<json> events = {start(10, 0), start(11, 0.1), state(11, 2, json::array({counter(1, 1.9, 100, json::array(), 100)})),
                              end(11, 2.0)};
  events.push_back({{"event", "reaped"}, {"pid", 10}, {"t", 2.1}, {"child", 11}, {"code", 0}});
  events.push_back(state(10, 3, json::array({counter(2.5, 2.6, 5, json::array(), 105, 100)})));
  const SharingFindings found_c = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(found_c, "lost-updates");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kPass) << c->message;
  // The same parent counting before it learnt of the worker's end, while it ran: a race.
  events[4]["t"] = 2.7;
  const SharingFindings found_racing = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* racing = find_check(found_racing, "lost-updates");
  EXPECT_EQ(racing->verdict, Verdict::kFail) << racing->message;
}

TEST(ExecRaces, TwoSpawnedWorkersWhoseLoopsDidNotOverlapThisRunStillRace) {
  // The second worker started counting after the first had ended: luck, not an order the program made.
  const std::vector<json> events = {start(11, 0), start(12, 0.1), state(11, 1, json::array({counter(0.5, 0.9, 100, json::array(), 100)})),
                                    end(11, 1.0), state(12, 2, json::array({counter(1.5, 1.9, 100, json::array(), 200, 100)})),
                                    end(12, 2.1)};
  const SharingFindings found_c = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(found_c, "lost-updates");
  EXPECT_EQ(c->verdict, Verdict::kFail) << c->message;
  EXPECT_NE(c->message.find("all landed this run"), std::string::npos) << c->message;
}

json hold(const std::string& lock, bool shared) {
  return {{"lock", lock}, {"site", "train.py:5 in <module>"}, {"kind", shared ? "multiprocessing.Lock" : "threading.Lock"},
          {"shared", shared}, {"place", "P"}, {"what", "optimizer.step()"}, {"count", 3}, {"first_t", 1.0},
          {"where", "train.py:14 in train_step"}};
}

TEST(ExecRaces, AThreadingLockHeldAroundSharedStepsInTwoProcessesExcludesNoOne) {
  const std::vector<json> events = {start(11, 0), start(12, 0), state(11, 1, json::array(), json::array({hold("private:11:a", false)})),
                                    state(12, 1, json::array(), json::array({hold("private:12:a", false)}))};
  const SharingFindings found_c = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(found_c, "mutual-exclusion");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("threading.Lock made at train.py:5 in <module>"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("pid 11 at train.py:14 in train_step; pid 12 at train.py:14 in train_step"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("never shared between processes"), std::string::npos) << c->message;
  // One semaphore (the same page in both processes): clean, and exercised.
  const std::vector<json> shared = {start(11, 0), start(12, 0), state(11, 1, json::array(), json::array({hold("0:5:9+0", true)})),
                                    state(12, 1, json::array(), json::array({hold("0:5:9+0", true)}))};
  const SharingFindings found_ok = sharebench::judge_sharing(shared, {}, SharingContext{});
  const Check* ok = find_check(found_ok, "mutual-exclusion");
  EXPECT_EQ(ok->verdict, Verdict::kPass) << ok->message;
  EXPECT_EQ(ok->exposure->count, 6);
}

TEST(ExecRaces, AnArrayThatChangedDuringAnElementByElementReadIsATornRead) {
  json read = {{"key", "A[]"}, {"what", "Array('c_int', 10)"}, {"made", "prog.py:33 in <module>"}, {"passes", 5}, {"torn", 2},
               {"reader_sites", {"prog.py:19 in <genexpr>"}}};
  json write = {{"key", "A[]"}, {"what", "Array('c_int', 10)"}, {"made", nullptr}, {"writes", 900}, {"writer_sites", {"prog.py:45 in <module>"}}};
  const std::vector<json> events = {start(10, 0), start(11, 0), state(10, 1, json::array({write})), state(11, 1, json::array({read}))};
  const SharingFindings found_c = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(found_c, "consistent-snapshots");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("made at prog.py:33 in <module> changed while it was being read element by element, in 2 of 5 reads"), std::string::npos) << c->message;
  EXPECT_NE(c->message.find("written by pid 10 at prog.py:45 in <module>"), std::string::npos) << c->message;
  read["torn"] = 0;
  const std::vector<json> clean = {start(10, 0), start(11, 0), state(10, 1, json::array({write})), state(11, 1, json::array({read}))};
  const SharingFindings found_ok = sharebench::judge_sharing(clean, {}, SharingContext{});
  const Check* ok = find_check(found_ok, "consistent-snapshots");
  EXPECT_EQ(ok->verdict, Verdict::kPass) << ok->message;
  EXPECT_EQ(ok->exposure->count, 5);
}

TEST(ExecRaces, AForwardThatOverlappedAnotherProcesssPublishIntoASharedModelIsATornRead) {
  auto version = [](double reads, double torn, double publishes, double first_t, double last_t) {
    return json{{"key", "M"}, {"what", "the shared Net (share_memory() at serve.py:70 in <module>)"}, {"reads", reads},
                {"torn", torn}, {"read_sites", torn > 0 ? json{"serve.py:50 in serve"} : json::array()},
                {"publishes", publishes}, {"publish_sites", publishes > 0 ? json{"serve.py:63 in reload"} : json::array()},
                {"first_publish_t", publishes > 0 ? json(first_t) : json(nullptr)},
                {"last_publish_t", publishes > 0 ? json(last_t) : json(nullptr)}};
  };
  auto judged = [&](json server, json worker, double worker_end) {
    json s = state(10, 9, json::array()), w = state(11, 9, json::array());
    s["versions"] = json::array({server});
    w["versions"] = json::array({worker});
    return sharebench::judge_sharing({start(10, 0), start(11, 1), s, w, end(11, worker_end)}, {}, SharingContext{});
  };
  // The server reloaded 40 times while the worker ran; 7 of its 1 500 forward()s overlapped a reload.
  const SharingFindings torn = judged(version(0, 0, 40, 2, 8), version(1500, 7, 0, 0, 0), 9);
  const Check* c = find_check(torn, "consistent-snapshots");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("the shared Net (share_memory() at serve.py:70 in <module>) was read while a new version was "
                            "being published into it, in 7 of 1500 reads: read by pid 11 at serve.py:50 in serve; "
                            "published by pid 10 at serve.py:63 in reload."),
            std::string::npos)
      << c->message;
  EXPECT_NE(c->message.find("double buffering"), std::string::npos) << c->message;
  // Under a lock both hold, no read overlapped: clean, with the worker's reads compared.
  const SharingFindings locked = judged(version(0, 0, 40, 2, 8), version(1500, 0, 0, 0, 0), 9);
  const Check* ok = find_check(locked, "consistent-snapshots");
  EXPECT_EQ(ok->verdict, Verdict::kPass) << ok->message;
  EXPECT_EQ(ok->exposure->count, 1500);
  // Reloads only after the worker had ended (a parent restoring the best checkpoint) could overlap
  // none of its reads; Hogwild's workers read a model nobody publishes into: nothing compared (the
  // runner makes it `not exercised`).
  const SharingFindings after = judged(version(0, 0, 3, 12, 13), version(1500, 0, 0, 0, 0), 9);
  EXPECT_EQ(find_check(after, "consistent-snapshots")->exposure->count, 0);
  const SharingFindings hogwild = judged(version(800, 0, 0, 0, 0), version(1500, 0, 0, 0, 0), 9);
  EXPECT_EQ(find_check(hogwild, "consistent-snapshots")->exposure->count, 0);
}

TEST(ExecRaces, ABufferRefilledAfterEachSendIsReceivedChangedAndAPoolIsNot) {
  auto sends = [](std::vector<double> fps) {
    json list = json::array();
    for (std::size_t i = 0; i < fps.size(); ++i) list.push_back({1.0 + i, fps[i]});
    return json{{"key", "B"}, {"count", fps.size()}, {"fps", list}, {"complete", true}, {"sites", {"prod.py:29 in produce"}}, {"shape", {64, 32}}};
  };
  auto receives = [](std::vector<double> fps) {
    json list = json::array();
    for (std::size_t i = 0; i < fps.size(); ++i) list.push_back({1.5 + i, fps[i]});
    return json{{"key", "B"}, {"count", fps.size()}, {"fps", list}, {"sites", {"cons.py:38 in consume"}}};
  };
  auto judged = [&](std::vector<double> sent, std::vector<double> got) {
    json producer = state(10, 9, json::array()), consumer = state(11, 9, json::array());
    producer["sends"] = json::array({sends(sent)});
    consumer["receives"] = json::array({receives(got)});
    return sharebench::judge_sharing({start(10, 0), start(11, 0), producer, consumer}, {}, SharingContext{});
  };
  // The consumer read batch 3 where batch 1 and 2 were sent: the producer had refilled the buffer.
  const SharingFindings refilled = judged({0, 1, 2, 3}, {0, 3, 3, 3});
  const Check* c = find_check(refilled, "buffer-lifetime");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("sent 4 times (pid 10 at prod.py:29 in produce) was changed before it was received: 2 of 4 "
                            "receives (pid 11 at cons.py:38 in consume)"), std::string::npos) << c->message;
  // The same contents sent again (a batch seen twice) are not a change; every receive as it was sent.
  const SharingFindings pooled = judged({0, 1, 1, 3}, {0, 1, 1, 3});
  EXPECT_EQ(find_check(pooled, "buffer-lifetime")->verdict, Verdict::kPass);
  EXPECT_EQ(find_check(pooled, "buffer-lifetime")->exposure->count, 4);
  // Sent once: a model handed over and trained in place is never judged.
  const SharingFindings once = judged({0}, {5});
  EXPECT_EQ(find_check(once, "buffer-lifetime")->exposure->count, 0);
}

TEST(ExecRaces, AProgramThatSharedNothingLeavesEveryRaceCheckUnexercised) {
  const SharingFindings f = sharebench::judge_sharing({start(10, 0), end(10, 1)}, {}, SharingContext{});
  for (const char* name : {"lost-updates", "consistent-snapshots", "mutual-exclusion", "buffer-lifetime", "random-streams"}) {
    const Check* c = find_check(f, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->exposure->count, 0) << name;
    EXPECT_FALSE(f.to_raise.at(name).empty()) << name;
  }
}

// A process's end with where its torch random stream began (sharebench_random_streams.py).
json end_with_stream(int pid, const std::string& how, const std::string& state, bool drew, bool trainer,
                     std::uint64_t seed = 1) {
  json e = end(pid, 3);
  e["random_streams"] = {{"how", how}, {"seed", seed}, {"state", state}, {"drew", drew}, {"received_model", trainer},
                         {"where", how == "seeded" ? json("a3c.py:40 in train") : json(nullptr)}};
  return e;
}

TEST(ExecRaces, TrainersThatSeedAlikeDrawTheSameNumbersAndTheMessageSaysWhere) {
  const std::vector<json> events = {start(11, 0), start(12, 0.1), end_with_stream(11, "seeded", "ab", true, true),
                                    end_with_stream(12, "seeded", "ab", true, true)};
  const SharingFindings f = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(f, "random-streams");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("(pids 11, 12): each called torch.manual_seed(1) (a3c.py:40 in train)"), std::string::npos)
      << c->message;
  EXPECT_EQ(c->exposure->count, 1);
}

TEST(ExecRaces, ForkedTrainersThatNeverReseedAreCaughtWithTheirUnsignedSeed) {
  const std::uint64_t seed = 15'000'000'000'000'000'000ULL;  // above int64's range, as torch's OS seeds often are
  const std::vector<json> events = {end_with_stream(11, "inherited", "cd", true, true, seed),
                                    end_with_stream(12, "inherited", "cd", true, true, seed)};
  const SharingFindings f = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(f, "random-streams");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("forked with its parent's generator (seed " + std::to_string(seed) + ") and never reseeded"),
            std::string::npos)
      << c->message;
}

TEST(ExecRaces, DistinctStreamsProcessesThatDrewNothingAndNonTrainersAreClean) {
  // Two trainers apart; a third that never drew and a fourth that trains nothing it was handed share
  // the first's origin and are not judged.
  const std::vector<json> events = {end_with_stream(11, "seeded", "ab", true, true), end_with_stream(12, "seeded", "cd", true, true),
                                    end_with_stream(13, "seeded", "ab", false, true),
                                    end_with_stream(14, "seeded", "ab", true, false)};
  const SharingFindings f = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(f, "random-streams");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kPass) << c->message;
  EXPECT_EQ(c->exposure->count, 1);  // one pair: the two trainers that drew
  // One trainer alone: nothing to compare.
  const SharingFindings one = sharebench::judge_sharing({end_with_stream(11, "unseeded", "ab", true, true)}, {}, SharingContext{});
  const Check* alone = find_check(one, "random-streams");
  ASSERT_NE(alone, nullptr);
  EXPECT_EQ(alone->exposure->count, 0);
}

// Workers seeded alike one group after another (two tests of a suite, two phases) are deterministic
// on purpose: only processes alive at the same time are judged together.
TEST(ExecRaces, TrainersSeededAlikeOneAfterAnotherAreNotAFinding) {
  json first = end_with_stream(11, "seeded", "ab", true, true), second = end_with_stream(12, "seeded", "ab", true, true);
  first["t"] = 2.0;
  second["t"] = 5.0;
  const SharingFindings f = sharebench::judge_sharing({start(11, 1.0), first, start(12, 3.0), second}, {}, SharingContext{});
  EXPECT_EQ(find_check(f, "random-streams")->verdict, Verdict::kPass) << find_check(f, "random-streams")->message;
  // The second group alive while the first still ran: the same stream at once.
  const SharingFindings together =
      sharebench::judge_sharing({start(11, 1.0), first, start(12, 1.5), second}, {}, SharingContext{});
  EXPECT_EQ(find_check(together, "random-streams")->verdict, Verdict::kFail);
}

// A parent that, after its workers trained the model it handed them, evaluated another object of
// that class with values of its own (a checkpoint saved early, loaded into a new Net) fails
// trained-model-used; the trained model itself, or an object holding its values, is clean; uses
// before the workers ended are not judged.
TEST(ExecRaces, AParentThatEvaluatedAnotherObjectThanTheTrainedModelFails) {
  auto judged = [](json own_last_t, json others) {
    json handoff = {{"event", "handoff"}, {"pid", 10}, {"t", 1}, {"child", 11}, {"where", "prog.py:90 in <module>"},
                    {"method", "fork"},
                    {"objects", json::array({{{"oid", 777}, {"path", "args[2]"}, {"class", "Net"}, {"kind", "module"},
                                               {"params", 4}, {"shared", 4}}})}};
    json child_end = end(11, 5);
    child_end["trained"] = json::array({{{"path", "args[2]"}, {"class", "Net"}, {"steps", 128}}});
    json parent = state(10, 9, json::array());
    parent["model_uses"] = json::array({{{"oid", 777}, {"class", "Net"}, {"uses", own_last_t.is_null() ? 0 : 1},
                                         {"last_t", own_last_t}, {"site", "prog.py:103 in <module>"},
                                         {"others", std::move(others)}}});
    json torch = {{"event", "torch"}, {"pid", 10}, {"t", 0.5}, {"intra_op", 1}};
    return sharebench::judge_sharing({start(10, 0), torch, handoff, start(11, 1), child_end, parent, end(10, 9)}, {},
                                     SharingContext{});
  };
  auto other = [](double last_t, bool equal) {
    return json{{"site", "prog.py:69 in test"}, {"uses", 3}, {"first_t", last_t}, {"last_t", last_t},
                {"checked_t", last_t}, {"equal", equal}, {"shares", false}};
  };
  const SharingFindings stale = judged(nullptr, json::array({other(6, false)}));
  const Check* c = find_check(stale, "trained-model-used");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->verdict, Verdict::kFail);
  EXPECT_NE(c->message.find("pid 10 used another Net object at prog.py:69 in test (3 uses, the last after its workers "
                            "ended), never the Net its children trained (handed over at prog.py:90 in <module>, stepped 128 "
                            "times by pid 11): it shares no memory with it and holds other values"),
            std::string::npos)
      << c->message;
  EXPECT_NE(c->message.find("Fix: after join(), use the model handed to the workers"), std::string::npos) << c->message;
  // The trained model itself used after them (beside a baseline), or a copy of its values: clean.
  EXPECT_EQ(find_check(judged(6.5, json::array({other(6, false)})), "trained-model-used")->verdict, Verdict::kPass);
  const Check* copy = find_check(judged(nullptr, json::array({other(6, true)})), "trained-model-used");
  EXPECT_EQ(copy->verdict, Verdict::kPass);
  EXPECT_EQ(copy->exposure->count, 1);
  // Another object used only while the workers ran (an A3C-style test process's copy) is not judged.
  const Check* during = find_check(judged(nullptr, json::array({other(4, false)})), "trained-model-used");
  EXPECT_EQ(during->verdict, Verdict::kPass);
  EXPECT_EQ(during->exposure->count, 0);
}

// A program that is a test runner: each finding names the test its processes started in, and the
// check lists those tests (a JUnit testcase each); a finding about processes outside every test is
// left as it was.
TEST(ExecTests, EachFindingNamesTheTestItsProcessesStartedIn) {
  json in_test = start(12, 0.1), other_test = start(13, 0.2);
  in_test["test"] = "tests/test_a3c.py::test_workers";
  other_test["test"] = "tests/test_a3c.py::test_clean";
  const std::vector<json> events = {start(11, 0), in_test, other_test, start(14, 0.3),
                                    end_with_stream(12, "seeded", "ab", true, true), end_with_stream(14, "seeded", "ab", true, true)};
  const SharingFindings f = sharebench::judge_sharing(events, {}, SharingContext{});
  const Check* c = find_check(f, "random-streams");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->verdict, Verdict::kFail);
  EXPECT_EQ(c->message.rfind("in test tests/test_a3c.py::test_workers: 2 processes", 0), 0u) << c->message;
  EXPECT_EQ(c->tests, std::vector<std::string>{"tests/test_a3c.py::test_workers"});
  EXPECT_EQ(sharebench::pids_named("pids 11, 12 and 13 at x.py:1; pid 14 (parent 2)"), (std::vector<int>{11, 12, 13, 14}));
  // The process table learns each process's test.
  std::vector<ProcessRecord> processes;
  sharebench::merge_events_into_processes(events, 0, processes);
  const auto p12 = std::find_if(processes.begin(), processes.end(), [](const ProcessRecord& p) { return p.pid == 12; });
  ASSERT_NE(p12, processes.end());
  EXPECT_EQ(p12->test, "tests/test_a3c.py::test_workers");
}

}  // namespace races

}  // namespace
}  // namespace sharebench
