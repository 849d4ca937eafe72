// The `pipe` averaging transport: a manager process (multiprocessing's Manager in spirit) that
// every worker sends its vector to, over a Unix socket, and that sends each of them the mean back.
//
//   AveragingManager  the runner starts it in setup(): it forks a small torch-free child that
//                     listens on an abstract socket name, accepts `parties` clients, and serves
//                     rounds until every client hung up. finish() reaps it and says how it ended;
//                     the destructor kills and reaps it if it is still running.
//   AveragingClient   a worker's end: mean() sends this rank's vector and overwrites it with the
//                     mean of all ranks.
// The mean is summed in rank order in float and divided by the party count, exactly as the
// shared-memory transport does it, so replicas agree bit for bit whichever transport they use.
// Every wait has a deadline: a party that vanishes ends the manager (and the round) with a
// named error, never a hang.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "harness/ipc/unix_socket.h"

namespace sharebench {

class AveragingManager {
 public:
  AveragingManager() = default;
  // Forks the manager process. `floats` is the vector length of every round.
  static AveragingManager start(const std::string& socket_name, int parties, std::int64_t floats, double timeout_s);
  AveragingManager(AveragingManager&& o) noexcept;
  AveragingManager& operator=(AveragingManager&& o) noexcept;
  ~AveragingManager();

  // Waits up to timeout_s for the manager to exit (killing it after that) and returns how it
  // ended: "served N rounds" or what went wrong.
  std::string finish(double timeout_s);
  // True when it ended by itself after serving its clients.
  bool ended_cleanly() const { return clean_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  bool clean_ = false;
  UnixSocket report_;  // the manager writes its last words here
};

class AveragingClient {
 public:
  AveragingClient(const std::string& socket_name, int rank, double timeout_s);
  // Sends data[0..n) and replaces it with the mean over every rank.
  void mean(float* data, std::int64_t n);

 private:
  UnixSocket socket_;
  double timeout_s_;
};

}  // namespace sharebench
