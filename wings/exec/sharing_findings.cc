// sharing_findings: reads sharebench_watch.py's events, adds what they know to the process table, and
// turns them into the cell's checks (checks/, one file each, through their table) and notes.
#include "wings/exec/sharing_findings.h"
#include "wings/exec/exec_check_ids.h"
#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/test_attribution.h"
#include "harness/util/bounded_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

using nlohmann::json;
using namespace exec_checks;  // the events' field readers (checks/event_fields.h)

namespace {

// --- headroom: notes, never a check ------------------------------------------------------------------
constexpr double kSmallDevShmMb = 512;  // a /dev/shm smaller than this is said before anything fails
void judge_headroom(const std::vector<json>& events, const std::vector<ProcessRecord>& processes,
                    const SharingContext& m, SharingFindings& f) {
  const double used = std::max(0.0, m.dev_shm_used_mb_peak - m.dev_shm_used_mb_before);
  f.metrics["dev_shm_used_mb_peak"] = used;
  if (m.dev_shm_size_mb > 0 && m.dev_shm_size_mb < kSmallDevShmMb) {
    f.notes.push_back(fmt::format("/dev/shm is only {:.0f} MiB (Docker's default is 64 MiB): every tensor shared "
                                  "between processes lives there, and past its size a worker dies of SIGBUS or fails "
                                  "with 'No space left on device' (docker run --shm-size=2g)",
                                  m.dev_shm_size_mb));
  }
  if (m.dev_shm_size_mb > 0 && used > 0.5 * m.dev_shm_size_mb) {
    f.notes.push_back(fmt::format("/dev/shm: the program used up to {:.0f} MiB of its {:.0f} MiB: shared tensors past "
                                  "that fail with 'No space left on device' (Docker's default is 64 MiB)",
                                  used, m.dev_shm_size_mb));
  }
  // Each process against its own limit, as it stood when the process was nearest it (a process may
  // lower its limit after it held more).
  std::vector<std::string> crowded;
  for (const ProcessRecord& p : processes) {
    if (p.fd_limit > 0 && p.fds_nearest_limit > p.fd_limit / 2) {
      crowded.push_back(fmt::format("pid {} held {} of its {}", p.pid, p.fds_nearest_limit, p.fd_limit));
    }
  }
  if (!crowded.empty()) {
    f.notes.push_back(fmt::format("open descriptors near RLIMIT_NOFILE: {} (the file_descriptor sharing strategy keeps one "
                                  "per shared storage received: 'Too many open files' past the limit; raise it or use "
                                  "file_system)",
                                  fmt::join(crowded, "; ")));
  }
  // Intra-op threads of the processes alive at once, against the cores.
  struct Span {
    double from, to;
    int threads;
  };
  // A process's span runs from its start event to its last event; its threads are the latest it
  // reported (at torch's import, at a fork into it, at its end). A process that started Python
  // children is left out: a parent mostly waits for its workers.
  std::map<int, Span> spans;
  std::set<int> parents;
  for (const json& e : events) {
    if (text_of(e, "event") == "start") parents.insert(int_of(e, "ppid"));
  }
  for (const json& e : events) {
    const std::string kind = text_of(e, "event");
    const double t = number_of(e, "t");
    Span& s = spans.try_emplace(int_of(e, "pid"), Span{t, t, 0}).first->second;
    s.from = std::min(s.from, t);
    s.to = std::max(s.to, t);
    // The latest figure a process reported: a worker that set one thread ran with one.
    if ((kind == "torch" || kind == "end") && has_number(e, "intra_op")) s.threads = int_of(e, "intra_op");
    if (kind == "start" && e.contains("fork") && e["fork"].is_object() && has_number(e["fork"], "intra_op")) {
      s.threads = int_of(e["fork"], "intra_op");
    }
  }
  for (const int p : parents) spans.erase(p);
  // The most threads at any one moment: a sweep over the spans' ends (a start before an end at the
  // same instant). Summing every span that overlaps a given one would add up processes that never
  // met: a long-lived one overlaps a hundred short workers that ran one after another.
  int most = 0, threads_max = 0, now = 0;
  std::vector<std::pair<double, int>> edges;  // (time, +threads at a start or -threads at an end)
  for (const auto& [pid, a] : spans) {
    edges.emplace_back(a.from, a.threads);
    edges.emplace_back(a.to, -a.threads);
    threads_max = std::max(threads_max, a.threads);
  }
  std::sort(edges.begin(), edges.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  });
  for (const auto& [t, delta] : edges) {
    now += delta;
    most = std::max(most, now);
  }
  if (!spans.empty()) f.metrics["intra_op_threads_max"] = threads_max;
  if (most > m.cores) {
    f.notes.push_back(fmt::format("up to {} intra-op threads in processes alive at once on {} core(s): oversubscribed "
                                  "(torch.set_num_threads in each worker)",
                                  most, m.cores));
  }
  for (const json* e : events_of(events, "hook-error")) {
    f.notes.push_back(fmt::format("the sharing hooks failed in pid {} ({}): {}; the program went on, unwatched there",
                                  int_of(*e, "pid"), text_of(*e, "where"), text_of(*e, "error")));
  }
}
}  // namespace

