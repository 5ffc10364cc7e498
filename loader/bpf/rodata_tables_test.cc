#include "loader/bpf/rodata_tables.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/core/topology.h"
#include "loehle/intf.h"
#include "loehle/policy.h"

namespace loehle {
namespace {

// CPUs 0-5: cores {0,1}, {2,3}, {4}, {5} (5 offline), LLCs {0-3}, {4,5}.
Topology SixCpus() {
  Topology t;
  const int core[] = {0, 0, 2, 2, 4, 5};
  for (int cpu = 0; cpu < 6; ++cpu) {
    CpuTopology c;
    c.cpu = cpu;
    c.core = core[cpu];
    c.llc = cpu < 4 ? 0 : 1;
    c.node = 0;
    c.online = cpu != 5;
    t.cpus.push_back(c);
  }
  t.nr_llcs = 2;
  t.nr_nodes = 1;
  t.smt_active = true;
  t.exit_latency_ns.resize(6);
  t.exit_latency_ns[0] = {0, 10000};
  t.exit_latency_ns[1] = {0, 10000, 200000};
  return t;
}

TEST(RodataTablesTest, SiblingsFormARingPerCore) {
  const RodataTables t = BuildRodataTables(SixCpus());
  EXPECT_EQ(t.topo[0].next_sibling, 1u);
  EXPECT_EQ(t.topo[1].next_sibling, 0u);
  EXPECT_EQ(t.topo[3].next_sibling, 2u);
  EXPECT_EQ(t.topo[4].next_sibling, 4u);  // alone
  EXPECT_EQ(t.topo[3].core, 2u);
  EXPECT_EQ(t.topo[4].llc, 1u);
  EXPECT_EQ(t.topo[5].online, 0u);
  EXPECT_EQ(t.topo[4].online, 1u);
}

TEST(RodataTablesTest, CountsAndListsComeFromTheTopology) {
  const RodataTables t = BuildRodataTables(SixCpus());
  EXPECT_EQ(t.nr_cpus, 6u);
  EXPECT_EQ(t.nr_llcs, 2u);
  EXPECT_EQ(t.nr_nodes, 1u);
  EXPECT_TRUE(t.smt_active);
  const loehle_cpu_lists lists = BuildCpuLists(SixCpus());
  EXPECT_EQ(t.cpu_lists.llc_len[0], lists.llc_len[0]);
  EXPECT_EQ(t.cpu_lists.llc_start[1], lists.llc_start[1]);
}

TEST(RodataTablesTest, AZeroTopologyCountStillGivesOneLlcAndNode) {
  Topology t = SixCpus();
  t.nr_llcs = 0;
  t.nr_nodes = 0;
  const RodataTables tables = BuildRodataTables(t);
  EXPECT_EQ(tables.nr_llcs, 1u);
  EXPECT_EQ(tables.nr_nodes, 1u);
}

TEST(RodataTablesTest, StatesPastATableAreItsDeepestWithoutATableUnknown) {
  const RodataTables t = BuildRodataTables(SixCpus());
  EXPECT_EQ(t.exit_latency_ns[0][0], 0u);
  EXPECT_EQ(t.exit_latency_ns[0][1], 10000u);
  for (int state = 2; state < LOEHLE_MAX_IDLE_STATES; ++state) {
    EXPECT_EQ(t.exit_latency_ns[0][state], 10000u) << state;
    EXPECT_EQ(t.exit_latency_ns[1][state], 200000u) << state;
  }
  // CPUs 2-5 are missing from the table (a partial --idle-latency-file):
  // unknown, the deepest key there is, never the shallowest.
  for (int cpu = 2; cpu < 6; ++cpu) {
    for (int state = 0; state < LOEHLE_MAX_IDLE_STATES; ++state) {
      EXPECT_EQ(t.exit_latency_ns[cpu][state], LOEHLE_U64_MAX) << cpu << " " << state;
    }
  }
}

// The same through the keys policy.h compares: a CPU missing from the table
// that published state 1 loses to every CPU with a known latency.
TEST(RodataTablesTest, ACpuMissingFromThePartialTableIsNeverShallowest) {
  const RodataTables t = BuildRodataTables(SixCpus());
  const uint64_t missing = loehle_exit_latency_key(1, t.exit_latency_ns[3][1]);
  EXPECT_GT(missing, loehle_exit_latency_key(1, t.exit_latency_ns[1][1]));
  EXPECT_EQ(missing, loehle_exit_latency_key(LOEHLE_STATE_UNPUBLISHED, 0));
}

}  // namespace
}  // namespace loehle
