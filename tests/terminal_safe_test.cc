// make_terminal_safe (reports/terminal_safe.h) over every string of a results file, not a list of
// fields: a run with every field filled is written to JSON, and each string in it (each free-form key
// too) in turn gets an escape sequence, is read back, made safe, and written again. An escape that
// survives names the field a writer would print raw; a string the reader refuses with it (a verdict,
// a start method) cannot carry one. A field added to the model and missed by make_terminal_safe fails
// here, whichever writer prints it first.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "harness/results/results_json.h"
#include "reports/terminal_safe.h"

namespace sharebench {

std::string render_markdown(const RunResult& run);  // reports/markdown_report.cc
std::string render_html(const RunResult& run);      // reports/html_report.cc

namespace {

using nlohmann::json;

constexpr char kEscape[] = "\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m";

RunResult every_field_filled() {
  RunResult run;
  run.run_id = "run-1";
  run.started_at = "2026-11-28T06:00:00Z";
  run.finished_at = "2026-11-28T06:01:00Z";
  run.status = "complete";
  run.stop_reason = "a full disk";
  run.command = {"sharebench", "run"};
  run.environment = {{"host", "box"}};
  run.merged_from = {"run-0"};
  CellResult c;
  c.config.scenario = "locked";
  c.config.variant = "whole-step";
  c.config.workload.input_shape = "1,2";
  c.config.disabled_checks = {"memory"};
  c.config.options = {{"average-every", "10"}};
  c.config.command = {"python3", "train.py"};
  c.config.workdir = "/tmp/w";
  c.repro = "sharebench run --scenario locked/whole-step";
  c.expected.must_fail = {"lost-updates"};
  c.expected.may_fail = {"convergence"};
  c.expected.must_pass = {"liveness"};
  Repetition r;
  r.status_message = "ok";
  r.expectation_message = "as expected";
  r.diagnosis = "none";
  r.sanitizer_report = "clean";
  r.notes = {"a note"};
  r.disabled_dropped = {"memory"};
  r.metrics = {{"steps_per_s", 10.0}};
  Check k{"liveness", Verdict::kPass, 1.0, "alive"};
  k.exposure = Exposure{3, "beats seen"};
  r.checks = {k};
  r.series = {Series{"loss", 0, {{1, 0.1, 0.5}}}};
  WorkerRecord w;
  w.error = "e";
  w.stderr_tail = "tail";
  w.stall = "stall";
  w.stacks = "stacks";
  w.chaos_recent = "chaos";
  r.workers = {w};
  ProcessRecord p;
  p.command = "python3";
  p.role = "program";
  p.end = "ended";
  p.state = "S";
  p.python_stack = "py";
  p.native_stack = "native";
  p.error = "err";
  r.processes = {p};
  c.repetitions = {r};
  run.cells = {c};
  return run;
}

// Every place in `j` that holds a string of free text: a string value, or an object's key where
// the keys are data (not the format's own field names).
struct Place {
  json::json_pointer at;
  bool key = false;
  std::string name() const { return at.to_string() + (key ? " (a key)" : ""); }
};

void places_in(const json& j, const json::json_pointer& at, std::vector<Place>& out) {
  if (j.is_string()) out.push_back({at, false});
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) places_in(j[i], at / i, out);
  }
  if (j.is_object()) {
    const std::string last = at.empty() ? "" : at.back();
    const bool keyed_by_data = last == "environment" || last == "metrics" || last == "options";
    for (const auto& [key, value] : j.items()) {
      if (keyed_by_data) out.push_back({at / key, true});
      places_in(value, at / key, out);
    }
  }
}

bool holds_control(const json& j) {
  if (j.is_string()) {
    for (unsigned char ch : j.get<std::string>()) {
      if (ch == 0x1b || ch == 0x07 || ch == 0x9b) return true;
    }
    return false;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (holds_control(json(key)) || holds_control(value)) return true;
    }
  }
  if (j.is_array()) {
    for (const json& e : j) {
      if (holds_control(e)) return true;
    }
  }
  return false;
}

// The run read back from `base` with `added` appended to the string (or key) at `place`, made
// terminal-safe as every writer gets it; nullopt where the reader refuses it (a verdict, a start
// method: such a field cannot carry the text to a writer), or where the place is not the file's
// own data (the recommendation, recomputed on reading; the format tag).
std::optional<RunResult> read_with(const json& base, const Place& place, const std::string& added) {
  if (place.at.to_string().rfind("/recommendation", 0) == 0 || place.at.to_string() == "/format") return std::nullopt;
  json crafted = base;
  if (place.key) {
    json& parent = crafted[place.at.parent_pointer()];
    json value = parent[place.at.back()];
    parent.erase(place.at.back());
    parent[place.at.back() + added] = value;
  } else {
    crafted[place.at] = crafted[place.at].get<std::string>() + added;
  }
  try {
    RunResult run = results_from_json(crafted);
    make_terminal_safe(run);
    return run;
  } catch (const ResultsFormatError&) {
    return std::nullopt;
  }
}

std::vector<Place> places_of(const json& base) {
  std::vector<Place> places;
  places_in(base, json::json_pointer(), places);
  return places;
}

TEST(TerminalSafe, NoStringOfAResultsFileReachesAWriterWithAnEscapeSequence) {
  const json base = results_to_json(every_field_filled());
  const std::vector<Place> places = places_of(base);
  ASSERT_GT(places.size(), 40u);
  int carried = 0;
  for (const Place& place : places) {
    const std::optional<RunResult> run = read_with(base, place, kEscape);
    if (!run) continue;
    ++carried;
    EXPECT_FALSE(holds_control(results_to_json(*run))) << "an escape sequence in " << place.name() << " reached the writers";
  }
  EXPECT_GT(carried, 30) << "most strings of a results file are free text a reader keeps";
}

// Markdown with its code spans and fenced blocks taken out: what is left is read as markup.
std::string outside_code(const std::string& md) {
  std::string out;
  bool fenced = false;
  std::size_t start = 0;
  while (start < md.size()) {
    const std::size_t end = std::min(md.find('\n', start), md.size());
    const std::string line = md.substr(start, end - start);
    start = end + 1;
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    bool in_code = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '`') {
        std::size_t run = 0;
        while (i + run < line.size() && line[i + run] == '`') ++run;
        i += run - 1;
        in_code = !in_code;
        continue;
      }
      if (!in_code) out += line[i];
    }
    out += '\n';
  }
  return out;
}

// The same walk with a tag: no string of a results file opens markup in report.md (outside code)
// or report.html.
TEST(MarkupSafe, NoStringOfAResultsFileOpensATagInMarkdownOrHtml) {
  constexpr char kTag[] = "<img src=x onerror=alert(1)>";
  const json base = results_to_json(every_field_filled());
  for (const Place& place : places_of(base)) {
    const std::optional<RunResult> run = read_with(base, place, kTag);
    if (!run) continue;
    EXPECT_EQ(outside_code(render_markdown(*run)).find("<img"), std::string::npos)
        << "a tag in " << place.name() << " is live in report.md";
    EXPECT_EQ(render_html(*run).find("<img"), std::string::npos) << "a tag in " << place.name() << " is live in report.html";
  }
}

}  // namespace
}  // namespace sharebench
