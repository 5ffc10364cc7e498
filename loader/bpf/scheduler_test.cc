// Host tests of what the skeleton owner decides without a kernel; attaching
// itself is the VM tier's job.
#include "loader/bpf/scheduler.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loehle {
namespace {

using ::testing::HasSubstr;

TEST(ExitRecordTest, DescribesKindReasonMessageAndRestart) {
  ExitRecord stall{1026, 0, "watchdog", "task stalled for 30s", ""};
  EXPECT_EQ(stall.Describe(),
            "runnable task stall (watchdog): task stalled for 30s");
  EXPECT_FALSE(stall.WantsRestart());
  ExitRecord hotplug{66, static_cast<int64_t>(kExitActionRestart | (1ULL << 32)),
                     "hotplug", "", ""};
  EXPECT_TRUE(hotplug.WantsRestart());
  EXPECT_THAT(hotplug.Describe(), HasSubstr("restart"));
}

TEST(KfuncVariants, NewOrOldPerPair) {
  EXPECT_THAT(KfuncVariantNames(0),
              ::testing::ElementsAre("scx_bpf_dsq_insert", "scx_bpf_dsq_insert_vtime",
                                     "scx_bpf_dsq_move_to_local",
                                     "scx_bpf_reenqueue_local",
                                     "p->scx.dsq_vtime store"));
  EXPECT_THAT(KfuncVariantNames(LOEHLE_COMPAT_INSERT_V2 |
                                LOEHLE_COMPAT_INSERT_VTIME_ARGS |
                                LOEHLE_COMPAT_MOVE_TO_LOCAL_V2 |
                                LOEHLE_COMPAT_REENQUEUE_V2 |
                                LOEHLE_COMPAT_SET_VTIME),
              ::testing::ElementsAre("scx_bpf_dsq_insert___v2",
                                     "__scx_bpf_dsq_insert_vtime",
                                     "scx_bpf_dsq_move_to_local___v2",
                                     "scx_bpf_reenqueue_local___v2",
                                     "scx_bpf_task_set_dsq_vtime"));
  EXPECT_EQ(KfuncVariantNames(LOEHLE_COMPAT_REENQUEUE_V2)[3],
            "scx_bpf_reenqueue_local___v2");
}

TEST(IdleStateTracking, OnlyWithExitLatenciesAndOurPolicy) {
  Settings settings;
  settings.policy = LOEHLE_POLICY_RESERVOIR;
  EXPECT_TRUE(WantsIdleStateTracking(true, settings));
  EXPECT_FALSE(WantsIdleStateTracking(false, settings));
  settings.policy = LOEHLE_POLICY_FIRST;
  EXPECT_TRUE(WantsIdleStateTracking(true, settings));
  settings.policy = LOEHLE_POLICY_RECENCY;
  EXPECT_TRUE(WantsIdleStateTracking(true, settings));
  settings.policy = LOEHLE_POLICY_BUILTIN;
  EXPECT_FALSE(WantsIdleStateTracking(true, settings));
}

TEST(IdleStateTracking, AnyCpuWithATableCounts) {
  Topology topo;
  topo.exit_latency_ns = {{}, {}};
  EXPECT_FALSE(HasExitLatencies(topo));
  topo.exit_latency_ns[1] = {0};
  EXPECT_TRUE(HasExitLatencies(topo));
  topo.exit_latency_ns.clear();
  EXPECT_FALSE(HasExitLatencies(topo));
}

}  // namespace
}  // namespace loehle
