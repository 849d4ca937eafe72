// terminal_safe: see the header.
#include "reports/terminal_safe.h"

#include "harness/util/text.h"

namespace sharebench {

namespace {
void clean(std::string& s) { s = printable_lines(s); }

void clean(std::vector<std::string>& list) {
  for (std::string& s : list) clean(s);
}

// A map's keys and values: keys are text from the file too (an environment's, a metric's name).
template <typename Value>
void clean(std::map<std::string, Value>& map) {
  std::map<std::string, Value> out;
  for (auto& [key, value] : map) {
    Value v = value;
    if constexpr (std::is_same_v<Value, std::string>) clean(v);
    out.emplace(printable_lines(key), std::move(v));
  }
  map = std::move(out);
}

void clean(CellConfig& c) {
  for (std::string* s : {&c.scenario, &c.variant, &c.workload.model, &c.workload.input_shape, &c.workload.input_dtype,
                         &c.stacks, &c.workdir}) {
    clean(*s);
  }
  clean(c.disabled_checks);
  clean(c.options);
  clean(c.command);
}

void clean(Repetition& r) {
  for (std::string* s : {&r.status_message, &r.expectation_message, &r.diagnosis, &r.sanitizer_report}) clean(*s);
  clean(r.notes);
  clean(r.disabled_dropped);
  clean(r.metrics);
  for (Check& k : r.checks) {
    clean(k.name);
    clean(k.message);
    if (k.exposure) clean(k.exposure->what);
    for (std::string& t : k.tests) clean(t);
  }
  for (Series& s : r.series) clean(s.name);
  for (WorkerRecord& w : r.workers) {
    for (std::string* s : {&w.error, &w.stderr_tail, &w.stall, &w.stacks, &w.chaos_recent}) clean(*s);
  }
  for (ProcessRecord& p : r.processes) {
    for (std::string* s : {&p.command, &p.role, &p.end, &p.state, &p.python_stack, &p.native_stack, &p.error, &p.test}) clean(*s);
  }
}
}  // namespace

// Field by field, every string of the model: tests/terminal_safe_test.cc puts an escape sequence
// into each string of a results file in turn and fails on any that reaches a writer, so a field
// added to the model and missed here fails that test.
void make_terminal_safe(RunResult& run) {
  for (std::string* s : {&run.run_id, &run.started_at, &run.finished_at, &run.status, &run.stop_reason}) clean(*s);
  clean(run.command);
  clean(run.environment);
  clean(run.merged_from);
  for (CellResult& c : run.cells) {
    clean(c.config);
    clean(c.repro);
    clean(c.expected.must_fail);
    clean(c.expected.may_fail);
    clean(c.expected.must_pass);
    for (Repetition& r : c.repetitions) clean(r);
  }
}

}  // namespace sharebench
