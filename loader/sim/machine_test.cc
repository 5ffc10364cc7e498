#include "loader/sim/machine.h"

#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "loader/sim/experiment.h"
#include "loader/sim/sim_topology.h"
#include "loader/sim/workloads.h"

namespace loehle::sim {
namespace {

SimTopology Flat(int cores, int threads) {
  absl::StatusOr<SimTopology> topo = ParseSimTopology(
      absl::StrCat("nodes 1\nllcs-per-node 1\ncores-per-llc ", cores,
                   "\nthreads-per-core ", threads, "\nstate WFI 1 1\nstate off 50 200\n"),
      "flat");
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *topo;
}

// What a CPU is in a test's setup.
enum class Kind { kBusy, kIdleWork, kShallow, kDeep, kUnpublished };

struct MachineSetup {
  std::vector<Kind> kinds;
  std::vector<uint64_t> stamps;
};

MachineSetup RandomSetup(std::mt19937* rng, int cpus) {
  MachineSetup s;
  std::uniform_int_distribution<int> kind(0, 4);
  std::uniform_int_distribution<uint64_t> stamp(1, 1000);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    s.kinds.push_back(static_cast<Kind>(kind(*rng)));
    s.stamps.push_back(stamp(*rng));
  }
  return s;
}

void Apply(const MachineSetup& s, Machine* m) {
  for (int cpu = 0; cpu < static_cast<int>(s.kinds.size()); ++cpu) {
    switch (s.kinds[cpu]) {
      case Kind::kBusy:
        m->PlaceRunningForTest(cpu, false);
        break;
      case Kind::kIdleWork:
        m->PlaceRunningForTest(cpu, true);
        break;
      case Kind::kShallow:
        m->SetIdleForTest(cpu, s.stamps[cpu], 0);
        break;
      case Kind::kDeep:
        m->SetIdleForTest(cpu, s.stamps[cpu], 1);
        break;
      case Kind::kUnpublished:
        m->SetIdleForTest(cpu, s.stamps[cpu], LOEHLE_STATE_UNPUBLISHED);
        break;
    }
  }
}

// The facts a CPU set up as `kind` must show, straight from the setup.
// `want_load`: the scan asked for busy CPUs' loads.
void ExpectFacts(const MachineSetup& s, const SimTopology& topo, const loehle_cpu_facts& f,
                 bool want_load) {
  auto idle = [&](int cpu) {
    const Kind k = s.kinds[cpu];
    return k == Kind::kShallow || k == Kind::kDeep || k == Kind::kUnpublished;
  };
  const Kind kind = s.kinds[f.cpu];
  EXPECT_EQ(f.idle, idle(f.cpu)) << "cpu " << f.cpu;
  EXPECT_EQ(f.sched_idle, kind == Kind::kIdleWork) << "cpu " << f.cpu;
  EXPECT_EQ(f.core, static_cast<uint32_t>(topo.cpus[f.cpu].core));
  bool core_idle = true;
  for (int cpu = 0; cpu < static_cast<int>(topo.cpus.size()); ++cpu) {
    if (topo.cpus[cpu].core == topo.cpus[f.cpu].core && !idle(cpu)) core_idle = false;
  }
  EXPECT_EQ(f.core_idle, core_idle) << "cpu " << f.cpu;
  if (!idle(f.cpu)) {
    // loehle_si_load(): the running task's weight (nice 0: 100; SCHED_IDLE:
    // 1), read for idle work always and for normal work when asked.
    const uint64_t load = kind == Kind::kIdleWork ? 1 : (want_load ? 100 : 0);
    EXPECT_EQ(f.load, load) << "cpu " << f.cpu;
    return;
  }
  EXPECT_EQ(f.idle_stamp, s.stamps[f.cpu]);
  const uint64_t key = kind == Kind::kShallow ? topo.states[0].exit_latency_ns
                       : kind == Kind::kDeep  ? topo.states[1].exit_latency_ns
                                              : LOEHLE_U64_MAX;
  EXPECT_EQ(f.exit_latency, key) << "cpu " << f.cpu;
}

// One group's scan replayed through loehle/policy.h from the record.
struct Replay {
  const MachineSetup& setup;
  const SimTopology& topo;
  const ScanRecord& record;
  uint32_t policy, si_mode;
  bool smt, wakee_idle;
  uint32_t* rand_state;
  size_t offered = 0;

