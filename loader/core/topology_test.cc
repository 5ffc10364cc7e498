#include "loader/core/topology.h"

#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A fake sysfs tree in a fresh temporary directory, removed afterwards.
class FakeSysfs {
 public:
  FakeSysfs() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "loehle_topo_XXXXXX")
            .string();
    root_ = mkdtemp(pattern.data());
  }
  ~FakeSysfs() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  const std::string& root() const { return root_; }

  void Write(const std::string& relative, const std::string& contents) {
    const std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << contents;
  }
  void Cpu(int cpu, const std::string& relative, const std::string& contents) {
    Write(absl::StrCat("devices/system/cpu/cpu", cpu, "/", relative), contents);
  }
  void Cache(int cpu, int index, int level, const std::string& type,
             const std::string& shared) {
    const std::string dir = absl::StrCat("cache/index", index, "/");
    Cpu(cpu, dir + "level", absl::StrCat(level, "\n"));
    Cpu(cpu, dir + "type", type + "\n");
    Cpu(cpu, dir + "shared_cpu_list", shared + "\n");
  }
  void IdleStates(int cpu, const std::vector<int>& latencies_us) {
    for (size_t k = 0; k < latencies_us.size(); ++k) {
      Cpu(cpu, absl::StrCat("cpuidle/state", k, "/latency"),
          absl::StrCat(latencies_us[k], "\n"));
    }
  }

 private:
  std::string root_;
};

// 8 CPUs, SMT pairs 0-1, 2-3, ..., L3 0-3 and 4-7, nodes 0 (0-3) and
// 1 (4-7), idle states C0/C1/C6.
void BuildArmStyleMachine(FakeSysfs& fs) {
  fs.Write("devices/system/cpu/possible", "0-7\n");
  fs.Write("devices/system/cpu/online", "0-7\n");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const int first = cpu & ~1;
    fs.Cpu(cpu, "topology/thread_siblings_list",
           absl::StrCat(first, "-", first + 1, "\n"));
    fs.Cache(cpu, 0, 1, "Data", absl::StrCat(first, "-", first + 1));
    fs.Cache(cpu, 1, 1, "Instruction", absl::StrCat(first, "-", first + 1));
    fs.Cache(cpu, 2, 2, "Unified", absl::StrCat(first, "-", first + 1));
    fs.Cache(cpu, 3, 3, "Unified", cpu < 4 ? "0-3" : "4-7");
    fs.IdleStates(cpu, {0, 2, 100});
  }
  fs.Write("devices/system/node/node0/cpulist", "0-3\n");
  fs.Write("devices/system/node/node1/cpulist", "4-7\n");
  fs.Write("devices/system/node/possible", "0-1\n");  // not a node dir
}

TEST(ParseCpuListTest, AcceptsKernelFormats) {
  EXPECT_THAT(*ParseCpuList("0-7\n"), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(*ParseCpuList("0,2-5"), ElementsAre(0, 2, 3, 4, 5));
  EXPECT_THAT(*ParseCpuList("5"), ElementsAre(5));
  EXPECT_THAT(*ParseCpuList("3,1,1-2"), ElementsAre(1, 2, 3));
  EXPECT_THAT(*ParseCpuList(""), IsEmpty());
  EXPECT_THAT(*ParseCpuList(" \n"), IsEmpty());
}

TEST(ParseCpuListTest, RejectsMalformedLists) {
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1 2", "+1", "1-2-3",
                          "0-100000", "1,"}) {
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(bad);
    EXPECT_FALSE(cpus.ok()) << bad;
    EXPECT_THAT(cpus.status().message(), HasSubstr("bad cpulist")) << bad;
  }
}

TEST(ReadTopologyTest, SmtPairsTwoNodesTwoLlcs) {
  FakeSysfs fs;
  BuildArmStyleMachine(fs);
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  ASSERT_EQ(topo->cpus.size(), 8u);
  for (int cpu = 0; cpu < 8; ++cpu) {
    const CpuTopology& c = topo->cpus[cpu];
    EXPECT_EQ(c.cpu, cpu);
    EXPECT_EQ(c.core, cpu & ~1) << cpu;
    EXPECT_EQ(c.llc, cpu < 4 ? 0 : 1) << cpu;
    EXPECT_EQ(c.node, cpu < 4 ? 0 : 1) << cpu;
    EXPECT_TRUE(c.online);
    EXPECT_THAT(topo->exit_latency_ns[cpu], ElementsAre(0, 2000, 100000));
  }
  EXPECT_EQ(topo->nr_llcs, 2);
  EXPECT_EQ(topo->nr_nodes, 2);
  EXPECT_TRUE(topo->smt_active);
  EXPECT_EQ(topo->latency_source, "sysfs");
  EXPECT_EQ(DescribeTopology(*topo),
            "8 CPUs, 4 cores (SMT on), 2 LLCs, 2 nodes, exit latencies from "
            "sysfs");
}

