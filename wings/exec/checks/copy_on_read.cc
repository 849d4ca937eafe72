// copy-on-read in a user's program: no forked child made 64 MiB or more, and a third or more, of the
// memory it inherited private (pages copied because it wrote them: reading Python objects writes their
// reference counts; pytorch#13246). Reads the forked children's "end" (their pagemap at the end:
// sharebench_copy_on_read.py).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/event_fields.h"
#include "wings/exec/checks/exec_checks.h"
#include "wings/exec/exec_check_ids.h"

namespace sharebench::exec_checks {

using nlohmann::json;

namespace {

constexpr double kInheritedCopiedFailMb = 64;

}  // namespace

void judge_copy_on_read(const ExecCheckInput& in, SharingFindings& f) {
  const std::vector<json>& events = in.events;
  int measured = 0;
  double most = 0;
  std::vector<std::string> copied;
  for (const json* e : events_of(events, "end")) {
    if (!has_number(*e, "inherited_private_kb")) continue;
    ++measured;
    const int pid = int_of(*e, "pid");
    const double mb = number_of(*e, "inherited_private_kb") / 1024.0;
    const double resident_mb = number_of(*e, "inherited_resident_kb") / 1024.0;
    most = std::max(most, mb);
    // Both a size and a share: every forked child copies some pages (the interpreter's own objects,
    // about 27 MiB with torch loaded); a child that copied a third of what it inherited reads data.
    if (mb >= kInheritedCopiedFailMb && mb * 3 >= resident_mb) {
      copied.push_back(fmt::format("pid {} (started at {}) {:.0f} MiB of the {:.0f} MiB it inherited", pid,
                                   child_started_at(events, pid), mb, resident_mb));
    }
  }
  f.metrics["inherited_copied_mb_max"] = most;
  f.to_raise[std::string(checks::kCopyOnRead)] = "a program whose forked children read what their parent built";
  const Exposure seen{static_cast<double>(measured), "forked children measured at their end"};
  if (copied.empty()) {
    f.checks.push_back(Check{checks::kCopyOnRead, Verdict::kPass, most,
                             fmt::format("no forked child copied {:.0f} MiB or more, and a third or more, of what it "
                                         "inherited (the most: {:.0f} MiB)",
                                         kInheritedCopiedFailMb, most),
                             seen});
    return;
  }
  f.checks.push_back(Check{checks::kCopyOnRead, Verdict::kFail, most,
                           fmt::format("{} forked child(ren) made private, page by page, memory they inherited from "
                                       "their parent: {}. Reading a Python object writes its reference count, so a "
                                       "Dataset of Python lists, dicts or strings is copied into every worker that "
                                       "reads it (pytorch#13246): keep such data in numpy arrays or tensors, which "
                                       "stay shared",
                                       copied.size(), fmt::join(copied, "; ")),
                           seen});
}

}  // namespace sharebench::exec_checks