std::vector<json> read_sharing_events(const std::string& path) {
  // A flood (a program that writes the events file itself, or a file repeated) must not cost the
  // rules' time per event pair: lines seen before are skipped, a process's reports of shared state
  // are kept only as its last one (each holds all it saw), each process keeps at most
  // kMaxEventsPerKind events of a kind, and the file at most kMaxEvents; what was left out is said
  // once, in a note.
  constexpr std::size_t kMaxEvents = 100000, kMaxEventsPerKind = 2048;
  std::vector<json> events;
  std::unordered_set<std::size_t> seen;
  std::map<std::pair<int, std::string>, std::size_t> per_kind;
  std::map<int, std::size_t> last_state;  // pid -> index of its last shared-state report
  std::size_t duplicates = 0, dropped = 0;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!seen.insert(std::hash<std::string>{}(line)).second) {
      ++duplicates;
      continue;
    }
    try {
      json j = parse_json_bounded(line);  // a program's line: malformed or too deep is skipped
      if (!j.is_object()) continue;
      const int pid = j.contains("pid") && j["pid"].is_number_integer() ? j["pid"].get<int>() : 0;
      const std::string kind = j.contains("event") && j["event"].is_string() ? j["event"].get<std::string>() : "";
      if (kind == "shared-state") {
        if (const auto it = last_state.find(pid); it != last_state.end()) {
          events[it->second] = std::move(j);  // the newer report holds all the older one did
          continue;
        }
        last_state[pid] = events.size();
      }
      if (events.size() >= kMaxEvents || ++per_kind[{pid, kind}] > kMaxEventsPerKind) {
        ++dropped;
        continue;
      }
      events.push_back(std::move(j));
    } catch (const std::exception&) {
    }
  }
  if (duplicates > 0 || dropped > 0) {
    events.push_back(json{{"event", "events-capped"}, {"pid", 0}, {"t", 0.0}, {"duplicates", duplicates}, {"dropped", dropped}});
  }
  return events;
}

void merge_events_into_processes(const std::vector<json>& events, double t0_s, std::vector<ProcessRecord>& processes) {
  auto find = [&](int pid) -> ProcessRecord* {
    for (ProcessRecord& p : processes) {
      if (p.pid == pid) return &p;
    }
    return nullptr;
  };
  int next_birth = 0;
  for (const ProcessRecord& p : processes) next_birth = std::max(next_birth, p.birth + 1);
  for (const json& e : events) {
    const std::string kind = text_of(e, "event");
    const int pid = int_of(e, "pid");
    const double at = std::max(0.0, number_of(e, "t") - t0_s);
    if (kind == "start" && !find(pid)) {  // born and gone between two scans
      ProcessRecord p;
      p.pid = pid;
      p.ppid = int_of(e, "ppid");
      p.birth = next_birth++;
      std::vector<std::string> argv;
      for (const json& a : array_of(e, "argv")) {
        if (a.is_string()) argv.push_back(a.get<std::string>());
      }
      p.command = fmt::format("python {}", fmt::join(argv, " "));
      p.role = "child";
      p.python = true;
      p.first_seen_s = p.last_seen_s = at;
      p.end = "ended (too short-lived for the scans; seen by its hooks)";
      processes.push_back(std::move(p));
    }
    ProcessRecord* p = find(kind == "reaped" ? int_of(e, "child") : pid);
    if (!p) continue;
    if (kind == "start" && p->test.empty()) p->test = text_of(e, "test");
    if (kind == "end" || kind == "error") {
      p->last_seen_s = std::max(p->last_seen_s, at);
      if (const std::string error = text_of(e, "error"); !error.empty()) p->error = error;
    }
    const bool generic = p->end.rfind("ended", 0) == 0;
    if (kind == "end" && generic && has_number(e, "code")) p->end = exit_words(int_of(e, "code"));
    if (kind == "reaped" && generic && has_number(e, "code")) p->end = exit_words(int_of(e, "code"));
  }
}