  loehle_choice Group(const std::vector<int>& cpus, int prev) {
    loehle_slow_scan s;
    loehle_slow_init(&s, policy, si_mode, smt, wakee_idle, prev);
    for (int cpu : cpus) {
      if (loehle_slow_pruned(&s, static_cast<uint32_t>(topo.cpus[cpu].core),
                             setup.kinds[cpu] == Kind::kIdleWork)) {
        continue;
      }
      EXPECT_LT(offered, record.facts.size());
      if (offered >= record.facts.size()) break;
      const loehle_cpu_facts& f = record.facts[offered];
      EXPECT_EQ(f.cpu, cpu);
      ExpectFacts(setup, topo, f, loehle_slow_wants_load(&s));
      const uint32_t rand = loehle_slow_wants_rand(&s, &f) ? SimRandomNext(rand_state) : 0;
      EXPECT_EQ(rand, record.draws[offered]);
      ++offered;
      if (loehle_slow_step(&s, &f, rand)) break;
    }
    loehle_choice c;
    loehle_slow_result(&s, &c);
    return c;
  }
};

// The CPUs of `node` in id order, and the node with the most idle CPUs
// (or whole idle cores), straight from the setup.
std::vector<int> NodeCpus(const SimTopology& topo, int node) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < static_cast<int>(topo.cpus.size()); ++cpu) {
    if (topo.cpus[cpu].node == node) cpus.push_back(cpu);
  }
  return cpus;
}

int BusiestNode(const MachineSetup& s, const SimTopology& topo, bool whole_cores) {
  auto idle = [&](int cpu) { return s.kinds[cpu] >= Kind::kShallow; };
  std::vector<int> count(topo.nr_nodes, 0);
  for (int cpu = 0; cpu < static_cast<int>(topo.cpus.size()); ++cpu) {
    bool core_idle = true;
    for (int o = 0; o < static_cast<int>(topo.cpus.size()); ++o) {
      if (topo.cpus[o].core == topo.cpus[cpu].core && !idle(o)) core_idle = false;
    }
    if (idle(cpu) && (!whole_cores || core_idle)) ++count[topo.cpus[cpu].node];
  }
  int best = -1, most = 0;
  for (int n = 0; n < topo.nr_nodes; ++n) {
    if (count[n] > most) most = count[n], best = n;
  }
  return best;
}

SimTopology TwoNodesInterleaved() {
  absl::StatusOr<SimTopology> topo = ParseSimTopology(
      "nodes 2\nllcs-per-node 1\ncores-per-llc 4\nthreads-per-core 2\n"
      "numbering thread-major\nstate WFI 1 1\nstate off 50 200\n",
      "two-nodes");
  EXPECT_TRUE(topo.ok()) << topo.status();
  return *topo;
}

// A simulated slow-path pick equals a direct call of loehle/policy.h with
// the facts the setup implies and the same per-CPU random numbers: one
// node with adjacent siblings, and two nodes with x86-interleaved ones
// (the group search: prev's node, then the busiest other one).
TEST(MachineTest, SlowPickEqualsThePolicyCalledDirectly) {
  std::mt19937 rng(7);
  for (const SimTopology& topo : {Flat(8, 2), TwoNodesInterleaved()}) {
    for (uint32_t policy : {LOEHLE_POLICY_RECENCY, LOEHLE_POLICY_FIRST, LOEHLE_POLICY_RESERVOIR}) {
      for (uint32_t smt : {LOEHLE_SMT_OFF, LOEHLE_SMT_IDLE_CORE}) {
        for (int trial = 0; trial < 100; ++trial) {
          MachineConfig config;
          config.policy = policy;
          config.smt = smt;
          config.sched_idle = trial % 4;
          config.seed = trial;
          Machine m(topo, config);
          const MachineSetup setup = RandomSetup(&rng, static_cast<int>(topo.cpus.size()));
          Apply(setup, &m);
          const int prev = trial % 16;
          const bool wakee_idle = trial % 3 == 0;
          uint32_t rand_state = m.RandomStateForTest(prev);
          ScanRecord record;
          const loehle_choice got = m.ScanForTest(prev, WakePath::kFork, wakee_idle, &record);

          const bool idle_core = smt == LOEHLE_SMT_IDLE_CORE;
          Replay replay{setup, topo, record, policy, config.sched_idle, idle_core, wakee_idle,
                        &rand_state};
          const int home_node = topo.cpus[prev].node;
          loehle_choice want = replay.Group(NodeCpus(topo, home_node), prev);
          const uint32_t search = loehle_slow_look_elsewhere(&want, idle_core);
          const int other = topo.nr_nodes > 1 && search != LOEHLE_GROUP_STAY
                                ? BusiestNode(setup, topo, search == LOEHLE_GROUP_IDLE_CORES)
                                : -1;
          if (other >= 0 && other != home_node) {
            const loehle_choice there = replay.Group(NodeCpus(topo, other), prev);
            if (loehle_slow_other_wins(&want, &there, idle_core)) want = there;
          }
          EXPECT_EQ(replay.offered, record.facts.size());
          EXPECT_EQ(got.cpu, want.cpu) << topo.name << " policy " << policy << " trial " << trial;
          EXPECT_EQ(got.reason, want.reason);
          EXPECT_EQ(got.ties, want.ties);
        }
      }
    }
  }
}

