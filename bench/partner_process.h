// PartnerProcess: a forked child that runs one side of a two-process benchmark, over shared
// memory the parent mapped before the fork. Google Benchmark times the parent's side; the child
// loops until the parent sets `stop` and wakes it. Destruction stops and reaps it.
#pragma once

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <new>
#include <stdexcept>

namespace sharebench::bench {

// An anonymous shared mapping holding one T, constructed in place; fork children share it.
template <typename T>
class SharedObject {
 public:
  template <typename... Args>
  explicit SharedObject(Args&&... args) {
    void* p = ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap");
    object_ = new (p) T(std::forward<Args>(args)...);
  }
  ~SharedObject() {
    object_->~T();
    ::munmap(object_, sizeof(T));
  }
  T* operator->() { return object_; }
  T& operator*() { return *object_; }

 private:
  T* object_;
};

class PartnerProcess {
 public:
  explicit PartnerProcess(const std::function<void()>& body) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      body();
      ::_exit(0);
    }
  }
  ~PartnerProcess() {
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) ::kill(pid_, SIGKILL);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace sharebench::bench