namespace {
// The protocol the hooks spoke, when it is not this runner's: the first start event's (0: none said).
std::optional<int> foreign_protocol(const std::vector<json>& events) {
  for (const json* e : events_of(events, "start")) {
    const int spoken = has_number(*e, "protocol") ? int_of(*e, "protocol") : 0;
    if (spoken != kExecEventsProtocol) return spoken;
  }
  return std::nullopt;
}
}  // namespace

SharingFindings judge_sharing(const std::vector<json>& events, const std::vector<ProcessRecord>& processes,
                              const SharingContext& machine) {
  SharingFindings f;
  if (const auto spoken = foreign_protocol(events)) {
    for (const exec_checks::ExecCheck& check : exec_checks::registered()) {
      const CheckId id = check.id;
      f.checks.push_back(Check{id, Verdict::kUnknown, std::nullopt,
                               fmt::format("the program's Python hooks wrote events of protocol {}, and this runner reads "
                                           "protocol {}: a sharebench_watch.py of another version was imported (check "
                                           "PYTHONPATH); nothing was judged",
                                           *spoken, kExecEventsProtocol)});
    }
    return f;
  }
  for (const json* e : events_of(events, "events-capped")) {
    f.notes.push_back(fmt::format("the events file held {} repeated line(s) and {} more than the rules read (at most "
                                  "2 048 of a kind per process, 100 000 in all): something besides the hooks wrote to "
                                  "it, or a process reported far more than a program does; what was left out was not judged",
                                  int_of(*e, "duplicates"), int_of(*e, "dropped")));
  }
  exec_checks::judge_all(events, processes, machine, f);  // checks/: one file each, registered in one table
  attribute_findings_to_tests(tests_by_pid(events), f.checks);  // a test runner's: each finding names its test
  judge_headroom(events, processes, machine, f);
  // The cell is labelled with the forced start method; a child started some other way (an
  // explicit context: mp.get_context("spawn"), torch.multiprocessing.spawn) says the label is not
  // the whole truth.
  if (!machine.forced_start.empty()) {
    std::map<std::string, int> other;
    for (const json* e : events_of(events, "handoff")) {
      const std::string method = text_of(*e, "method");
      if (!method.empty() && method != machine.forced_start) ++other[method];
    }
    for (const auto& [method, count] : other) {
      f.notes.push_back(fmt::format("{} child(ren) were started with {}, not the forced {}: the program asked for that "
                                    "context explicitly (mp.get_context(\"{}\"), torch.multiprocessing.spawn), which "
                                    "--mp-start does not change",
                                    count, method, machine.forced_start, method));
    }
  }
  return f;
}

namespace {
// From faulthandler's dump, the main thread's frames (its last block), innermost first: "file:line in fn".
std::vector<std::pair<std::string, std::string>> main_thread_frames(const std::string& dump) {
  std::vector<std::pair<std::string, std::string>> frames, block;
  std::size_t start = 0;
  while (start < dump.size()) {
    std::size_t end = dump.find('\n', start);
    if (end == std::string::npos) end = dump.size();
    const std::string line = dump.substr(start, end - start);
    start = end + 1;
    if (line.find("(most recent call first)") != std::string::npos) {
      if (!block.empty()) frames = block;
      block.clear();
      continue;
    }
    const auto file = line.find("File \"");
    if (file == std::string::npos) continue;
    const auto close = line.find('"', file + 6);
    const auto lineno = line.find("line ", close);
    const auto in = line.find(" in ", lineno);
    if (close == std::string::npos || lineno == std::string::npos || in == std::string::npos) continue;
    block.emplace_back(fmt::format("{}:{}", line.substr(file + 6, close - file - 6),
                                   line.substr(lineno + 5, in - lineno - 5)),
                       line.substr(in + 4));
  }
  if (!block.empty()) frames = block;
  return frames;
}

// The harness's own hooks (sharebench_watch.py, sharebench_shared_state.py, sharebench_sends.py, ...)
// wrap the program's calls (Process.start, join's poll, a queue's get).
bool hook_file(const std::string& where) {
  constexpr std::string_view kHookFilePrefix = "sharebench_";
  for (std::size_t at = where.find(kHookFilePrefix); at != std::string::npos; at = where.find(kHookFilePrefix, at + 1)) {
    if ((at == 0 || where[at - 1] == '/' || where[at - 1] == '"') && where.find(".py", at) != std::string::npos) return true;
  }
  return false;
}

bool library_file(const std::string& where) {
  if (hook_file(where)) return true;  // never the user's line
  return where.find("/usr/lib/python3") != std::string::npos || where.find("/site-packages/") != std::string::npos ||
         where.find("/dist-packages/") != std::string::npos || where.rfind("<frozen", 0) == 0;
}

std::string short_path(const std::string& where) {
  for (const char* marker : {"/python3/dist-packages/", "/site-packages/", "/dist-packages/"}) {
    if (const auto at = where.find(marker); at != std::string::npos) return where.substr(at + std::strlen(marker));
  }
  if (const auto at = where.find("/python3."); at != std::string::npos) {
    const auto slash = where.find('/', at + 1);
    if (slash != std::string::npos) return where.substr(slash + 1);
  }
  const auto slash = where.rfind('/');
  return slash == std::string::npos ? where : where.substr(slash + 1);
}
}  // namespace