TEST(MachineTest, FastPickEqualsThePolicyCalledDirectly) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const SimTopology topo = Flat(8, 2);
    MachineConfig config;
    config.smt = trial % 2 ? LOEHLE_SMT_IDLE_CORE : LOEHLE_SMT_OFF;
    config.sched_idle = trial % 4;
    Machine m(topo, config);
    const MachineSetup setup = RandomSetup(&rng, 16);
    Apply(setup, &m);
    const int prev = trial % 16;
    const bool wakee_idle = trial % 5 == 0;
    ScanRecord record;
    const loehle_choice got = m.ScanForTest(prev, WakePath::kWakeup, wakee_idle, &record);
    ASSERT_FALSE(record.facts.empty());
    loehle_fast_scan s;
    loehle_choice want;
    const int decided = loehle_fast_begin(&s, config.sched_idle, config.smt == LOEHLE_SMT_IDLE_CORE,
                                          wakee_idle, &record.facts[0]);
    ExpectFacts(setup, topo, record.facts[0], false);
    EXPECT_EQ(record.facts[0].cpu, prev);
    for (size_t k = 1; !decided && k < record.facts.size(); ++k) {
      // In scan order: the CPUs after prev, wrapping.
      EXPECT_EQ(record.facts[k].cpu, static_cast<int>((prev + k) % 16));
      ExpectFacts(setup, topo, record.facts[k], false);
      if (loehle_fast_offer(&s, &record.facts[k])) {
        EXPECT_EQ(k + 1, record.facts.size());
        break;
      }
    }
    loehle_fast_result(&s, &want);
    EXPECT_EQ(got.cpu, want.cpu) << "trial " << trial;
    EXPECT_EQ(got.reason, want.reason);
  }
}

RunSpec ForkSpec(uint32_t policy, uint32_t creators, uint64_t seed) {
  RunSpec spec;
  spec.machine.policy = policy;
  spec.machine.seed = seed;
  spec.workload.kind = "fork";
  spec.workload.size = creators;
  spec.workload.seed = seed;
  spec.sim_ns = 200'000'000;
  return spec;
}

// Seed 000's direction at 160 CPUs: reservoir spreads forks over the
// equally shallow CPUs and collides less; first piles onto the lowest ids.
// Deterministic (fixed seeds): no false-failure rate.
TEST(MachineTest, ReservoirSpreadsForksAt160CpusAndFirstDoesNot) {
  absl::StatusOr<SimTopology> altra = LoadSimTopology("altra-160");
  ASSERT_TRUE(altra.ok());
  absl::StatusOr<RunResult> first = RunOnce(*altra, ForkSpec(LOEHLE_POLICY_FIRST, 32, 1));
  absl::StatusOr<RunResult> recency = RunOnce(*altra, ForkSpec(LOEHLE_POLICY_RECENCY, 32, 1));
  absl::StatusOr<RunResult> reservoir =
      RunOnce(*altra, ForkSpec(LOEHLE_POLICY_RESERVOIR, 32, 1));
  ASSERT_TRUE(first.ok() && recency.ok() && reservoir.ok());
  EXPECT_GT(reservoir->stats.fork.idle_picks, 1000u);
  EXPECT_LT(ForkSpreadCv(reservoir->stats.fork_picks), 0.6 * ForkSpreadCv(first->stats.fork_picks));
  EXPECT_LT(StalePickPercent(reservoir->stats.fork), 0.7 * StalePickPercent(first->stats.fork));
  EXPECT_LT(StalePickPercent(reservoir->stats.fork), 0.7 * StalePickPercent(recency->stats.fork));
  EXPECT_GT(MeanTieGroup(reservoir->stats.fork), 2.0);
}

