// closest_name: the "did you mean" of a misspelled scenario, variant or check name; wrapped: the
// console's lines fitted to a terminal's width.
#include <algorithm>

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

// The console's recommendation fits a terminal: a line past the width breaks at a space, its
// continuation indented, counted in characters (± is one), and a word too long for any line stays whole.
TEST(Wrapped, BreaksLongLinesAtSpacesAndIndentsWhatFollows) {
  EXPECT_EQ(wrapped("  alpha beta gamma\nshort\n", 12), "  alpha beta\n      gamma\nshort\n");
  EXPECT_EQ(wrapped("± ± ± ± ±", 9), "± ± ± ± ±");  // 9 characters, 13 bytes: fits
  EXPECT_EQ(wrapped("unbreakable-word-longer-than-the-room x", 10), "unbreakable-word-longer-than-the-room\n    x");
  const std::string wide = wrapped(std::string(40, 'a') + " " + std::string(30, 'b') + " " + std::string(30, 'c'), 50);
  std::size_t longest = 0;
  for (std::size_t at = 0, nl; at <= wide.size(); at = nl + 1) {
    nl = wide.find('\n', at);
    if (nl == std::string::npos) nl = wide.size();
    longest = std::max(longest, nl - at);
  }
  EXPECT_LE(longest, 50u) << wide;
}

TEST(TruncatedLine, CutsAtTheWidthInCharactersWithAnEllipsis) {
  EXPECT_EQ(truncated_line("short\nsecond line", 10), "short");
  EXPECT_EQ(truncated_line("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(truncated_line("abcdefghijk", 10), "abcdefghi…");
  EXPECT_EQ(truncated_line("±±±±±±±±±±±", 5), "±±±±…");  // characters, not bytes
}

}  // namespace
}  // namespace sharebench
