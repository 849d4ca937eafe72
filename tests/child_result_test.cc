// compute_in_child: the answer comes back byte for byte, a thrown exception comes back as its
// message, and a child that dies or never answers is reported, not waited for forever.
#include <signal.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "harness/util/child_result.h"

namespace sharebench {
namespace {

TEST(ComputeInChild, ReturnsTheChildsBytesExactly) {
  std::string big(200000, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7919 % 251);
  const pid_t me = ::getpid();
  EXPECT_EQ(compute_in_child([&] { return big + std::to_string(::getpid() != me); }, 30), big + "1");
}

TEST(ComputeInChild, AThrownExceptionComesBackAsItsMessage) {
  try {
    compute_in_child([]() -> std::string { throw std::runtime_error("no device here"); }, 30);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no device here");
  }
}

TEST(ComputeInChild, AChildThatDiesIsReported) {
  try {
    compute_in_child([]() -> std::string { ::raise(SIGKILL); return "unreachable"; }, 30);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
}

TEST(ComputeInChild, AChildThatNeverAnswersIsKilledAtTheTimeout) {
  try {
    compute_in_child([]() -> std::string { for (;;) ::pause(); }, 0.3);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no answer within 0.3 s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sharebench