TEST(MachineTest, SameSeedSameJsonOtherSeedOtherJson) {
  absl::StatusOr<SimTopology> altra = LoadSimTopology("altra-160");
  ASSERT_TRUE(altra.ok());
  RunSpec spec = ForkSpec(LOEHLE_POLICY_RESERVOIR, 16, 3);
  spec.sim_ns = 50'000'000;
  absl::StatusOr<RunResult> a = RunOnce(*altra, spec);
  absl::StatusOr<RunResult> b = RunOnce(*altra, spec);
  spec.machine.seed = spec.workload.seed = 4;
  absl::StatusOr<RunResult> c = RunOnce(*altra, spec);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(ResultsJson(*altra, {*a}).dump(), ResultsJson(*altra, {*b}).dump());
  EXPECT_NE(ResultsJson(*altra, {*a})[0]["fork_picks"], ResultsJson(*altra, {*c})[0]["fork_picks"]);
}

// Seed 003's direction on the Xeon: SCHED_IDLE jobs packed onto sched-idle
// CPUs (mainline) finish later than jobs sent to idle CPUs (wakee-aware).
TEST(MachineTest, WakeeAwareFinishesSchedIdleJobsSoonerThanMainline) {
  absl::StatusOr<SimTopology> xeon = LoadSimTopology("xeon-64");
  ASSERT_TRUE(xeon.ok());
  RunSpec spec;
  spec.workload.kind = "schedidle";
  spec.workload.size = 16;
  spec.sim_ns = 100'000'000'000;
  spec.machine.sched_idle = LOEHLE_SI_MAINLINE;
  absl::StatusOr<RunResult> mainline = RunOnce(*xeon, spec);
  spec.machine.sched_idle = LOEHLE_SI_WAKEE_AWARE;
  absl::StatusOr<RunResult> aware = RunOnce(*xeon, spec);
  ASSERT_TRUE(mainline.ok() && aware.ok());
  ASSERT_GT(mainline->outcome.done_ns, 0u);
  ASSERT_GT(aware->outcome.done_ns, 0u);
  EXPECT_LT(aware->outcome.done_ns, mainline->outcome.done_ns);
  EXPECT_GT(mainline->stats.fork.packing, 0u);
  EXPECT_EQ(aware->stats.fork.packing, 0u);
}

// Seed 002's direction on Vera: one task per core shares cores less under
// idle-core.
TEST(MachineTest, IdleCoreKeepsSiblingsApart) {
  absl::StatusOr<SimTopology> vera = LoadSimTopology("vera-352");
  ASSERT_TRUE(vera.ok());
  RunSpec spec;
  spec.workload.kind = "smt";
  spec.workload.size = 0;
  spec.sim_ns = 100'000'000;
  spec.machine.smt = LOEHLE_SMT_OFF;
  absl::StatusOr<RunResult> off = RunOnce(*vera, spec);
  spec.machine.smt = LOEHLE_SMT_IDLE_CORE;
  absl::StatusOr<RunResult> idle_core = RunOnce(*vera, spec);
  ASSERT_TRUE(off.ok() && idle_core.ok());
  EXPECT_LT(CorunShare(idle_core->stats), 0.5 * CorunShare(off->stats));
}

// Memory follows live tasks, not simulated time: exited tasks' slots are
// reused.
TEST(MachineTest, TaskSlotsFollowLiveTasks) {
  absl::StatusOr<SimTopology> altra = LoadSimTopology("altra-160");
  ASSERT_TRUE(altra.ok());
  RunSpec spec = ForkSpec(LOEHLE_POLICY_RESERVOIR, 8, 1);
  absl::StatusOr<std::unique_ptr<DrivenWorkload>> workload = MakeWorkload(spec.workload, *altra);
  ASSERT_TRUE(workload.ok());
  Machine m(*altra, spec.machine);
  m.Run(**workload, 500'000'000);
  EXPECT_GT((*workload)->outcome().ops, 1000u);
  EXPECT_LE(m.TaskSlots(), 8u * 2 + 1);
}

TEST(LatencyHistogramTest, QuantilesWithinABucket) {
  LatencyHistogram h;
  for (uint64_t ns = 1; ns <= 100000; ++ns) h.Add(ns);
  EXPECT_NEAR(static_cast<double>(h.Quantile(0.5)), 50000.0, 50000.0 / 16);
  EXPECT_NEAR(static_cast<double>(h.Quantile(0.99)), 99000.0, 99000.0 / 16);
  EXPECT_EQ(h.count(), 100000u);
  LatencyHistogram empty;
  EXPECT_EQ(empty.Quantile(0.5), 0u);
}

}  // namespace
}  // namespace loehle::sim
