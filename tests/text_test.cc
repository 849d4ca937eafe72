// closest_name: the "did you mean" of a misspelled scenario, variant or check name.
#include <gtest/gtest.h>

#include "harness/util/text.h"

namespace sharebench {
namespace {

const std::vector<std::string> kScenarios = {"locked", "hogwild", "inference", "averaging", "ipc", "model-ipc", "a3c"};

TEST(ClosestName, ATypoFindsTheName) {
  EXPECT_EQ(closest_name("hogwlid", kScenarios), "hogwild");   // two letters swapped
  EXPECT_EQ(closest_name("lockd", kScenarios), "locked");      // one letter dropped
  EXPECT_EQ(closest_name("inferense", kScenarios), "inference");
  EXPECT_EQ(closest_name("model_ipc", kScenarios), "model-ipc");
}

TEST(ClosestName, NothingCloseIsNoGuess) {
  EXPECT_EQ(closest_name("transformer", kScenarios), "");
  EXPECT_EQ(closest_name("zzz", kScenarios), "");
  EXPECT_EQ(closest_name("x", {}), "");
}

}  // namespace
}  // namespace sharebench
