#include "loader/core/generation_history.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/stats.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

using ::testing::ElementsAre;

GenerationStats Counted(uint32_t generation, uint64_t drops,
                        std::vector<uint64_t> forks) {
  GenerationStats stats;
  stats.generation = generation;
  stats.counters[LOEHLE_STAT_EVENT_DROPS] = drops;
  stats.counters[LOEHLE_STAT_CLAIM_ATTEMPTS] = 10 * generation;
  stats.fork_picks = std::move(forks);
  return stats;
}

TEST(GenerationHistoryTest, KeepsTheNewestAndFoldsTheRestIntoOneTotal) {
  GenerationHistory history(3);
  for (uint32_t g = 1; g <= 3; ++g) history.Begin(g, Settings{});
  EXPECT_TRUE(history.Overflow().empty());
  history.Begin(4, Settings{});
  history.Begin(5, Settings{});
  EXPECT_THAT(history.Overflow(), ElementsAre(1u, 2u));
  history.Fold(Counted(1, 2, {1, 1}));
  history.Fold(Counted(2, 3, {0, 5, 7}));
  EXPECT_TRUE(history.Overflow().empty());
  EXPECT_EQ(history.settings().size(), 3u);
  EXPECT_EQ(history.settings().begin()->first, 3u);
  const FoldedGenerations& older = history.older();
  EXPECT_EQ(older.count, 2u);
  EXPECT_EQ(older.first, 1u);
  EXPECT_EQ(older.last, 2u);
  EXPECT_EQ(older.sum.Get(LOEHLE_STAT_EVENT_DROPS), 5u);
  EXPECT_EQ(older.sum.Get(LOEHLE_STAT_CLAIM_ATTEMPTS), 30u);
  EXPECT_THAT(older.sum.fork_picks, ElementsAre(1u, 6u, 7u));
}

TEST(GenerationHistoryTest, RetiredCountersAreKeptUntilFolded) {
  GenerationHistory history(2);
  history.Begin(1, Settings{});
  history.Retire(Counted(1, 4, {}));
  ASSERT_NE(history.Retired(1), nullptr);
  EXPECT_EQ(history.Retired(1)->Get(LOEHLE_STAT_EVENT_DROPS), 4u);
  history.Begin(2, Settings{});
  history.Begin(3, Settings{});
  history.Fold(*history.Retired(1));
  EXPECT_EQ(history.Retired(1), nullptr);
  // A generation folded (or never kept) is not retired again, nor folded twice.
  history.Retire(Counted(1, 4, {}));
  EXPECT_EQ(history.Retired(1), nullptr);
  history.Fold(Counted(1, 4, {}));
  EXPECT_EQ(history.older().count, 1u);
}

TEST(GenerationHistoryTest, AtLeastOneGenerationIsKept) {
  GenerationHistory history(0);
  EXPECT_EQ(history.keep(), 1u);
  history.Begin(7, Settings{});
  history.Begin(8, Settings{});
  EXPECT_THAT(history.Overflow(), ElementsAre(7u));
}

}  // namespace
}  // namespace loehle