TEST(ReadTopologyTest, InterleavedSiblingsAndCoreCpusListFallback) {
  // x86 numbering: CPU n and n+4 are threads of one core. CPUs 0-3 only
  // have core_cpus_list. One L3 for all. Node numbers are sparse (0 and 2)
  // and a memory-only node 1 exists.
  FakeSysfs fs;
  fs.Write("devices/system/cpu/possible", "0-7\n");
  fs.Write("devices/system/cpu/online", "0-7\n");
  for (int cpu = 0; cpu < 8; ++cpu) {
    const std::string siblings = absl::StrCat(cpu % 4, ",", cpu % 4 + 4, "\n");
    fs.Cpu(
        cpu,
        cpu < 4 ? "topology/core_cpus_list" : "topology/thread_siblings_list",
        siblings);
    fs.Cache(cpu, 0, 1, "Data", siblings);
    fs.Cache(cpu, 1, 3, "Unified", "0-7");
  }
  fs.Write("devices/system/node/node0/cpulist", "0-1,4-5\n");
  fs.Write("devices/system/node/node1/cpulist", "\n");
  fs.Write("devices/system/node/node2/cpulist", "2-3,6-7\n");
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(topo->cpus[cpu].core, cpu % 4) << cpu;
    EXPECT_EQ(topo->cpus[cpu].llc, 0) << cpu;
    EXPECT_EQ(topo->cpus[cpu].node, cpu % 4 < 2 ? 0 : 1) << cpu;
    EXPECT_THAT(topo->exit_latency_ns[cpu], IsEmpty());
  }
  EXPECT_EQ(topo->nr_llcs, 1);
  EXPECT_EQ(topo->nr_nodes, 2);
  EXPECT_TRUE(topo->smt_active);
  EXPECT_EQ(topo->latency_source, "none");
  EXPECT_EQ(DescribeTopology(*topo),
            "8 CPUs, 4 cores (SMT on), 1 LLC, 2 nodes, no exit latencies");
}

TEST(ReadTopologyTest, NoCacheNoNodeNoTopologyDirs) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/possible", "0-3\n");
  fs.Write("devices/system/cpu/online", "0-3\n");
  for (int cpu = 0; cpu < 4; ++cpu) fs.Cpu(cpu, "uevent", "");
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  for (int cpu = 0; cpu < 4; ++cpu) {
    EXPECT_EQ(topo->cpus[cpu].core, cpu);
    EXPECT_EQ(topo->cpus[cpu].llc, 0);
    EXPECT_EQ(topo->cpus[cpu].node, 0);
  }
  EXPECT_EQ(topo->nr_llcs, 1);
  EXPECT_EQ(topo->nr_nodes, 1);
  EXPECT_FALSE(topo->smt_active);
  EXPECT_EQ(DescribeTopology(*topo),
            "4 CPUs, 4 cores (SMT off), 1 LLC, 1 node, no exit latencies");
}

TEST(ReadTopologyTest, NoCacheInfoGivesOneLlcPerNode) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/possible", "0-3\n");
  fs.Write("devices/system/node/node0/cpulist", "0,2\n");
  fs.Write("devices/system/node/node1/cpulist", "1,3\n");
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->nr_llcs, 2);
  EXPECT_EQ(topo->nr_nodes, 2);
  for (int cpu = 0; cpu < 4; ++cpu) {
    EXPECT_TRUE(topo->cpus[cpu].online) << "no online file: all online";
    EXPECT_EQ(topo->cpus[cpu].node, cpu % 2);
    EXPECT_EQ(topo->cpus[cpu].llc, cpu % 2);
  }
}

