// terminal_safe: see the header.
#include "reports/terminal_safe.h"

#include "harness/util/text.h"

namespace sharebench {

namespace {
void clean(std::string& s) { s = printable_lines(s); }
}  // namespace

void make_terminal_safe(RunResult& run) {
  for (std::string& s : run.command) clean(s);
  for (auto& [key, value] : run.environment) clean(value);
  for (CellResult& c : run.cells) {
    clean(c.config.scenario);
    clean(c.config.variant);
    for (std::string& s : c.config.command) clean(s);
    clean(c.config.workdir);
    clean(c.repro);
    for (Repetition& r : c.repetitions) {
      clean(r.status_message);
      clean(r.expectation_message);
      clean(r.diagnosis);
      clean(r.sanitizer_report);
      for (std::string& n : r.notes) clean(n);
      for (Check& k : r.checks) {
        clean(k.name);
        clean(k.message);
      }
      for (WorkerRecord& w : r.workers) {
        for (std::string* s : {&w.error, &w.stderr_tail, &w.stall, &w.stacks, &w.chaos_recent}) clean(*s);
      }
      for (ProcessRecord& p : r.processes) {
        for (std::string* s : {&p.command, &p.role, &p.end, &p.state, &p.python_stack, &p.native_stack, &p.error}) clean(*s);
      }
    }
  }
}

}  // namespace sharebench
