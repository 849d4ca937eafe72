// buffer-lifetime in a user's program: a tensor sent through a Queue, SimpleQueue or Pipe two or
// more times (the same storage: a producer's reused buffer) that a receiver saw with contents it was
// never sent with. A tensor sent between processes is shared, not copied, so the receiver
// reads whatever the sender wrote into it since: a producer that refills the buffer it just put makes
// the consumer read the next batch. Judged by what happened: a strided sample's sum at each send and
// each receive (sharebench_sends.py), paired in order: a queue is first in, first out, so the k-th
// receive of a storage is of its k-th send. A storage sent once (a model handed over, then trained in place;
// a DataLoader batch) is never judged; a pool of buffers refilled only after the consumer hands them
// back, or a clone per send, is clean.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "wings/exec/checks/exec_checks.h"

namespace sharebench::exec_checks {

using nlohmann::json;

void judge_buffer_lifetime(const ExecCheckInput& in, SharingFindings& f) {
  struct Sent {
    double count = 0;
    bool complete = true;
    std::vector<std::pair<double, double>> fps;  // (time, fingerprint) of each send
    std::vector<std::pair<int, const json*>> senders;
    std::string shape;
  };
  std::map<std::string, Sent> sent;
  for (const ProcessSharedState& p : in.shared_state.processes) {
    if (p.sends == nullptr) continue;
    for (const json& s : *p.sends) {
      if (!s.contains("key") || !s["key"].is_string()) continue;
      Sent& e = sent[s["key"].get<std::string>()];
      e.count += s.value("count", 0.0);
      e.complete = e.complete && s.value("complete", false);
      if (s.contains("fps") && s["fps"].is_array()) {
        for (const json& fp : s["fps"]) {
          if (fp.is_array() && fp.size() == 2 && fp[0].is_number() && fp[1].is_number()) {
            e.fps.emplace_back(fp[0].get<double>(), fp[1].get<double>());
          }
        }
      }
      e.senders.emplace_back(p.pid, s.contains("sites") ? &s["sites"] : nullptr);
      if (e.shape.empty() && s.contains("shape")) e.shape = s["shape"].dump();
    }
  }
  double compared = 0;
  std::vector<std::string> findings;
  for (const auto& [key, e] : sent) {
    if (e.count < 2 || !e.complete) continue;  // sent once, or fingerprints not all kept: not judged
    std::vector<std::tuple<double, double, int>> receives;  // (time, fingerprint, receiving pid)
    for (const ProcessSharedState& p : in.shared_state.processes) {
      if (p.receives == nullptr) continue;
      for (const json& r : *p.receives) {
        if (r.value("key", "") != key || !r.contains("fps") || !r["fps"].is_array()) continue;
        for (const json& fp : r["fps"]) {
          if (fp.is_array() && fp.size() == 2 && fp[0].is_number() && fp[1].is_number()) {
            receives.emplace_back(fp[0].get<double>(), fp[1].get<double>(), p.pid);
          }
        }
      }
    }
    std::vector<std::pair<double, double>> sends = e.fps;
    std::sort(sends.begin(), sends.end());
    std::sort(receives.begin(), receives.end());
    const std::size_t paired = std::min(sends.size(), receives.size());
    double changed = 0, received = static_cast<double>(paired);
    std::set<int> changed_in;
    for (std::size_t k = 0; k < paired; ++k) {
      if (std::get<1>(receives[k]) != sends[k].second) {
        ++changed;
        changed_in.insert(std::get<2>(receives[k]));
      }
    }
    std::vector<std::pair<int, const json*>> receivers;
    for (const ProcessSharedState& p : in.shared_state.processes) {
      if (p.receives == nullptr || !changed_in.count(p.pid)) continue;
      for (const json& r : *p.receives) {
        if (r.value("key", "") == key) receivers.emplace_back(p.pid, r.contains("sites") ? &r["sites"] : nullptr);
      }
    }
    compared += received;
    if (changed <= 0) continue;
    findings.push_back(fmt::format(
        "a tensor of shape {} sent {:g} times ({}) was changed before it was received: {:g} of {:g} receives ({}) "
        "read other contents than their send had. A tensor sent between processes is shared, not copied: the "
        "receiver reads whatever the sender writes into it after put(). Fix: send a clone (`q.put(buf.clone())`), "
        "or keep a pool of buffers that the consumer hands back before the producer refills them",
        e.shape, e.count, sites_by_pid(e.senders), changed, received, sites_by_pid(receivers)));
  }
  f.to_raise[std::string(checks::kBufferLifetime)] =
      "a program that sends the same tensor through a Queue or Pipe more than once";
  const Exposure seen{compared, "receives of tensors sent more than once compared"};
  add_verdict(f, checks::kBufferLifetime, findings, "every tensor sent more than once was received as it was sent", seen);
}

}  // namespace sharebench::exec_checks