TEST(ReadTopologyTest, OfflineCpuWithoutTopology) {
  FakeSysfs fs;
  BuildArmStyleMachine(fs);
  fs.Write("devices/system/cpu/online", "0-2,4-7\n");
  std::filesystem::remove_all(std::filesystem::path(fs.root()) /
                              "devices/system/cpu/cpu3");
  fs.Write("devices/system/node/node0/cpulist", "0-2\n");
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  const CpuTopology& offline = topo->cpus[3];
  EXPECT_FALSE(offline.online);
  EXPECT_EQ(offline.core, 3);
  EXPECT_EQ(offline.llc, 0);
  EXPECT_EQ(offline.node, 0);
  EXPECT_THAT(topo->exit_latency_ns[3], IsEmpty());
  EXPECT_EQ(topo->cpus[2].core, 2);
  EXPECT_EQ(topo->nr_llcs, 2);
  EXPECT_TRUE(topo->smt_active);
  EXPECT_EQ(DescribeTopology(*topo),
            "7 CPUs (1 offline), 4 cores (SMT on), 2 LLCs, 2 nodes, exit "
            "latencies from sysfs");
}

TEST(ReadTopologyTest, SmtInactiveWhenSiblingsOffline) {
  FakeSysfs fs;
  BuildArmStyleMachine(fs);
  fs.Write("devices/system/cpu/online", "0,2,4,6\n");
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_FALSE(topo->smt_active);
}

TEST(ReadTopologyTest, SparsePossibleAndIdleStateLimit) {
  FakeSysfs fs;
  fs.Write("devices/system/cpu/possible", "0,2-3\n");
  fs.Write("devices/system/cpu/online", "0,2\n");
  fs.IdleStates(0, std::vector<int>(LOEHLE_MAX_IDLE_STATES + 2, 1));
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  EXPECT_EQ(topo->cpus.size(), 4u);
  EXPECT_FALSE(topo->cpus[1].online);
  EXPECT_EQ(topo->exit_latency_ns[0].size(),
            static_cast<size_t>(LOEHLE_MAX_IDLE_STATES));
}

TEST(ReadTopologyTest, Errors) {
  {
    FakeSysfs fs;
    absl::StatusOr<Topology> topo = ReadTopology(fs.root());
    EXPECT_TRUE(absl::IsNotFound(topo.status()));
    EXPECT_THAT(topo.status().message(),
                HasSubstr("devices/system/cpu/possible"));
  }
  {
    FakeSysfs fs;
    fs.Write("devices/system/cpu/possible",
             absl::StrCat("0-", LOEHLE_MAX_CPUS, "\n"));
    EXPECT_THAT(ReadTopology(fs.root()).status().message(),
                HasSubstr("exceed scx_loehle's limit of 512"));
  }
  {
    FakeSysfs fs;
    fs.Write("devices/system/cpu/possible", "0-x\n");
    EXPECT_THAT(ReadTopology(fs.root()).status().message(),
                HasSubstr("possible: bad cpulist"));
  }
  {
    FakeSysfs fs;
    fs.Write("devices/system/cpu/possible", "0-1\n");
    fs.Cpu(1, "cpuidle/state0/latency", "fast\n");
    EXPECT_THAT(ReadTopology(fs.root()).status().message(),
                HasSubstr("state0/latency: expected a number"));
  }
  {
    FakeSysfs fs;
    fs.Write("devices/system/cpu/possible",
             absl::StrCat("0-", LOEHLE_MAX_NODES, "\n"));
    for (int node = 0; node <= LOEHLE_MAX_NODES; ++node) {
      fs.Write(absl::StrCat("devices/system/node/node", node, "/cpulist"),
               absl::StrCat(node, "\n"));
    }
    EXPECT_THAT(ReadTopology(fs.root()).status().message(),
                HasSubstr("NUMA nodes exceed"));
  }
  {
    FakeSysfs fs;
    fs.Write("devices/system/cpu/possible",
             absl::StrCat("0-", LOEHLE_MAX_LLCS, "\n"));
    for (int cpu = 0; cpu <= LOEHLE_MAX_LLCS; ++cpu) {
      fs.Cache(cpu, 0, 3, "Unified", absl::StrCat(cpu));
    }
    EXPECT_THAT(ReadTopology(fs.root()).status().message(),
                HasSubstr("LLCs exceed"));
  }
}

class IdleLatencyFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuildArmStyleMachine(fs_);
    absl::StatusOr<Topology> topo = ReadTopology(fs_.root());
    ASSERT_TRUE(topo.ok()) << topo.status();
    topo_ = *topo;
    path_ = fs_.root() + "/latencies";
  }
  absl::Status Apply(const std::string& contents) {
    fs_.Write("latencies", contents);
    return ApplyIdleLatencyFile(path_, &topo_);
  }

  FakeSysfs fs_;
  Topology topo_;
  std::string path_;
};

TEST_F(IdleLatencyFileTest, OverridesAndReplacesSysfs) {
  ASSERT_TRUE(Apply("# shallow C1 on CPU 2\n"
                    "\n"
                    "*\t0=0 1=100   # everyone\n"
                    "2 1=10\n"
                    "4-5,7 0=1 1=2 2=3\n")
                  .ok());
  EXPECT_EQ(topo_.latency_source, "file:" + path_);
  EXPECT_THAT(topo_.exit_latency_ns[0], ElementsAre(0, 100000));
  EXPECT_THAT(topo_.exit_latency_ns[2], ElementsAre(0, 10000));
  EXPECT_THAT(topo_.exit_latency_ns[4], ElementsAre(1000, 2000, 3000));
  EXPECT_THAT(topo_.exit_latency_ns[6], ElementsAre(0, 100000));
  EXPECT_THAT(topo_.exit_latency_ns[7], ElementsAre(1000, 2000, 3000));
  EXPECT_EQ(DescribeTopology(topo_),
            "8 CPUs, 4 cores (SMT on), 2 LLCs, 2 nodes, exit latencies from " +
                path_);
}

TEST_F(IdleLatencyFileTest, UnmentionedCpusHaveNoLatencies) {
  ASSERT_TRUE(Apply("0-1 0=5\r\n").ok());
  EXPECT_THAT(topo_.exit_latency_ns[0], ElementsAre(5000));
  EXPECT_THAT(topo_.exit_latency_ns[2], IsEmpty());
  ASSERT_TRUE(Apply("").ok());
  EXPECT_THAT(topo_.exit_latency_ns[0], IsEmpty());
}

TEST_F(IdleLatencyFileTest, ErrorsCarryPathAndLine) {
  const Topology before = topo_;
  const auto expect_error = [&](const std::string& contents,
                                const std::string& message) {
    absl::Status status = Apply(contents);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << contents;
    EXPECT_EQ(status.message(), message) << contents;
    EXPECT_EQ(topo_.latency_source, "sysfs") << "unchanged on error";
    EXPECT_EQ(topo_.exit_latency_ns, before.exit_latency_ns);
  };
  expect_error("* 0=0\n0-x 1=1\n", path_ + ":2: bad cpulist \"0-x\"");
  expect_error("# c\n9 0=1\n",
               path_ + ":2: cpu 9 is beyond the 8 possible CPUs");
  expect_error("* 10=1\n", path_ + ":1: state 10 is not below 10");
  expect_error("* 0=1 1=fast\n",
               path_ + ":1: bad latency \"fast\" (microseconds)");
  expect_error("* 0=-1\n", path_ + ":1: bad latency \"-1\" (microseconds)");
  expect_error(
      "* 0=99999999999999999999\n",
      path_ + ":1: bad latency \"99999999999999999999\" (microseconds)");
  expect_error("* x=1\n", path_ + ":1: bad state number \"x\"");
  expect_error("* 0\n", path_ + ":1: expected <state>=<latency_us>, got \"0\"");
  expect_error("\n\n3-4\n",
               path_ + ":3: expected <state>=<latency_us> after \"3-4\"");
  expect_error("* 0=0\n2 2=5\n", path_ + ": cpu 2 has state 2 but not state 1");
}

TEST_F(IdleLatencyFileTest, MissingFile) {
  absl::Status status = ApplyIdleLatencyFile(path_ + ".missing", &topo_);
  EXPECT_TRUE(absl::IsNotFound(status));
  EXPECT_EQ(status.message(),
            "cannot read " + path_ + ".missing: No such file or directory");
}