std::string diagnose_program(const std::vector<ProcessRecord>& processes, bool hung) {
  const ProcessRecord* program = nullptr;
  for (const ProcessRecord& p : processes) {
    if (p.role == "program") program = &p;
  }
  std::string first;
  if (program && hung) {
    const auto frames = main_thread_frames(program->python_stack);
    if (!frames.empty()) {
      // The call the program made into a library (the frame just inside its own innermost one):
      // "get (multiprocessing/queues.py:103), called from main.py:117".
      std::size_t user = frames.size();
      for (std::size_t i = 0; i < frames.size(); ++i) {
        if (!library_file(frames[i].first)) {
          user = i;
          break;
        }
      }
      if (user == 0) {
        first = fmt::format("the program (pid {}) is at {} in {}", program->pid, short_path(frames[0].first), frames[0].second);
      } else {
        // The library's call, not a hook wrapped around it (a queue's get wrapped by sharebench_sends.py).
        std::size_t callee = user - 1;
        while (callee > 0 && hook_file(frames[callee].first)) --callee;
        const auto& [where, fn] = frames[callee];
        first = fmt::format("the program (pid {}) waits in {} ({}){}", program->pid, fn, short_path(where),
                            user < frames.size() ? fmt::format(", called from {} in {}", short_path(frames[user].first),
                                                               frames[user].second)
                                                 : "");
      }
    } else if (!program->state.empty()) {
      first = fmt::format("the program (pid {}) is stuck: {}", program->pid, program->state.substr(0, 160));
    } else {
      first = fmt::format("the program (pid {}) made no progress", program->pid);
    }
  } else if (program && program->end.rfind("exited 0", 0) != 0 && program->end.rfind("ended", 0) != 0) {
    first = fmt::format("the program {}", program->end);
    if (!program->error.empty()) first += fmt::format(" ({})", last_line(program->error));
  }
  std::vector<std::string> failed;
  for (const ProcessRecord& p : processes) {
    if (p.role != "child") continue;
    const bool bad = (p.end.rfind("exited ", 0) == 0 && p.end != "exited 0") || p.end.rfind("killed by SIG", 0) == 0;
    if (!bad) continue;
    // A SIGBUS in a process that shares tensors is, nearly always, a page of /dev/shm that could not
    // be backed: the filesystem is full (Docker gives it 64 MiB).
    const std::string why = p.end == "killed by SIGBUS" ? " (a SIGBUS while sharing tensors is /dev/shm running out: "
                                                          "check `df -h /dev/shm`; in Docker, --shm-size)"
                                                        : "";
    failed.push_back(fmt::format("pid {} {}{}{}", p.pid, p.end, why,
                                 p.error.empty() ? "" : fmt::format(" ({})", last_line(p.error))));
  }
  if (first.empty() && failed.empty()) return "";
  if (failed.empty()) return first;
  const std::string children = fmt::format("{} of its children ended badly: {}", failed.size(), fmt::join(failed, "; "));
  return first.empty() ? children : fmt::format("{}; {}", first, children);
}

}  // namespace sharebench
