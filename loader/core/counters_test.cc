#include "loader/core/counters.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

TEST(CountersTest, StatNamesAreUniqueAndFollowTheEnum) {
  EXPECT_EQ(StatName(SelectStat(LOEHLE_PATH_FORK)), "select_fork");
  EXPECT_EQ(StatName(SelectStat(LOEHLE_PATH_WAKEUP)), "select_wakeup");
  EXPECT_EQ(StatName(SelectStat(LOEHLE_PATH_SYNC)), "select_sync");
  EXPECT_EQ(StatName(PickStat(LOEHLE_REASON_PREV_IDLE)), "pick_prev_idle");
  EXPECT_EQ(StatName(PickStat(LOEHLE_REASON_CLAIM_GAVE_UP)),
            "pick_claim_gave_up");
  EXPECT_EQ(StatName(TieHistStat(0)), "tie_hist_1");
  EXPECT_EQ(StatName(TieHistStat(1)), "tie_hist_2_3");
  EXPECT_EQ(StatName(TieHistStat(2)), "tie_hist_4_7");
  for (uint32_t bucket = 1; bucket + 1 < LOEHLE_TIE_BUCKETS; ++bucket) {
    const uint64_t lo = uint64_t{1} << bucket;
    EXPECT_EQ(
        StatName(TieHistStat(bucket)),
        "tie_hist_" + std::to_string(lo) + "_" + std::to_string(2 * lo - 1));
  }
  // The last bucket is open-ended (512+ with 10 buckets).
  EXPECT_EQ(StatName(TieHistStat(LOEHLE_TIE_BUCKETS - 1)),
            "tie_hist_" +
                std::to_string(uint64_t{1} << (LOEHLE_TIE_BUCKETS - 1)) +
                "_up");
  EXPECT_EQ(StatName(LOEHLE_STAT_CANDIDATES), "candidates");
  EXPECT_EQ(StatName(LOEHLE_STAT_UNPUBLISHED_SEEN), "unpublished_seen");
  EXPECT_EQ(StatName(LOEHLE_STAT_EXAMINED), "examined");
  EXPECT_EQ(StatName(LOEHLE_STAT_SMT_PRUNED), "smt_pruned");
  EXPECT_EQ(StatName(LOEHLE_STAT_CLAIM_ATTEMPTS), "claim_attempts");
  EXPECT_EQ(StatName(LOEHLE_STAT_CLAIM_FAILURES), "claim_failures");
  EXPECT_EQ(StatName(LOEHLE_STAT_CLAIM_RETRIES), "claim_retries");
  EXPECT_EQ(StatName(LOEHLE_STAT_DIRECT_DISPATCH), "direct_dispatch");
  EXPECT_EQ(StatName(LOEHLE_STAT_SCHED_IDLE_PREEMPT), "sched_idle_preempt");
  EXPECT_EQ(StatName(LOEHLE_STAT_PACKING), "packing");
  EXPECT_EQ(StatName(LOEHLE_STAT_BUSY_SIBLING_PICK), "busy_sibling_pick");
  EXPECT_EQ(StatName(LOEHLE_STAT_ENQUEUE), "enqueue");
  EXPECT_EQ(StatName(LOEHLE_STAT_DISPATCH_LOCAL_LLC), "dispatch_local_llc");
  EXPECT_EQ(StatName(LOEHLE_STAT_DISPATCH_REMOTE_LLC), "dispatch_remote_llc");
  EXPECT_EQ(StatName(LOEHLE_STAT_KICK), "kick");
  EXPECT_EQ(StatName(LOEHLE_STAT_EVENTS), "events");
  EXPECT_EQ(StatName(LOEHLE_STAT_EVENT_DROPS), "event_drops");
  EXPECT_EQ(StatName(LOEHLE_NR_STATS),
            "stat_" + std::to_string(LOEHLE_NR_STATS));

  std::set<std::string> names;
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    const std::string name = StatName(i);
    EXPECT_EQ(name.find("unknown"), std::string::npos) << i;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(LOEHLE_NR_STATS));
}

TEST(CountersTest, EveryCounterHasADescriptionAndAUnit) {
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
    const CounterInfo info = CounterInfoFor(i);
    EXPECT_EQ(info.name, StatName(i));
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_EQ(info.description.find('\n'), std::string::npos) << info.name;
    EXPECT_FALSE(info.unit.empty()) << info.name;
    EXPECT_EQ(info.kind, StatKind::kCounter) << info.name;
    EXPECT_TRUE(info.per_generation) << info.name;
  }
}

// Documentation/stats.md names every counter in a table row ("| `name` |")
// or, for the tie histogram, in its paragraph; and names no other.
TEST(CountersTest, TheDocumentationListsExactlyTheseCounters) {
  std::ifstream in(std::string(LOEHLE_SOURCE_DIR) + "/Documentation/stats.md");
  ASSERT_TRUE(in) << "cannot read Documentation/stats.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t from = doc.find("\n## Counters");
  ASSERT_NE(from, std::string::npos);
  const size_t to = doc.find("\n## ", from + 1);
  const std::string section = doc.substr(from, to - from);

  std::set<std::string> documented;
  const std::regex row(R"(\n\| `([a-z0-9_]+)` \|)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row);
       it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  const std::regex tie(R"(`(tie_hist_[a-z0-9_]+)`)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), tie);
       it != std::sregex_iterator(); ++it) {
    documented.insert((*it)[1]);
  }
  std::set<std::string> defined;
  for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) defined.insert(StatName(i));
  EXPECT_EQ(documented, defined);
}

}  // namespace
}  // namespace loehle
