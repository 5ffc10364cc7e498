#include "loader/sim/sim_topology.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace loehle::sim {
namespace {

using ::testing::HasSubstr;

TEST(SimTopologyTest, EveryPresetParses) {
  for (const std::string& name : SimTopologyPresets()) {
    absl::StatusOr<SimTopology> topo = LoadSimTopology(name);
    ASSERT_TRUE(topo.ok()) << name << ": " << topo.status();
    EXPECT_EQ(topo->name, name);
    EXPECT_EQ(topo->source, "preset");
  }
}

TEST(SimTopologyTest, PresetsHaveTheIssuesShapes) {
  absl::StatusOr<SimTopology> altra = LoadSimTopology("altra-160");
  ASSERT_TRUE(altra.ok());
  EXPECT_EQ(altra->cpus.size(), 160u);
  EXPECT_EQ(altra->nr_nodes, 2);
  EXPECT_EQ(altra->threads_per_core, 1);
  absl::StatusOr<SimTopology> vera = LoadSimTopology("vera-352");
  ASSERT_TRUE(vera.ok());
  EXPECT_EQ(vera->cpus.size(), 352u);
  // Seed 002's Vera: CPUs 0 and 176 are one core (nohz_full=1-175,177-351).
  EXPECT_EQ(vera->cpus[0].core, vera->cpus[176].core);
  absl::StatusOr<SimTopology> epyc = LoadSimTopology("epyc-256");
  ASSERT_TRUE(epyc.ok());
  EXPECT_EQ(epyc->nr_llcs, 16);
  EXPECT_EQ(epyc->cpus[8].llc, 1);  // 8-core LLCs
  absl::StatusOr<SimTopology> vm = LoadSimTopology("vm-8");
  ASSERT_TRUE(vm.ok());
  ASSERT_EQ(vm->states.size(), 1u);  // what the bench's guest publishes
  EXPECT_EQ(vm->cpus[1].core, vm->cpus[0].core);  // siblings adjacent, as QEMU
}

TEST(SimTopologyTest, NumberingPlacesSiblings) {
  absl::StatusOr<SimTopology> thread_major = ParseSimTopology(
      "nodes 1\nllcs-per-node 1\ncores-per-llc 4\nthreads-per-core 2\n"
      "numbering thread-major\n",
      "t");
  ASSERT_TRUE(thread_major.ok()) << thread_major.status();
  EXPECT_EQ(thread_major->cpus[0].core, thread_major->cpus[4].core);
  EXPECT_NE(thread_major->cpus[0].core, thread_major->cpus[1].core);
}

TEST(SimTopologyTest, StatesAreReadInMicroseconds) {
  absl::StatusOr<SimTopology> topo = ParseSimTopology(
      "nodes 1 # one\nllcs-per-node 1\ncores-per-llc 2\nstate C1 2 4\n\nstate C6 100 500\n", "t");
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->states.size(), 2u);
  EXPECT_EQ(topo->states[1].name, "C6");
  EXPECT_EQ(topo->states[1].exit_latency_ns, 100'000u);
  EXPECT_EQ(topo->states[1].target_residency_ns, 500'000u);
}

TEST(SimTopologyTest, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"nodes 1\nllcs-per-node 1\ncores 4\n", "t:3: unknown key \"cores\""},
      {"nodes x\n", "t:1: nodes must be a count"},
      {"nodes 1\nnodes 2\n", "t:2: nodes given twice"},
      {"nodes 1\nllcs-per-node 1\ncores-per-llc 2\nstate C6 100 500\nstate C1 2 2\n",
       "t:5: states must be listed shallowest first"},
      {"nodes 1\nstate C1 2\n", "t:2: state takes a name"},
      {"nodes 1\nnumbering diagonal\n", "t:2: numbering is core-major or thread-major"},
      {"nodes 1\nllcs-per-node 1\n", "t: cores-per-llc is missing"},
      {"nodes 2\nllcs-per-node 1\ncores-per-llc 512\n", "at most 512 CPUs"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SimTopology> topo = ParseSimTopology(c.text, "t");
    ASSERT_FALSE(topo.ok()) << c.text;
    EXPECT_THAT(std::string(topo.status().message()), HasSubstr(c.message)) << c.text;
  }
}

TEST(SimTopologyTest, UnknownSpecNamesThePresets) {
  absl::StatusOr<SimTopology> topo = LoadSimTopology("/nonexistent/topo");
  ASSERT_FALSE(topo.ok());
  EXPECT_THAT(std::string(topo.status().message()), HasSubstr("altra-160"));
}

}  // namespace
}  // namespace loehle::sim