// The hotplug sequence is read with the topology (0 without sched_ext).
TEST(ReadTopologyTest, HotplugSequence) {
  FakeSysfs fs;
  BuildArmStyleMachine(fs);
  absl::StatusOr<Topology> none = ReadTopology(fs.root());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->hotplug_seq, 0u);
  fs.Write("kernel/sched_ext/hotplug_seq", "17\n");
  absl::StatusOr<Topology> seq = ReadTopology(fs.root());
  ASSERT_TRUE(seq.ok()) << seq.status();
  EXPECT_EQ(seq->hotplug_seq, 17u);
  fs.Write("kernel/sched_ext/hotplug_seq", "many\n");
  EXPECT_FALSE(ReadTopology(fs.root()).ok());
}

// Interleaved LLCs and nodes: every CPU once per list, grouped, ascending.
TEST(BuildCpuListsTest, GroupsAscendingWithPositions) {
  Topology topo;
  // CPU i: LLC i % 3, node i % 2; 7 CPUs.
  for (int cpu = 0; cpu < 7; ++cpu) {
    CpuTopology entry;
    entry.cpu = cpu;
    entry.core = cpu;
    entry.llc = cpu % 3;
    entry.node = cpu % 2;
    entry.online = cpu != 5;  // offline CPUs are listed too
    topo.cpus.push_back(entry);
  }
  topo.nr_llcs = 3;
  topo.nr_nodes = 2;
  loehle_cpu_lists lists = BuildCpuLists(topo);
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_cpus, lists.llc_cpus + 7),
              ElementsAre(0, 3, 6, 1, 4, 2, 5));
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_start, lists.llc_start + 3),
              ElementsAre(0, 3, 5));
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_len, lists.llc_len + 3),
              ElementsAre(3, 2, 2));
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_pos, lists.llc_pos + 7),
              ElementsAre(0, 0, 0, 1, 1, 1, 2));
  EXPECT_THAT(std::vector<uint32_t>(lists.node_cpus, lists.node_cpus + 7),
              ElementsAre(0, 2, 4, 6, 1, 3, 5));
  EXPECT_THAT(std::vector<uint32_t>(lists.node_start, lists.node_start + 2),
              ElementsAre(0, 4));
  EXPECT_THAT(std::vector<uint32_t>(lists.node_len, lists.node_len + 2),
              ElementsAre(4, 3));
  // Past the CPUs and groups: zero.
  EXPECT_EQ(lists.llc_cpus[7], 0u);
  EXPECT_EQ(lists.llc_len[3], 0u);
  EXPECT_EQ(lists.node_len[2], 0u);
}

// The VM tier's machine read from sysfs: LLCs 0-3 and 4-7.
TEST(BuildCpuListsTest, FromSysfs) {
  FakeSysfs fs;
  BuildArmStyleMachine(fs);
  absl::StatusOr<Topology> topo = ReadTopology(fs.root());
  ASSERT_TRUE(topo.ok()) << topo.status();
  loehle_cpu_lists lists = BuildCpuLists(*topo);
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_cpus, lists.llc_cpus + 8),
              ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(std::vector<uint32_t>(lists.llc_len, lists.llc_len + 2),
              ElementsAre(4, 4));
  EXPECT_EQ(lists.llc_pos[6], 2u);
  EXPECT_EQ(lists.node_start[1], 4u);
}

TEST(FollowOnlineCpusTest, ReportsOnlyChangesAndKeepsTheRest) {
  Topology topo;
  for (int cpu = 0; cpu < 4; ++cpu) {
    topo.cpus.push_back({cpu, cpu & ~1, cpu / 2, 0, cpu != 2});
  }
  topo.smt_active = true;
  // CPU 1 goes, CPU 2 comes back; CPU 3 lies past the vector: offline.
  const std::vector<OnlineChange> changes =
      FollowOnlineCpus({true, false, true}, &topo);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].cpu, 1);
  EXPECT_FALSE(changes[0].online);
  EXPECT_EQ(changes[1].cpu, 2);
  EXPECT_TRUE(changes[1].online);
  EXPECT_EQ(changes[2].cpu, 3);
  EXPECT_FALSE(changes[2].online);
  EXPECT_FALSE(topo.cpus[1].online);
  EXPECT_TRUE(topo.cpus[2].online);
  EXPECT_EQ(topo.cpus[2].llc, 1);  // placement untouched
  EXPECT_TRUE(topo.smt_active);    // as loaded
  EXPECT_TRUE(FollowOnlineCpus({true, false, true}, &topo).empty());
}

}  // namespace
}  // namespace loehle
