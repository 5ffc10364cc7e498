// Host tests for include/loehle/policy.h, the placement logic shared with
// scx/loehle.bpf.c. Decision tables are transcribed from the seed patches:
//   000 reservoir-sampled shallow-idle picks (patch 1 FIRST, patch 2
//       RESERVOIR; RECENCY is the behaviour before the series),
//   002 SMT idle-core preference with fallback and sibling pruning,
//   003 SCHED_IDLE CPUs count as idle only for a non-SCHED_IDLE wakee,
//   004 idle CPUs before SCHED_IDLE CPUs (patch 1) or SCHED_IDLE CPUs
//       ignored (patch 2).

#include "loehle/policy.h"

#include <gtest/gtest.h>
#include <linux/types.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <vector>

namespace {

constexpr uint64_t kUnpublished = LOEHLE_U64_MAX;
constexpr uint32_t kNoRand = 0;  // fed when policy.h asks for no draw

// Chi-square critical values at p = 0.001, indexed by degrees of freedom.
double ChiSquareCritical(int df) {
  static const std::map<int, double> kTable = {
      {1, 10.83}, {2, 13.82}, {3, 16.27}, {4, 18.47},
      {5, 20.52}, {6, 22.46}, {7, 24.32}, {15, 37.70},
  };
  return kTable.at(df);
}

// Compact description of one CPU's facts: Cpu(3).Idle().Latency(10).Core(1).
// Defaults: allowed, busy, load 0, exit latency 0, own core, core not idle.
class Cpu {
 public:
  explicit Cpu(int id) {
    f_.cpu = id;
    f_.core = static_cast<uint32_t>(id);
    f_.allowed = 1;
  }
  Cpu& Idle() {
    f_.idle = 1;
    f_.sched_idle = 0;
    return *this;
  }
  Cpu& SchedIdle() {
    f_.sched_idle = 1;
    f_.idle = 0;
    return *this;
  }
  Cpu& Load(uint64_t load) {
    f_.load = load;
    return *this;
  }
  Cpu& Latency(uint64_t lat) {
    f_.exit_latency = lat;
    return *this;
  }
  Cpu& Unpublished() { return Latency(kUnpublished); }
  Cpu& Stamp(uint64_t ns) {
    f_.idle_stamp = ns;
    return *this;
  }
  Cpu& Core(uint32_t core) {
    f_.core = core;
    return *this;
  }
  Cpu& CoreIdle(bool on = true) {
    f_.core_idle = on;
    return *this;
  }
  Cpu& Disallowed() {
    f_.allowed = 0;
    return *this;
  }
  // Sched-idle, but the wakee may not preempt what runs there (the
  // hierarchy scope's rule, loehle/cgroup_idle.h).
  Cpu& Refused() {
    f_.preempt_refused = 1;
    return *this;
  }
  const loehle_cpu_facts& facts() const { return f_; }
  loehle_cpu_facts& mutable_facts() { return f_; }

 private:
  loehle_cpu_facts f_{};
};

using Cpus = std::vector<Cpu>;

// Sets core_idle the way the BPF side derives it: a core is idle when every
// CPU listed on it is truly idle (a sched-idle CPU is not).
Cpus WithCoreIdle(Cpus cpus) {
  std::map<uint32_t, bool> idle;
  for (const Cpu& c : cpus) {
    auto [it, inserted] = idle.emplace(c.facts().core, true);
    it->second = it->second && c.facts().idle;
  }
  for (Cpu& c : cpus) c.mutable_facts().core_idle = idle[c.facts().core];
  return cpus;
}

// n CPUs, all idle with the same published exit latency.
Cpus AllIdle(int n, uint64_t lat = 1) {
  Cpus cpus;
  for (int i = 0; i < n; ++i) cpus.push_back(Cpu(i).Idle().Latency(lat));
  return cpus;
}

using Rand = std::function<uint32_t()>;

struct SlowCfg {
  uint32_t policy = LOEHLE_POLICY_FIRST;
  uint32_t si = LOEHLE_SI_MAINLINE;
  bool smt = false;
  bool wakee_si = false;
  int32_t fallback = 99;
};

struct SlowOutcome {
  loehle_choice c;
  int draws;  // random numbers drawn
};

// The selection walk (loehle/select.h), the very one the BPF side and the
// simulator run, over a list of CPUs given by their facts: one group (the
// slow path) or one LLC (the fast path). The environment's CPU numbers
// are places in the list; the facts carry the CPUs' own ids. The header
// and its environment sit in this anonymous namespace, as in
// loader/sim/machine.cc.
#include "loehle/select.h"

struct loehle_walk {
  const Cpus* cpus;
  const Rand* rand;
  int draws = 0;
};

__u32 loehle_env_group_len(loehle_walk* w, __u32, __u32) {
  return static_cast<__u32>(w->cpus->size());
}
__s32 loehle_env_group_cpu(loehle_walk*, __u32, __u32, __u32 k) { return static_cast<__s32>(k); }
__u32 loehle_env_cpu_llc(loehle_walk*, __s32) { return 0; }
__u32 loehle_env_llc_pos(loehle_walk*, __s32 cpu) { return static_cast<__u32>(cpu); }
__u32 loehle_env_core(loehle_walk* w, __s32 cpu) { return (*w->cpus)[cpu].facts().core; }
int loehle_env_allowed(loehle_walk* w, __s32 cpu) { return (*w->cpus)[cpu].facts().allowed; }
int loehle_env_runs_idle_work(loehle_walk* w, __s32 cpu) {
  return (*w->cpus)[cpu].facts().sched_idle;
}
// A load not asked for reads 0, the most tempting value (the BPF side then
// skips the queue length).
void loehle_env_gather(loehle_walk* w, __s32 cpu, int want_load, loehle_cpu_facts* f) {
  *f = (*w->cpus)[cpu].facts();
  if (!want_load) f->load = 0;
}
__u32 loehle_env_rand(loehle_walk* w) {
  ++w->draws;
  return (*w->rand)();
}
int loehle_env_scan_group(loehle_walk*, __u32, __u32, __s32, loehle_choice*) { return -1; }
__s32 loehle_env_busiest_group(loehle_walk*, __u32, int) { return -1; }
__u32 loehle_env_nr_groups(loehle_walk*, __u32) { return 1; }
__u32 loehle_env_nr_cpus(loehle_walk* w) { return static_cast<__u32>(w->cpus->size()); }
int loehle_env_idle_usable(loehle_walk* w, __s32 cpu, int) {
  return (*w->cpus)[cpu].facts().idle && (*w->cpus)[cpu].facts().allowed;
}
__u32 loehle_env_cpu_group(loehle_walk*, __u32, __s32) { return 0; }
void loehle_env_count_reset(loehle_walk*, __u32) {}
void loehle_env_count_add(loehle_walk*, __u32) {}
__u32 loehle_env_count(loehle_walk*, __u32) { return 0; }
int loehle_env_llc_has_idle(loehle_walk* w, __u32) {
  return std::any_of(w->cpus->begin(), w->cpus->end(),
                     [](const Cpu& c) { return c.facts().idle != 0; });
}
int loehle_env_llc_runs_idle_work(loehle_walk* w, __u32) {
  return std::any_of(w->cpus->begin(), w->cpus->end(),
                     [](const Cpu& c) { return c.facts().sched_idle != 0; });
}

// One slow-path group scan of `cpus` (loehle_walk_group), counting draws.
SlowOutcome RunSlow(const SlowCfg& cfg, const Cpus& cpus, const Rand& rand) {
  loehle_walk w{&cpus, &rand};
  const loehle_walk_cfg wc = {cfg.policy, cfg.si, cfg.smt ? 1u : 0u, cfg.wakee_si ? 1u : 0u};
  loehle_slow_scan s;
  loehle_cpu_facts f;
  SlowOutcome out{};
  loehle_walk_group(&w, &wc, &s, &f, 0, 0, cfg.fallback, &out.c);
  out.draws = w.draws;
  return out;
}

loehle_choice Slow(const SlowCfg& cfg, const Cpus& cpus) {
  std::mt19937 rng(12345);
  return RunSlow(cfg, cpus, [&] { return static_cast<uint32_t>(rng()); }).c;
}

// Runs `trials` slow scans with one fixed-seed generator; histogram by CPU.
std::map<int, int> SlowHistogram(const SlowCfg& cfg, const Cpus& cpus,
                                 int trials, uint32_t seed = 20260917) {
  std::mt19937 rng(seed);
  Rand rand = [&] { return static_cast<uint32_t>(rng()); };
  std::map<int, int> hist;
  for (int t = 0; t < trials; ++t) ++hist[RunSlow(cfg, cpus, rand).c.cpu];
  return hist;
}

// Chi-square statistic of `hist` against a uniform distribution over
// `expected_cpus`; a CPU outside that set fails the test.
double ChiSquareUniform(const std::map<int, int>& hist,
                        const std::vector<int>& expected_cpus, int trials) {
  for (const auto& [cpu, n] : hist) {
    EXPECT_NE(std::find(expected_cpus.begin(), expected_cpus.end(), cpu),
              expected_cpus.end())
        << "cpu " << cpu << " picked " << n << " times";
  }
  const double e = static_cast<double>(trials) / expected_cpus.size();
  double chi2 = 0;
  for (int cpu : expected_cpus) {
    auto it = hist.find(cpu);
    const double o = it == hist.end() ? 0 : it->second;
    chi2 += (o - e) * (o - e) / e;
  }
  return chi2;
}

struct FastCfg {
  uint32_t si = LOEHLE_SI_MAINLINE;
  bool smt = false;
  bool wakee_si = false;
};

// Wakeup scan of one LLC (loehle_walk_fast): prev's facts first, then the
// CPUs listed after prev, wrapping round to those before it.
loehle_choice Fast(const FastCfg& cfg, int prev, const Cpus& llc) {
  int prev_at = -1;
  for (size_t k = 0; k < llc.size(); ++k) {
    if (llc[k].facts().cpu == prev) prev_at = static_cast<int>(k);
  }
  EXPECT_GE(prev_at, 0) << "prev " << prev << " must be listed";
  loehle_choice c{};
  if (prev_at < 0) return c;
  const Rand no_rand = [] { return kNoRand; };
  loehle_walk w{&llc, &no_rand};
  const loehle_walk_cfg wc = {LOEHLE_POLICY_FIRST, cfg.si, cfg.smt ? 1u : 0u,
                              cfg.wakee_si ? 1u : 0u};
  loehle_fast_scan s;
  loehle_cpu_facts f;
  loehle_walk_fast(&w, &wc, &s, &f, prev_at, &c);
  return c;
}

SlowCfg Policy(uint32_t policy) {
  SlowCfg cfg;
  cfg.policy = policy;
  return cfg;
}

SlowCfg SiMode(uint32_t si, bool wakee_si,
               uint32_t policy = LOEHLE_POLICY_FIRST) {
  SlowCfg cfg;
  cfg.policy = policy;
  cfg.si = si;
  cfg.wakee_si = wakee_si;
  return cfg;
}

SlowCfg SmtSlow(uint32_t policy = LOEHLE_POLICY_FIRST) {
  SlowCfg cfg;
  cfg.policy = policy;
  cfg.smt = true;
  return cfg;
}

// 4 cores x 2 threads. Adjacent: siblings 0/1, 2/3, ...; interleaved (x86):
// siblings 0/4, 1/5, 2/6, 3/7. Core id = lowest CPU id of the core.
uint32_t AdjacentCore(int cpu) { return static_cast<uint32_t>(cpu & ~1); }
uint32_t InterleavedCore(int cpu) { return static_cast<uint32_t>(cpu % 4); }

// ---------------------------------------------------------------------------
// Arithmetic helpers.

// seed 000 patch 2: "Use ... reciprocal_scale() to avoid variable division".
TEST(PolicyReciprocalScale, MapsIntoRangeWithoutDivision) {
  for (uint32_t n : {1u, 2u, 3u, 7u, 8u, 512u, 0xffffffffu}) {
    EXPECT_EQ(loehle_reciprocal_scale(0, n), 0u) << n;
    EXPECT_EQ(loehle_reciprocal_scale(UINT32_MAX, n), n - 1) << n;
  }
  for (uint32_t v : {0u, 1u, 0x7fffffffu, 0x80000000u, UINT32_MAX}) {
    EXPECT_EQ(loehle_reciprocal_scale(v, 1), 0u) << v;
  }
  EXPECT_EQ(loehle_reciprocal_scale(0x7fffffffu, 2), 0u);
  EXPECT_EQ(loehle_reciprocal_scale(0x80000000u, 2), 1u);
  EXPECT_EQ(loehle_reciprocal_scale(0x80000000u, 8), 4u);
  EXPECT_EQ(loehle_reciprocal_scale(0x20000000u - 1, 8), 0u);
  EXPECT_EQ(loehle_reciprocal_scale(0x20000000u, 8), 1u);
}

// intf.h: "log2 buckets: 1, 2-3, 4-7, ..." capped at LOEHLE_TIE_BUCKETS - 1.
// seed 000 v2: "Use a u64 latency key with U64_MAX for unpublished states."
TEST(PolicyExitLatencyKey, UnpublishedIsTheDeepest) {
  EXPECT_EQ(loehle_exit_latency_key(0, 0), 0u);
  EXPECT_EQ(loehle_exit_latency_key(2, 150'000), 150'000u);
  EXPECT_EQ(loehle_exit_latency_key(LOEHLE_MAX_IDLE_STATES - 1, 7), 7u);
  EXPECT_EQ(loehle_exit_latency_key(LOEHLE_STATE_UNPUBLISHED, 0), kUnpublished);
  EXPECT_EQ(loehle_exit_latency_key(LOEHLE_MAX_IDLE_STATES, 5), kUnpublished);
}

TEST(PolicyTieBucket, Log2BucketsWithCap) {
  EXPECT_EQ(loehle_tie_bucket(1), 0u);
  EXPECT_EQ(loehle_tie_bucket(2), 1u);
  EXPECT_EQ(loehle_tie_bucket(3), 1u);
  for (uint32_t n = 4; n <= 7; ++n) EXPECT_EQ(loehle_tie_bucket(n), 2u) << n;
  EXPECT_EQ(loehle_tie_bucket(8), 3u);
  EXPECT_EQ(loehle_tie_bucket(255), 7u);
  EXPECT_EQ(loehle_tie_bucket(256), 8u);
  EXPECT_EQ(loehle_tie_bucket(511), 8u);
  EXPECT_EQ(loehle_tie_bucket(512), 9u);
  EXPECT_EQ(loehle_tie_bucket(1023), 9u);
  EXPECT_EQ(loehle_tie_bucket(1024), LOEHLE_TIE_BUCKETS - 1u);
  EXPECT_EQ(loehle_tie_bucket(1u << 20), LOEHLE_TIE_BUCKETS - 1u);
  EXPECT_EQ(loehle_tie_bucket(UINT32_MAX), LOEHLE_TIE_BUCKETS - 1u);
  // Exhaustive over the sizes a 512-CPU machine can produce.
  for (uint32_t n = 1; n <= LOEHLE_MAX_CPUS; ++n) {
    uint32_t log2 = 31 - __builtin_clz(n);
    EXPECT_EQ(loehle_tie_bucket(n), log2) << n;
  }
}

// seed 002 pruning needs one bit per core id; ids 0..511 span 8 words.
TEST(PolicyCoreBitmap, EachCoreIdSetsExactlyItsOwnBitAcrossWords) {
  for (uint32_t core = 0; core < LOEHLE_MAX_CPUS; ++core) {
    __u64 words[LOEHLE_CORE_WORDS] = {};
    loehle_prune_core(words, core);
    for (uint32_t other = 0; other < LOEHLE_MAX_CPUS; ++other) {
      ASSERT_EQ(loehle_core_is_pruned(words, other), other == core ? 1 : 0)
          << "pruned " << core << ", tested " << other;
    }
  }
}

// seed 003: choose_idle_cpu() = truly idle, or sched-idle rq and the wakee
// has no idle policy; seed 004 patch 1/2 never count sched-idle as idle.
TEST(PolicyCountsIdle, DecisionTablePerModeAndWakee) {
  const loehle_cpu_facts idle = Cpu(0).Idle().facts();
  const loehle_cpu_facts busy = Cpu(1).facts();
  const loehle_cpu_facts si = Cpu(2).SchedIdle().facts();
  struct Row {
    uint32_t mode;
    int normal_wakee;
    int si_wakee;
  };
  const Row rows[] = {
      {LOEHLE_SI_MAINLINE, 1, 1},
      {LOEHLE_SI_WAKEE_AWARE, 1, 0},
      {LOEHLE_SI_IDLE_FIRST, 0, 0},
      {LOEHLE_SI_IGNORE, 0, 0},
  };
  for (const Row& r : rows) {
    for (int w = 0; w < 2; ++w) {
      EXPECT_EQ(loehle_counts_idle(r.mode, w, &idle), 1) << r.mode << w;
      EXPECT_EQ(loehle_counts_idle(r.mode, w, &busy), 0) << r.mode << w;
    }
    EXPECT_EQ(loehle_counts_idle(r.mode, 0, &si), r.normal_wakee) << r.mode;
    EXPECT_EQ(loehle_counts_idle(r.mode, 1, &si), r.si_wakee) << r.mode;
  }
}

// ---------------------------------------------------------------------------
// Seed 000 patch 1: FIRST.

// seed 000 patch 1: "retain the first candidate unless a lower advertised
// exit latency is found".
TEST(PolicySlowFirst, KeepsFirstOfEqualLatencies) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_FIRST),
                         {Cpu(0), Cpu(1).Idle().Latency(5),
                          Cpu(2).Idle().Latency(5), Cpu(3).Idle().Latency(5)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
  EXPECT_EQ(c.ties, 3u);
  EXPECT_EQ(c.latency_key, 5u);
  EXPECT_EQ(c.examined, 4u);
  EXPECT_EQ(c.idle_pick, 1);
}

// seed 000 patch 1: "Drop the timestamp tie-break".
TEST(PolicySlowFirst, IgnoresIdleStampsLaterStampDoesNotWin) {
  loehle_choice c =
      Slow(Policy(LOEHLE_POLICY_FIRST), {Cpu(0).Idle().Latency(5).Stamp(10),
                                         Cpu(1).Idle().Latency(5).Stamp(1000),
                                         Cpu(2).Idle().Latency(5).Stamp(5000)});
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.ties, 3u);
}

// seed 000 patch 1: "unless a lower advertised exit latency is found".
TEST(PolicySlowFirst, StrictlyShallowerLaterCandidateWins) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_FIRST),
                         {Cpu(0).Idle().Latency(50), Cpu(1).Idle().Latency(50),
                          Cpu(2).Idle().Latency(10), Cpu(3).Idle().Latency(10),
                          Cpu(4).Idle().Latency(30)});
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.latency_key, 10u);
  EXPECT_EQ(c.ties, 2u);
}

// seed 000 patch 1: an idle CPU without a state ("!idle") is taken only while
// shallowest_idle_cpu == -1; the first published state replaces it.
TEST(PolicySlowFirst, UnpublishedFirstCandidateReplacedByPublished) {
  loehle_choice c =
      Slow(Policy(LOEHLE_POLICY_FIRST), {Cpu(0).Idle().Unpublished().Stamp(100),
                                         Cpu(1).Idle().Latency(1000).Stamp(1)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.latency_key, 1000u);
  EXPECT_EQ(c.unpublished, 1u);
  EXPECT_EQ(c.ties, 1u);
}

// seed 000 patch 1: a later unpublished CPU never displaces a published one.
TEST(PolicySlowFirst, LaterUnpublishedNeverReplacesPublished) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_FIRST),
                         {Cpu(0).Idle().Latency(1000).Stamp(1),
                          Cpu(1).Idle().Unpublished().Stamp(100)});
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.ties, 1u);
  EXPECT_EQ(c.unpublished, 1u);
}

// seed 000 patch 2 motivation: "Picking the first eligible idle CPU leaves a
// scan-order bias" -- FIRST always lands on index 0 and draws nothing.
TEST(PolicySlowFirst, IsNotUniformAlwaysIndexZero) {
  const int kTrials = 100000;
  std::mt19937 rng(7);
  int draws = 0;
  std::map<int, int> hist;
  for (int t = 0; t < kTrials; ++t) {
    SlowOutcome o = RunSlow(Policy(LOEHLE_POLICY_FIRST), AllIdle(8),
                            [&] { return static_cast<uint32_t>(rng()); });
    ++hist[o.c.cpu];
    draws += o.draws;
  }
  EXPECT_EQ(hist.size(), 1u);
  EXPECT_EQ(hist[0], kTrials);
  EXPECT_EQ(draws, 0);
  EXPECT_GT(ChiSquareUniform(hist, {0, 1, 2, 3, 4, 5, 6, 7}, kTrials),
            ChiSquareCritical(7));
}

// ---------------------------------------------------------------------------
// RECENCY: the rule before seed 000.

// pre-seed (seed 000 patch 1 '-' lines): equal latency and
// "rq->idle_stamp > latest_idle_timestamp" -> the most recently idled wins.
TEST(PolicySlowRecency, MostRecentStampWinsAmongEqualLatencies) {
  loehle_choice c = Slow(
      Policy(LOEHLE_POLICY_RECENCY),
      {Cpu(0).Idle().Latency(5).Stamp(10), Cpu(1).Idle().Latency(5).Stamp(300),
       Cpu(2).Idle().Latency(5).Stamp(200)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
}

// pre-seed: "priority to a CPU whose idle state has the smallest exit
// latency irrespective of any idle timestamp".
TEST(PolicySlowRecency, ShallowerWinsRegardlessOfStamp) {
  loehle_choice c = Slow(
      Policy(LOEHLE_POLICY_RECENCY),
      {Cpu(0).Idle().Latency(50).Stamp(900), Cpu(1).Idle().Latency(5).Stamp(1),
       Cpu(2).Idle().Latency(50).Stamp(1000)});
  EXPECT_EQ(c.cpu, 1);
}

// pre-seed quirk: the condition was "(!idle || exit_latency == min) &&
// idle_stamp > latest", so a CPU with no published state (!idle) beats a
// published one merely by having idled later: its latency is never
// compared. Seed 000 v2 removes this by keying unpublished states U64_MAX.
TEST(PolicySlowRecency, UnpublishedWithLaterStampBeatsPublished) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_RECENCY),
                         {Cpu(0).Idle().Latency(1).Stamp(100),
                          Cpu(1).Idle().Unpublished().Stamp(200)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.unpublished, 1u);
  EXPECT_EQ(c.latency_key, kUnpublished);
}

// pre-seed: the unpublished CPU still needs the later stamp.
TEST(PolicySlowRecency, UnpublishedWithEarlierStampLoses) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_RECENCY),
                         {Cpu(0).Idle().Latency(1).Stamp(100),
                          Cpu(1).Idle().Unpublished().Stamp(50)});
  EXPECT_EQ(c.cpu, 0);
}

// policy.h loehle_choice::latency_key: "key of the pick; U64_MAX if none or
// unpublished" -- also under RECENCY, whose pick can be a published CPU.
TEST(PolicySlowRecency, ReportsLatencyKeyOfThePick) {
  loehle_choice c = Slow(
      Policy(LOEHLE_POLICY_RECENCY),
      {Cpu(0).Idle().Latency(7).Stamp(1), Cpu(1).Idle().Latency(7).Stamp(2)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.latency_key, 7u);
  EXPECT_EQ(c.ties, 2u);
}

// pre-seed: the stamp, not the scan order, decides: every trial lands on the
// CPU with the latest stamp wherever it sits, and no random number is drawn.
TEST(PolicySlowRecency, ConcentratesOnLatestStamp) {
  std::mt19937 rng(99);
  std::map<int, int> hist;
  const int kTrials = 20000;
  for (int t = 0; t < kTrials; ++t) {
    std::vector<uint64_t> stamps(8);
    for (auto& st : stamps) st = rng() % 1000000;
    Cpus cpus;
    for (int i = 0; i < 8; ++i)
      cpus.push_back(Cpu(i).Idle().Latency(3).Stamp(stamps[i]));
    int latest = static_cast<int>(
        std::max_element(stamps.begin(), stamps.end()) - stamps.begin());
    SlowOutcome o = RunSlow(Policy(LOEHLE_POLICY_RECENCY), cpus,
                            [&] { return static_cast<uint32_t>(rng()); });
    ASSERT_EQ(o.c.cpu, latest) << "trial " << t;
    ASSERT_EQ(o.draws, 0);
  }
  // With fixed stamps the distribution is a single spike at the latest CPU.
  Cpus fixed;
  for (int i = 0; i < 8; ++i)
    fixed.push_back(Cpu(i).Idle().Latency(3).Stamp(i == 5 ? 900 : 100 + i));
  hist = SlowHistogram(Policy(LOEHLE_POLICY_RECENCY), fixed, kTrials);
  EXPECT_EQ(hist.size(), 1u);
  EXPECT_EQ(hist[5], kTrials);
}

// ---------------------------------------------------------------------------
// Seed 000 patch 2: RESERVOIR.

// seed 000 patch 2: "resetting the candidate count when a shallower
// candidate appears" -- ties reported is the size of the final group.
TEST(PolicySlowReservoir, ResetsTieCountWhenShallowerAppears) {
  SlowOutcome o =
      RunSlow(Policy(LOEHLE_POLICY_RESERVOIR),
              {Cpu(0).Idle().Latency(20), Cpu(1).Idle().Latency(20),
               Cpu(2).Idle().Latency(20), Cpu(3).Idle().Latency(20),
               Cpu(4).Idle().Latency(5), Cpu(5).Idle().Latency(20),
               Cpu(6).Idle().Latency(5)},
              [] { return 0u; });  // 0 always replaces: the last tie wins
  EXPECT_EQ(o.c.cpu, 6);
  EXPECT_EQ(o.c.ties, 2u);
  EXPECT_EQ(o.c.latency_key, 5u);
  // Draws: cpus 1,2,3 (ties of 20) and cpu 6 (tie of 5); none for 0, 4, 5.
  EXPECT_EQ(o.draws, 4);
}

// seed 000 patch 2: "if (!reciprocal_scale(sched_rng(), nr_candidates))".
TEST(PolicySlowReservoir, ReplacesExactlyWhenReciprocalScaleIsZero) {
  // UINT32_MAX maps to n - 1 != 0: the first tie stays.
  SlowOutcome keep = RunSlow(Policy(LOEHLE_POLICY_RESERVOIR), AllIdle(5),
                             [] { return UINT32_MAX; });
  EXPECT_EQ(keep.c.cpu, 0);
  EXPECT_EQ(keep.c.ties, 5u);
  EXPECT_EQ(keep.draws, 4);
  // A scripted sequence: tie n=2 takes (0 < 2^31), n=3 keeps (2^31 >= 2^32/3),
  // n=4 takes (2^30 - 1 < 2^32/4), n=5 keeps (2^30 >= 2^32/5).
  std::vector<uint32_t> seq = {0u, 0x80000000u, 0x3fffffffu, 0x40000000u};
  size_t i = 0;
  SlowOutcome o = RunSlow(Policy(LOEHLE_POLICY_RESERVOIR), AllIdle(5),
                          [&] { return seq.at(i++); });
  EXPECT_EQ(o.c.cpu, 3);
  EXPECT_EQ(i, seq.size());
}

// seed 000 patch 2: "Published states take precedence; when none are found,
// sample among the idle CPUs without a published state."
TEST(PolicySlowReservoir, FiveUnpublishedAndOnePublishedDeepAlwaysPublished) {
  for (int pos = 0; pos < 6; ++pos) {
    Cpus cpus;
    for (int i = 0; i < 6; ++i) {
      cpus.push_back(i == pos ? Cpu(i).Idle().Latency(1000000)
                              : Cpu(i).Idle().Unpublished());
    }
    auto hist = SlowHistogram(Policy(LOEHLE_POLICY_RESERVOIR), cpus, 2000);
    EXPECT_EQ(hist.size(), 1u) << "published at " << pos;
    EXPECT_EQ(hist[pos], 2000) << "published at " << pos;
    loehle_choice c = Slow(Policy(LOEHLE_POLICY_RESERVOIR), cpus);
    EXPECT_EQ(c.unpublished, 5u);
    EXPECT_EQ(c.ties, 1u);
    EXPECT_EQ(c.latency_key, 1000000u);
  }
}

// seed 000 patch 2: all unpublished -> sampled uniformly among them.
TEST(PolicySlowReservoir, AllUnpublishedIsUniformAmongThem) {
  Cpus cpus = {Cpu(0),
               Cpu(1).Idle().Unpublished(),
               Cpu(2).Load(0),
               Cpu(3).Idle().Unpublished(),
               Cpu(4).Idle().Unpublished(),
               Cpu(5).Idle().Unpublished()};
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_RESERVOIR), cpus);
  EXPECT_EQ(c.unpublished, 4u);
  EXPECT_EQ(c.ties, 4u);
  EXPECT_EQ(c.latency_key, kUnpublished);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
  const int kTrials = 100000;
  auto hist = SlowHistogram(Policy(LOEHLE_POLICY_RESERVOIR), cpus, kTrials);
  EXPECT_LT(ChiSquareUniform(hist, {1, 3, 4, 5}, kTrials),
            ChiSquareCritical(3));
}

// seed 000 patch 2: "Use reservoir sampling for equal exit latencies" --
// uniform among 8 ties, chi-square df=7 at p=0.001 over 100,000 trials.
TEST(PolicySlowReservoir, UniformAmongEightTiesChiSquare) {
  const int kTrials = 100000;
  auto hist =
      SlowHistogram(Policy(LOEHLE_POLICY_RESERVOIR), AllIdle(8), kTrials);
  EXPECT_EQ(hist.size(), 8u);
  EXPECT_LT(ChiSquareUniform(hist, {0, 1, 2, 3, 4, 5, 6, 7}, kTrials),
            ChiSquareCritical(7));
}

// seed 000 patch 2: after the reset only CPUs from the shallower candidate
// on are sampled, uniformly.
TEST(PolicySlowReservoir, UniformAfterMidScanResetOnlyLaterGroup) {
  Cpus cpus = {Cpu(0).Idle().Latency(9), Cpu(1).Idle().Latency(9),
               Cpu(2).Idle().Latency(9), Cpu(3).Idle().Latency(2),
               Cpu(4).Idle().Latency(9), Cpu(5).Idle().Latency(2),
               Cpu(6).Idle().Latency(2), Cpu(7).Idle().Latency(2)};
  const int kTrials = 100000;
  auto hist = SlowHistogram(Policy(LOEHLE_POLICY_RESERVOIR), cpus, kTrials);
  EXPECT_EQ(hist.count(0) + hist.count(1) + hist.count(2) + hist.count(4), 0u);
  EXPECT_LT(ChiSquareUniform(hist, {3, 5, 6, 7}, kTrials),
            ChiSquareCritical(3));
  EXPECT_EQ(Slow(Policy(LOEHLE_POLICY_RESERVOIR), cpus).ties, 4u);
}

// seed 000 patch 2: one draw per tie, never for the first candidate of a
// group, a deeper CPU, a busy CPU or a disallowed one.
TEST(PolicySlowReservoir, DrawsOncePerTieOnly) {
  std::mt19937 rng(1);
  SlowOutcome o = RunSlow(
      Policy(LOEHLE_POLICY_RESERVOIR),
      {Cpu(0).Load(3), Cpu(1).Idle().Latency(4), Cpu(2).Idle().Latency(8),
       Cpu(3).Idle().Latency(4).Disallowed(), Cpu(4).Idle().Latency(4),
       Cpu(5).Idle().Unpublished(), Cpu(6).Idle().Latency(4)},
      [&] { return static_cast<uint32_t>(rng()); });
  EXPECT_EQ(o.draws, 2);
  EXPECT_EQ(o.c.ties, 3u);
  EXPECT_EQ(o.c.unpublished, 1u);
  EXPECT_EQ(o.c.examined, 6u);
  EXPECT_TRUE(o.c.cpu == 1 || o.c.cpu == 4 || o.c.cpu == 6) << o.c.cpu;
}

// An offline CPU is never offered, whatever the task's mask says.
TEST(PolicyCpuUsable, OnlineAndInTheTaskMaskOnly) {
  EXPECT_TRUE(loehle_cpu_usable(1, 1));
  EXPECT_FALSE(loehle_cpu_usable(0, 1));
  EXPECT_FALSE(loehle_cpu_usable(1, 0));
  EXPECT_FALSE(loehle_cpu_usable(0, 0));
}

// A CPU coming back rejoins the scans without a reload only when its place
// in the topology was read at load.
TEST(PolicyCpuOnline, ReloadOnlyForACpuUnknownAtLoad) {
  EXPECT_FALSE(loehle_cpu_online_needs_reload(1));
  EXPECT_TRUE(loehle_cpu_online_needs_reload(0));
}

// ---------------------------------------------------------------------------
// Slow path: no idle CPU, masks, sizes.

// kernel slow path: least_loaded_cpu starts at this_cpu; nothing examined.
TEST(PolicySlowEdge, EmptyMaskReturnsFallbackLeastLoaded) {
  SlowCfg cfg;
  cfg.fallback = 42;
  for (uint32_t policy :
       {LOEHLE_POLICY_RECENCY, LOEHLE_POLICY_FIRST, LOEHLE_POLICY_RESERVOIR}) {
    cfg.policy = policy;
    loehle_choice c = Slow(
        cfg, {Cpu(0).Idle().Disallowed(), Cpu(1).SchedIdle().Disallowed()});
    EXPECT_EQ(c.cpu, 42);
    EXPECT_EQ(c.reason, LOEHLE_REASON_LEAST_LOADED);
    EXPECT_EQ(c.examined, 0u);
    EXPECT_EQ(c.ties, 0u);
    EXPECT_EQ(c.idle_pick, 0);
    EXPECT_EQ(c.latency_key, kUnpublished);
  }
  EXPECT_EQ(Slow(cfg, {}).cpu, 42);
}

// kernel slow path: a single idle CPU is the pick.
TEST(PolicySlowEdge, SingleCpuIdleOrBusy) {
  loehle_choice idle =
      Slow(Policy(LOEHLE_POLICY_RESERVOIR), {Cpu(7).Idle().Latency(3)});
  EXPECT_EQ(idle.cpu, 7);
  EXPECT_EQ(idle.reason, LOEHLE_REASON_SHALLOWEST);
  EXPECT_EQ(idle.ties, 1u);
  loehle_choice busy =
      Slow(Policy(LOEHLE_POLICY_RESERVOIR), {Cpu(7).Load(1000)});
  EXPECT_EQ(busy.cpu, 7);
  EXPECT_EQ(busy.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(busy.ties, 0u);
}

// kernel slow path: "if (load < min_load)" -- the minimum, first on ties.
TEST(PolicySlowEdge, AllBusyLeastLoadedFirstOnEqualLoad) {
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_RESERVOIR),
                         {Cpu(0).Load(50), Cpu(1).Load(20), Cpu(2).Load(30),
                          Cpu(3).Load(20), Cpu(4).Load(90)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(c.examined, 5u);
  EXPECT_EQ(c.idle_pick, 0);
  EXPECT_EQ(c.sched_idle_pick, 0);
}

// Load is read only while it can still decide: before anything idle or
// sched-idle is found, and never after.
TEST(PolicySlowEdge, LoadWantedOnlyUntilSomethingIdleIsFound) {
  loehle_slow_scan s;
  loehle_slow_init(&s, LOEHLE_POLICY_RESERVOIR, LOEHLE_SI_IDLE_FIRST, 0, 0, 9);
  EXPECT_TRUE(loehle_slow_wants_load(&s));
  loehle_cpu_facts busy = Cpu(0).Load(5).facts();
  loehle_slow_step(&s, &busy, kNoRand);
  EXPECT_TRUE(loehle_slow_wants_load(&s));
  loehle_cpu_facts si = Cpu(1).SchedIdle().facts();
  loehle_slow_step(&s, &si, kNoRand);
  EXPECT_FALSE(loehle_slow_wants_load(&s));

  loehle_slow_init(&s, LOEHLE_POLICY_RESERVOIR, LOEHLE_SI_WAKEE_AWARE, 0, 1, 9);
  loehle_cpu_facts idle = Cpu(2).Idle().facts();
  loehle_slow_step(&s, &idle, 0);
  EXPECT_FALSE(loehle_slow_wants_load(&s));
}

// kernel slow path: "else if (shallowest_idle_cpu == -1)" -- any idle CPU
// beats every busy one, however lightly loaded.
TEST(PolicySlowEdge, IdleBeatsLessLoadedBusy) {
  loehle_choice c =
      Slow(Policy(LOEHLE_POLICY_FIRST),
           {Cpu(0).Load(100), Cpu(1).Idle().Latency(999), Cpu(2).Load(0)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
}

// kernel slow path iterates the group "& p->cpus_ptr": disallowed CPUs are
// neither picked nor examined.
TEST(PolicySlowEdge, DisallowedNeverPickedNorExamined) {
  loehle_choice c =
      Slow(Policy(LOEHLE_POLICY_FIRST),
           {Cpu(0).Idle().Latency(0).Disallowed(), Cpu(1).Idle().Latency(5),
            Cpu(2).Load(0).Disallowed(), Cpu(3).Load(7)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.examined, 2u);
  EXPECT_EQ(c.ties, 1u);
  // Disallowed sched-idle CPUs are not returned at once either.
  loehle_choice si = Slow(Policy(LOEHLE_POLICY_FIRST),
                          {Cpu(0).SchedIdle().Disallowed(), Cpu(1).Load(4)});
  EXPECT_EQ(si.cpu, 1);
  EXPECT_EQ(si.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(si.examined, 1u);
}

// seed 000 v2: with only unpublished states, FIRST keeps the first of them.
TEST(PolicySlowEdge, AllUnpublishedFirstKeepsFirst) {
  Cpus cpus;
  for (int i = 0; i < 6; ++i)
    cpus.push_back(Cpu(i).Idle().Unpublished().Stamp(100 - i));
  loehle_choice c = Slow(Policy(LOEHLE_POLICY_FIRST), cpus);
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.ties, 6u);
  EXPECT_EQ(c.unpublished, 6u);
  EXPECT_EQ(c.latency_key, kUnpublished);
  EXPECT_EQ(c.idle_pick, 1);
}

// seed 000 patch 2 on 1..512 CPUs: FIRST picks CPU 0, RESERVOIR stays in
// range and counts every CPU as a tie.
TEST(PolicySlowEdge, SizesFromOneTo512AllIdleEqualLatency) {
  for (int n : {1, 2, 3, 64, 65, 511, 512}) {
    Cpus cpus = AllIdle(n, 4);
    loehle_choice first = Slow(Policy(LOEHLE_POLICY_FIRST), cpus);
    EXPECT_EQ(first.cpu, 0) << n;
    EXPECT_EQ(first.ties, static_cast<uint32_t>(n));
    EXPECT_EQ(first.examined, static_cast<uint32_t>(n));
    std::mt19937 rng(n);
    std::vector<bool> seen(n);
    for (int t = 0; t < 200; ++t) {
      SlowOutcome o = RunSlow(Policy(LOEHLE_POLICY_RESERVOIR), cpus,
                              [&] { return static_cast<uint32_t>(rng()); });
      ASSERT_GE(o.c.cpu, 0) << n;
      ASSERT_LT(o.c.cpu, n) << n;
      ASSERT_EQ(o.c.ties, static_cast<uint32_t>(n));
      ASSERT_EQ(o.draws, n - 1);
      seen[o.c.cpu] = true;
    }
    if (n >= 64) {
      // Not stuck on the head or the tail of the scan.
      EXPECT_GT(std::count(seen.begin(), seen.end(), true), 50) << n;
    }
  }
}

// ---------------------------------------------------------------------------
// Seed 003: WAKEE_AWARE, and MAINLINE for contrast.

// seed 003: "if (choose_sched_idle_rq(rq, p)) return i;" for a normal wakee.
TEST(PolicySlowWakeeAware, NormalWakeeTakesSchedIdleCpuAtOnce) {
  Cpus cpus = {Cpu(0).Load(9), Cpu(1).Idle().Latency(1), Cpu(2).SchedIdle(),
               Cpu(3).Idle().Latency(0), Cpu(4).SchedIdle()};
  loehle_choice c = Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, false), cpus);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.examined, 3u);
  EXPECT_EQ(c.sched_idle_pick, 1);
  EXPECT_EQ(c.idle_pick, 1);
}

// seed 003: "for a SCHED_IDLE wakee ... continuing to look for a truly idle
// CPU".
TEST(PolicySlowWakeeAware, SchedIdleWakeeSkipsToTrulyIdleCpu) {
  Cpus cpus = {Cpu(0).SchedIdle(), Cpu(1).Load(5), Cpu(2).SchedIdle(),
               Cpu(3).Idle().Latency(2), Cpu(4).Idle().Latency(2)};
  loehle_choice c = Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, true), cpus);
  EXPECT_EQ(c.cpu, 3);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
  EXPECT_EQ(c.examined, 5u);
  EXPECT_EQ(c.sched_idle_pick, 0);
}

// seed 003: for a SCHED_IDLE wakee a sched-idle CPU is an ordinary busy CPU:
// it competes by load in the least-loaded fallback.
TEST(PolicySlowWakeeAware, SchedIdleWakeeNoIdleCpuLeastLoadedByLoad) {
  loehle_choice light =
      Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, true),
           {Cpu(0).Load(10), Cpu(1).SchedIdle().Load(2), Cpu(2).Load(5)});
  EXPECT_EQ(light.cpu, 1);
  EXPECT_EQ(light.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(light.sched_idle_pick, 0);
  EXPECT_EQ(light.idle_pick, 0);
  loehle_choice heavy =
      Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, true),
           {Cpu(0).Load(10), Cpu(1).SchedIdle().Load(7), Cpu(2).Load(5)});
  EXPECT_EQ(heavy.cpu, 2);
  EXPECT_EQ(heavy.reason, LOEHLE_REASON_LEAST_LOADED);
}

// Seed 004's review (the hierarchy scope): a sched-idle CPU whose idle work
// this wakee may not preempt is an ordinary busy CPU for wakee-aware.
TEST(PolicySlowWakeeAware, RefusedSchedIdleCpuIsBusy) {
  loehle_choice c = Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, false),
                         {Cpu(0).SchedIdle().Refused().Load(1), Cpu(1).Load(4),
                          Cpu(2).SchedIdle(), Cpu(3).Idle()});
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  loehle_choice busy = Slow(SiMode(LOEHLE_SI_WAKEE_AWARE, false),
                            {Cpu(0).Load(3), Cpu(1).SchedIdle().Refused().Load(1),
                             Cpu(2).Load(5)});
  EXPECT_EQ(busy.cpu, 1);
  EXPECT_EQ(busy.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(busy.sched_idle_pick, 0);
  EXPECT_EQ(busy.idle_pick, 0);
}

// The modes keep their meaning on top of the scope: mainline takes a
// sched-idle CPU for every wakee, refused or not.
TEST(PolicySlowMainline, IgnoresTheHierarchyRefusal) {
  loehle_choice c = Slow(SiMode(LOEHLE_SI_MAINLINE, false),
                         {Cpu(0).Load(2), Cpu(1).SchedIdle().Refused()});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.sched_idle_pick, 1);
}

TEST(PolicyFastWakeeAware, RefusedPrevAndScanCpuDoNotCount) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_WAKEE_AWARE;
  loehle_choice c = Fast(cfg, 0, {Cpu(0).SchedIdle().Refused(),
                                  Cpu(1).SchedIdle().Refused(), Cpu(2).SchedIdle()});
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.examined, 3u);
  loehle_choice none = Fast(cfg, 0, {Cpu(0).SchedIdle().Refused(),
                                     Cpu(1).SchedIdle().Refused()});
  EXPECT_EQ(none.cpu, 0);
  EXPECT_EQ(none.reason, LOEHLE_REASON_PREV_BUSY);
  EXPECT_EQ(none.idle_pick, 0);
}

// mainline 17346452b25b (what seed 003 changes): "if (sched_idle_cpu(i))
// return i;" for every wakee, even ahead of an earlier idle CPU.
TEST(PolicySlowMainline, SchedIdleReturnedAtOnceEvenForSchedIdleWakee) {
  for (bool wakee_si : {false, true}) {
    loehle_choice c = Slow(SiMode(LOEHLE_SI_MAINLINE, wakee_si),
                           {Cpu(0).Idle().Latency(0), Cpu(1).Load(1),
                            Cpu(2).SchedIdle(), Cpu(3).Idle().Latency(0)});
    EXPECT_EQ(c.cpu, 2) << wakee_si;
    EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
    EXPECT_EQ(c.examined, 3u);
    EXPECT_EQ(c.ties, 0u);
    EXPECT_EQ(c.sched_idle_pick, 1);
  }
  // "Sched-idle CPUs never form an idle core": not reported as one even if
  // the caller's core_idle fact says so.
  loehle_choice lying = Slow(SmtSlow(), {Cpu(0).SchedIdle().CoreIdle()});
  EXPECT_EQ(lying.cpu, 0);
  EXPECT_EQ(lying.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(lying.core_idle, 0);
}

// seed 003: select_idle_sibling's prev check uses choose_idle_cpu(prev, p).
TEST(PolicyFastWakeeAware, PrevSchedIdleCountsOnlyForNormalWakee) {
  Cpus llc = {Cpu(0).SchedIdle(), Cpu(1).Load(3), Cpu(2).Idle()};
  FastCfg cfg;
  cfg.si = LOEHLE_SI_WAKEE_AWARE;
  loehle_choice normal = Fast(cfg, 0, llc);
  EXPECT_EQ(normal.cpu, 0);
  EXPECT_EQ(normal.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(normal.sched_idle_pick, 1);
  EXPECT_EQ(normal.examined, 1u);
  cfg.wakee_si = true;
  loehle_choice si = Fast(cfg, 0, llc);
  EXPECT_EQ(si.cpu, 2);
  EXPECT_EQ(si.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(si.sched_idle_pick, 0);
  EXPECT_EQ(si.examined, 3u);
}

// seed 003: __select_idle_cpu uses choose_idle_cpu() in the LLC scan.
TEST(PolicyFastWakeeAware, ScanSchedIdleCpuCountsOnlyForNormalWakee) {
  Cpus llc = {Cpu(0).Load(1), Cpu(1).SchedIdle(), Cpu(2).Idle()};
  FastCfg cfg;
  cfg.si = LOEHLE_SI_WAKEE_AWARE;
  loehle_choice normal = Fast(cfg, 0, llc);
  EXPECT_EQ(normal.cpu, 1);
  EXPECT_EQ(normal.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(normal.examined, 2u);
  cfg.wakee_si = true;
  loehle_choice si = Fast(cfg, 0, llc);
  EXPECT_EQ(si.cpu, 2);
  EXPECT_EQ(si.reason, LOEHLE_REASON_IDLE_CPU);
}

// seed 003 select_idle_core: "if (!available_idle_cpu(cpu)) idle = false"
// -- a sched-idle CPU never makes its core idle, even if the caller's
// core_idle fact claims so; it may still be the idle_cpu fallback.
TEST(PolicyFastWakeeAware, SchedIdleCpuNeverFormsIdleCore) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_WAKEE_AWARE;
  cfg.smt = true;
  // Core 2 = {2 sched-idle, 3 idle}: not an idle core.
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).SchedIdle(), Cpu(3).Core(2).Idle()});
  loehle_choice c = Fast(cfg, 0, llc);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.core_idle, 0);
  // Inconsistent facts: core_idle set on the sched-idle CPU itself.
  Cpus lying = {Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                Cpu(2).Core(2).SchedIdle().CoreIdle(), Cpu(4).Core(4).Idle(),
                Cpu(5).Core(4).Load(1)};
  loehle_choice l = Fast(cfg, 0, lying);
  EXPECT_NE(l.reason, LOEHLE_REASON_IDLE_CORE);
  EXPECT_EQ(l.cpu, 2);
  EXPECT_EQ(l.core_idle, 0);
  // The same for prev: a sched-idle prev is never "prev with idle core".
  Cpus prev_lying = {Cpu(0).Core(0).SchedIdle().CoreIdle(),
                     Cpu(1).Core(0).Idle(), Cpu(2).Core(2).Idle().CoreIdle(),
                     Cpu(3).Core(2).Idle().CoreIdle()};
  loehle_choice p = Fast(cfg, 0, WithCoreIdle(prev_lying));
  EXPECT_EQ(p.cpu, 2);
  EXPECT_EQ(p.reason, LOEHLE_REASON_IDLE_CORE);
  loehle_choice p2 = Fast(cfg, 0, prev_lying);  // core_idle kept as given
  EXPECT_EQ(p2.cpu, 2) << "sched-idle prev taken as an idle core";
  EXPECT_EQ(p2.reason, LOEHLE_REASON_IDLE_CORE);
}

// seed 003 select_idle_smt: "if (choose_idle_cpu(cpu, p)) return cpu;" -- a
// sched-idle sibling of prev counts only for a normal wakee.
TEST(PolicyFastWakeeAware, SchedIdleSiblingOfPrevCountsOnlyForNormalWakee) {
  // Scan from CPU 2 as the kernel wraps from the target; prev 0's sibling 1
  // comes last, after an idle CPU on a busy core.
  Cpus llc = WithCoreIdle({Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Load(1),
                           Cpu(0).Core(0).Load(1), Cpu(1).Core(0).SchedIdle()});
  FastCfg cfg;
  cfg.si = LOEHLE_SI_WAKEE_AWARE;
  cfg.smt = true;
  loehle_choice normal = Fast(cfg, 0, llc);
  EXPECT_EQ(normal.cpu, 1);
  EXPECT_EQ(normal.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(normal.sched_idle_pick, 1);
  cfg.wakee_si = true;
  loehle_choice si = Fast(cfg, 0, llc);
  EXPECT_EQ(si.cpu, 2);
  EXPECT_EQ(si.reason, LOEHLE_REASON_IDLE_CPU);
}

// mainline: sched_idle_cpu(prev) counts for every wakee.
TEST(PolicyFastMainline, PrevSchedIdleCountsEvenForSchedIdleWakee) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_MAINLINE;
  cfg.wakee_si = true;
  loehle_choice c = Fast(cfg, 0, {Cpu(0).SchedIdle(), Cpu(1).Idle()});
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.sched_idle_pick, 1);
  EXPECT_EQ(c.idle_pick, 1);
  EXPECT_EQ(c.examined, 1u);
}

// ---------------------------------------------------------------------------
// Seed 004 patch 1: IDLE_FIRST.

// seed 004 patch 1: "prioritize idle cpus over SCHED_IDLE ones".
TEST(PolicySlowIdleFirst, PrefersIdleCpuEvenIfSchedIdleComesFirst) {
  for (bool wakee_si : {false, true}) {
    loehle_choice c = Slow(SiMode(LOEHLE_SI_IDLE_FIRST, wakee_si),
                           {Cpu(0).SchedIdle(), Cpu(1).Load(0),
                            Cpu(2).SchedIdle(), Cpu(3).Idle().Latency(900)});
    EXPECT_EQ(c.cpu, 3) << wakee_si;
    EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
    EXPECT_EQ(c.examined, 4u);
    EXPECT_EQ(c.sched_idle_pick, 0);
  }
}

// seed 004 patch 1: "if (si_cpu != -1) return si_cpu;" -- the first one.
TEST(PolicySlowIdleFirst, FallsBackToFirstSchedIdleCpu) {
  loehle_choice c = Slow(SiMode(LOEHLE_SI_IDLE_FIRST, false),
                         {Cpu(0).Load(5), Cpu(1).SchedIdle().Load(9),
                          Cpu(2).SchedIdle().Load(1), Cpu(3).Load(0)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.sched_idle_pick, 1);
  EXPECT_EQ(c.idle_pick, 1);
  EXPECT_EQ(c.examined, 4u);
}

// seed 004 patch 1: "return least_loaded_cpu" only when neither exists.
TEST(PolicySlowIdleFirst, LeastLoadedOnlyWithoutIdleOrSchedIdle) {
  loehle_choice c = Slow(SiMode(LOEHLE_SI_IDLE_FIRST, false),
                         {Cpu(0).Load(5), Cpu(1).Load(2), Cpu(2).Load(9)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(c.sched_idle_pick, 0);
}

// seed 004 patch 1: "else if (shallowest_idle_cpu == -1 && si_cpu == -1)"
// -- once the sched-idle fallback is found loads are not compared.
TEST(PolicySlowIdleFirst, NoLoadComparisonAfterSchedIdleFallback) {
  loehle_choice c =
      Slow(SiMode(LOEHLE_SI_IDLE_FIRST, false),
           {Cpu(0).Load(50), Cpu(1).SchedIdle().Load(40), Cpu(2).Load(0)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  // Inspect the scan: the later, less loaded CPU 2 never became the
  // least-loaded candidate. (No SMT, so nothing is pruned.)
  loehle_slow_scan s;
  loehle_slow_init(&s, LOEHLE_POLICY_FIRST, LOEHLE_SI_IDLE_FIRST, 0, 0, 99);
  for (const Cpu& cpu :
       {Cpu(0).Load(50), Cpu(1).SchedIdle().Load(40), Cpu(2).Load(0)}) {
    loehle_slow_step(&s, &cpu.facts(), kNoRand);
  }
  EXPECT_EQ(s.least_loaded, 0);
  EXPECT_EQ(s.min_load, 50u);
}

// seed 004 patch 1 reverts only the scans: select_idle_sibling() still
// takes a target or prev that is sched_idle_cpu() at once, whatever idle
// CPU the LLC holds.
TEST(PolicyFastIdleFirst, SchedIdlePrevTakenAtOnce) {
  for (bool wakee_si : {false, true}) {
    FastCfg cfg;
    cfg.si = LOEHLE_SI_IDLE_FIRST;
    cfg.wakee_si = wakee_si;
    loehle_choice c = Fast(cfg, 0, {Cpu(0).SchedIdle(), Cpu(1).Idle()});
    EXPECT_EQ(c.cpu, 0) << wakee_si;
    EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
    EXPECT_EQ(c.sched_idle_pick, 1);
    EXPECT_EQ(c.idle_pick, 1);
    EXPECT_EQ(c.examined, 1u);
  }
}

// seed 004 patch 1 __select_idle_cpu: an idle CPU returns at once, a
// sched-idle one is only remembered.
TEST(PolicyFastIdleFirst, ScanIdleCpuBeatsEarlierSchedIdle) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_IDLE_FIRST;
  loehle_choice c = Fast(
      cfg, 0,
      {Cpu(0).Load(1), Cpu(1).SchedIdle(), Cpu(2).Load(1), Cpu(3).Idle()});
  EXPECT_EQ(c.cpu, 3);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(c.sched_idle_pick, 0);
  EXPECT_EQ(c.examined, 4u);
}

// seed 004 patch 1 select_idle_cpu: "if (--nr <= 0) return idle_cpu;" --
// no idle CPU in the LLC, the first sched-idle one in scan order.
TEST(PolicyFastIdleFirst, SchedIdleFallbackInScanOrder) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_IDLE_FIRST;
  loehle_choice scan = Fast(
      cfg, 0,
      {Cpu(0).Load(1), Cpu(1).Load(1), Cpu(2).SchedIdle(), Cpu(3).SchedIdle()});
  EXPECT_EQ(scan.cpu, 2);
  EXPECT_EQ(scan.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(scan.sched_idle_pick, 1);
  EXPECT_EQ(scan.examined, 4u);
}

// seed 004 patch 1 select_idle_smt(): a truly idle sibling of prev first,
// else the first sched-idle sibling, before the LLC scan's idle CPUs.
TEST(PolicyFastIdleFirst, SiblingIdleFirstThenSchedIdleSibling) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_IDLE_FIRST;
  cfg.smt = true;
  // prev 0 busy; its core {0,1,2} (3 threads) holds a sched-idle 1 and an
  // idle 2; CPU 3 is idle on a busy core {3,4}.
  Cpus llc = {Cpu(0).Load(1).Core(0), Cpu(1).SchedIdle().Core(0),
              Cpu(2).Idle().Core(0), Cpu(3).Idle().Core(3),
              Cpu(4).Load(1).Core(3)};
  loehle_choice c = Fast(cfg, 0, WithCoreIdle(llc));
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SMT_SIBLING);
  // Without the idle sibling, the sched-idle sibling beats CPU 3.
  llc[2] = Cpu(2).Load(1).Core(0);
  c = Fast(cfg, 0, WithCoreIdle(llc));
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(c.sched_idle_pick, 1);
}

// ---------------------------------------------------------------------------
// Seed 004 patch 2: IGNORE.

// seed 004 patch 2: "let's not special case SCHED_IDLE cpus at least in
// slowpath" -- they compete by load like any busy CPU.
TEST(PolicySlowIgnore, SchedIdleCpusAreBusyChosenByLoad) {
  for (bool wakee_si : {false, true}) {
    loehle_choice c = Slow(SiMode(LOEHLE_SI_IGNORE, wakee_si),
                           {Cpu(0).SchedIdle().Load(5), Cpu(1).Load(3),
                            Cpu(2).SchedIdle().Load(1), Cpu(3).Load(2)});
    EXPECT_EQ(c.cpu, 2) << wakee_si;
    EXPECT_EQ(c.reason, LOEHLE_REASON_LEAST_LOADED);
    EXPECT_EQ(c.sched_idle_pick, 0);
    EXPECT_EQ(c.idle_pick, 0);
    EXPECT_EQ(c.examined, 4u);
  }
}

// seed 004 patch 2: an idle CPU wins; SCHED_IDLE is never the reason.
TEST(PolicySlowIgnore, NeverReturnsSchedIdleReason) {
  loehle_choice c =
      Slow(SiMode(LOEHLE_SI_IGNORE, false),
           {Cpu(0).SchedIdle().Load(0), Cpu(1).Idle().Latency(5)});
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
  loehle_choice all =
      Slow(SiMode(LOEHLE_SI_IGNORE, false),
           {Cpu(0).SchedIdle().Load(3), Cpu(1).SchedIdle().Load(3)});
  EXPECT_EQ(all.cpu, 0);
  EXPECT_EQ(all.reason, LOEHLE_REASON_LEAST_LOADED);
}

// seed 004 patch 2 (as policy.h applies it to the fast path too): a
// sched-idle CPU is never chosen on wakeup.
TEST(PolicyFastIgnore, SchedIdleCpusNeverChosen) {
  FastCfg cfg;
  cfg.si = LOEHLE_SI_IGNORE;
  loehle_choice c =
      Fast(cfg, 0, {Cpu(0).SchedIdle(), Cpu(1).SchedIdle(), Cpu(2).Load(1)});
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.reason, LOEHLE_REASON_PREV_BUSY);
  EXPECT_EQ(c.idle_pick, 0);
  EXPECT_EQ(c.sched_idle_pick, 0);
}

// ---------------------------------------------------------------------------
// Seed 002: SMT idle-core preference, slow path.

// seed 002: prefer a CPU whose whole core is idle over an earlier idle CPU
// with a busy sibling.
TEST(PolicySlowSmt, IdleCoreBeatsEarlierIdleCpuWithBusySibling) {
  Cpus cpus;
  for (int i = 0; i < 8; ++i) {
    Cpu c(i);
    c.Core(AdjacentCore(i));
    if (i == 0 || i == 4 || i == 5)
      c.Idle().Latency(1);
    else
      c.Load(1);
    cpus.push_back(c);
  }
  loehle_choice c = Slow(SmtSlow(), WithCoreIdle(cpus));
  EXPECT_EQ(c.cpu, 4);
  EXPECT_EQ(c.core_idle, 1);
  EXPECT_EQ(c.ties, 2u);
  // With SMT off the first idle CPU stays.
  SlowCfg off = SmtSlow();
  off.smt = false;
  loehle_choice o = Slow(off, WithCoreIdle(cpus));
  EXPECT_EQ(o.cpu, 0);
  EXPECT_EQ(o.ties, 3u);
  EXPECT_EQ(o.pruned, 0u);
}

// The pinned-hog layout of issue 10: a busy thread on every core (CPUs 0,
// 2, 4, 6), so no core is idle and every idle odd CPU has the same key.
Cpus OneBusyThreadPerCore() {
  Cpus cpus;
  for (int i = 0; i < 8; ++i) {
    Cpu c(i);
    c.Core(AdjacentCore(i));
    if (i % 2)
      c.Idle().Latency(1);
    else
      c.Load(1);
    cpus.push_back(c);
  }
  return WithCoreIdle(cpus);
}

// seed 002: no idle core -> the first idle CPU remains FIRST's fallback.
TEST(PolicySlowSmt, KeepsFirstIdleCpuWhenNoIdleCore) {
  loehle_choice c = Slow(SmtSlow(), OneBusyThreadPerCore());
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SHALLOWEST);
  EXPECT_EQ(c.core_idle, 0);
  EXPECT_EQ(c.ties, 4u);
  EXPECT_EQ(c.pruned, 0u);
}

// seed 002 + seed 000 patch 2: pruning may save work, never change the
// answer. With no whole idle core every allowed idle CPU with the best key
// is a reservoir candidate: uniform over 1, 3, 5, 7 exactly as with SMT
// preference off (seen in the kernel before this rule: [0 289 0 130 0 15 0 5]).
TEST(PolicySlowSmt, ReservoirUniformOverPartlyBusyCoresWhenNoIdleCore) {
  const int kTrials = 40000;
  for (bool smt : {true, false}) {
    SlowCfg cfg = SmtSlow(LOEHLE_POLICY_RESERVOIR);
    cfg.smt = smt;
    auto hist = SlowHistogram(cfg, OneBusyThreadPerCore(), kTrials);
    EXPECT_LT(ChiSquareUniform(hist, {1, 3, 5, 7}, kTrials),
              ChiSquareCritical(3))
        << "smt " << smt;
  }
}

// seed 002 pruning, adjacent siblings, once the pick is on an idle core: a
// busy CPU prunes its siblings, and so does an idle CPU on a busy core.
TEST(PolicySlowSmt, PruneCountsAdjacentSiblings) {
  // core 0: idle/idle, core 2: idle/busy, core 4: busy/idle, core 6: busy.
  const bool idle[8] = {true, true, true, false, false, true, false, false};
  Cpus cpus;
  for (int i = 0; i < 8; ++i) {
    Cpu c(i);
    c.Core(AdjacentCore(i));
    if (idle[i])
      c.Idle().Latency(1);
    else
      c.Load(1);
    cpus.push_back(c);
  }
  loehle_choice c = Slow(SmtSlow(), WithCoreIdle(cpus));
  // 0, 1 examined (idle core, tie); 2 examined (prunes 3); 4 examined
  // (prunes 5); 6 examined (prunes 7).
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.examined, 5u);
  EXPECT_EQ(c.pruned, 3u);
  EXPECT_EQ(c.ties, 2u);
  EXPECT_EQ(c.core_idle, 1);
}

// seed 002 pruning, x86 interleaved siblings 0/4, 1/5, 2/6, 3/7.
TEST(PolicySlowSmt, PruneCountsInterleavedSiblings) {
  // core 0: 0, 4 idle; core 1: 1 idle, 5 busy; core 2: 2 busy, 6 idle;
  // core 3: 3, 7 busy.
  const bool idle[8] = {true, true, false, false, true, false, true, false};
  Cpus cpus;
  for (int i = 0; i < 8; ++i) {
    Cpu c(i);
    c.Core(InterleavedCore(i));
    if (idle[i])
      c.Idle().Latency(1);
    else
      c.Load(1);
    cpus.push_back(c);
  }
  cpus = WithCoreIdle(cpus);
  loehle_choice c = Slow(SmtSlow(), cpus);
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.examined, 5u);  // 0, 1, 2, 3, 4
  EXPECT_EQ(c.pruned, 3u);    // 5, 6, 7
  EXPECT_EQ(c.ties, 2u);
  auto hist = SlowHistogram(SmtSlow(LOEHLE_POLICY_RESERVOIR), cpus, 20000);
  EXPECT_EQ(hist.size(), 2u);
  EXPECT_GT(hist[0], 9000);
  EXPECT_GT(hist[4], 9000);
}

// Pruning never hides a CPU that would end the scan at once: under
// mainline (and wakee-aware, for a wakee that is not idle work) a
// sched-idle CPU is returned when reached, so the sibling of an idle CPU
// on a partly busy core is still examined when it runs idle work. Found by
// the simulator (xeon-64, schedidle: mainline packed nothing at 1 worker,
// the worker's sched-idle thread-major sibling having been pruned).
TEST(PolicySlowSmt, PruningNeverHidesASchedIdleCpuThatDecides) {
  // Adjacent siblings: core 0 idle/idle (the rank-0 pick), core 2: 2 idle,
  // 3 runs idle work.
  Cpus cpus = {Cpu(0).Core(0).Idle().Latency(1), Cpu(1).Core(0).Idle().Latency(1),
               Cpu(2).Core(2).Idle().Latency(1), Cpu(3).Core(2).SchedIdle()};
  cpus = WithCoreIdle(cpus);
  for (uint32_t mode : {LOEHLE_SI_MAINLINE, LOEHLE_SI_WAKEE_AWARE}) {
    SlowCfg cfg = SmtSlow();
    cfg.si = mode;
    loehle_choice c = Slow(cfg, cpus);
    EXPECT_EQ(c.cpu, 3) << "mode " << mode;
    EXPECT_EQ(c.reason, LOEHLE_REASON_SCHED_IDLE);
    EXPECT_EQ(c.pruned, 0u);
  }
  // Where a sched-idle CPU cannot decide, its core is pruned as before.
  for (uint32_t mode : {LOEHLE_SI_IDLE_FIRST, LOEHLE_SI_IGNORE}) {
    SlowCfg cfg = SmtSlow();
    cfg.si = mode;
    loehle_choice c = Slow(cfg, cpus);
    EXPECT_EQ(c.cpu, 0) << "mode " << mode;
    EXPECT_EQ(c.pruned, 1u);
  }
  SlowCfg idle_wakee = SmtSlow();
  idle_wakee.si = LOEHLE_SI_WAKEE_AWARE;
  idle_wakee.wakee_si = true;
  EXPECT_EQ(Slow(idle_wakee, cpus).cpu, 0);
  EXPECT_EQ(Slow(idle_wakee, cpus).pruned, 1u);
}

// The caller's test is a cheap superset (a CPU running idle work need not
// be sched-idle: a live claim, queued local work, or, under hierarchy, a
// refusal): such CPUs are examined, not pruned, and the answer is the one
// the scan gives without pruning at all. Interleaved siblings 0/4, 1/5,
// 2/6, 3/7; reservoir over the idle core 0/4.
TEST(PolicySlowSmt, PruningSparesIdleWorkCpusWithoutChangingTheAnswer) {
  Cpus cpus = {Cpu(0).Core(0).Idle().Latency(1), Cpu(1).Core(1).Idle().Latency(1),
               Cpu(2).Core(2).Load(5), Cpu(3).Core(3).Load(5),
               Cpu(4).Core(0).Idle().Latency(1), Cpu(5).Core(1).Load(1),
               Cpu(6).Core(2).SchedIdle(), Cpu(7).Core(3).Load(5)};
  cpus = WithCoreIdle(cpus);
  for (int variant = 0; variant < 2; ++variant) {
    // variant 0: CPU 6 runs idle work but is not sched-idle (claimed);
    // variant 1: sched-idle but refused to this wakee (hierarchy).
    Cpus v = cpus;
    if (variant == 0) v[6] = Cpu(6).Core(2).Load(1);
    if (variant == 1) v[6] = Cpu(6).Core(2).SchedIdle().Refused();
    for (bool prune : {true, false}) {
      std::mt19937 rng(99);
      loehle_slow_scan s;
      loehle_slow_init(&s, LOEHLE_POLICY_RESERVOIR, LOEHLE_SI_WAKEE_AWARE, prune, 0, 99);
      for (const Cpu& cpu : v) {
        loehle_cpu_facts f = cpu.facts();
        if (loehle_slow_pruned(&s, f.core, f.cpu == 6)) continue;
        const uint32_t r = loehle_slow_wants_rand(&s, &f) ? static_cast<uint32_t>(rng()) : 0;
        if (loehle_slow_step(&s, &f, r)) break;
      }
      loehle_choice c;
      loehle_slow_result(&s, &c);
      EXPECT_TRUE(c.cpu == 0 || c.cpu == 4) << "variant " << variant << " prune " << prune;
      if (prune) {
        EXPECT_EQ(c.pruned, 2u) << "variant " << variant;  // 5 and 7, never 6
        EXPECT_EQ(c.examined, 6u) << "variant " << variant;
      }
    }
  }
}

// Before the pick is on an idle core nothing is pruned: a busy CPU's
// sibling may be the only idle CPU, or a candidate of the tie group.
TEST(PolicySlowSmt, NoPruningBeforeAnIdleCore) {
  Cpus cpus;
  for (int i = 0; i < 8; ++i) {
    Cpu c(i);
    c.Core(AdjacentCore(i));
    if (i == 1)
      c.Idle().Latency(1);
    else
      c.Load(10 - i);
    cpus.push_back(c);
  }
  loehle_choice c = Slow(SmtSlow(), WithCoreIdle(cpus));
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.examined, 8u);
  EXPECT_EQ(c.pruned, 0u);
  // All busy: nothing is ever pruned and the least-loaded CPU is found.
  Cpus busy;
  for (int i = 0; i < 8; ++i)
    busy.push_back(Cpu(i).Core(AdjacentCore(i)).Load(i == 7 ? 0 : 5));
  loehle_choice b = Slow(SmtSlow(), WithCoreIdle(busy));
  EXPECT_EQ(b.cpu, 7);
  EXPECT_EQ(b.examined, 8u);
  EXPECT_EQ(b.pruned, 0u);
  EXPECT_EQ(b.reason, LOEHLE_REASON_LEAST_LOADED);
}

// Idle CPUs of a partly busy core all join the rank-1 tie group while no
// idle core is known; once one is the pick, such a core is skipped.
TEST(PolicySlowSmt, PartlyBusyCoreJoinsTieGroupUntilAnIdleCore) {
  // 4 threads per core: core 0 = {0,1,2,3} with 3 busy; core 4 all busy.
  Cpus cpus = {
      Cpu(0).Core(0).Idle().Latency(1), Cpu(1).Core(0).Idle().Latency(1),
      Cpu(2).Core(0).Idle().Latency(1), Cpu(3).Core(0).Load(1),
      Cpu(4).Core(4).Load(1),           Cpu(5).Core(4).Load(1),
      Cpu(6).Core(4).Load(1),           Cpu(7).Core(4).Load(1)};
  cpus = WithCoreIdle(cpus);
  loehle_choice c = Slow(SmtSlow(LOEHLE_POLICY_RESERVOIR), cpus);
  EXPECT_EQ(c.examined, 8u);
  EXPECT_EQ(c.pruned, 0u);
  EXPECT_EQ(c.ties, 3u);
  const int kTrials = 30000;
  auto hist = SlowHistogram(SmtSlow(LOEHLE_POLICY_RESERVOIR), cpus, kTrials);
  EXPECT_LT(ChiSquareUniform(hist, {0, 1, 2}, kTrials), ChiSquareCritical(2));
  // The same cores behind a whole idle core {8, 9}: every CPU of core 0
  // after the first, and of core 4 after the first, is skipped.
  Cpus behind = {Cpu(8).Core(8).Idle().Latency(1),
                 Cpu(9).Core(8).Idle().Latency(1)};
  behind.insert(behind.end(), cpus.begin(), cpus.end());
  loehle_choice b = Slow(SmtSlow(LOEHLE_POLICY_RESERVOIR), WithCoreIdle(behind));
  EXPECT_TRUE(b.cpu == 8 || b.cpu == 9) << b.cpu;
  EXPECT_EQ(b.examined, 4u);  // 8, 9, 0, 4
  EXPECT_EQ(b.pruned, 6u);
  EXPECT_EQ(b.ties, 2u);
}

// seed 002 key: (core rank, exit latency) -- rank first.
TEST(PolicySlowSmt, RankComesBeforeExitLatency) {
  Cpus cpus = {Cpu(0).Core(0).Idle().Latency(1), Cpu(1).Core(0).Load(1),
               Cpu(2).Core(2).Idle().Latency(500),
               Cpu(3).Core(2).Idle().Latency(500)};
  for (uint32_t policy :
       {LOEHLE_POLICY_RECENCY, LOEHLE_POLICY_FIRST, LOEHLE_POLICY_RESERVOIR}) {
    loehle_choice c = Slow(SmtSlow(policy), WithCoreIdle(cpus));
    EXPECT_TRUE(c.cpu == 2 || c.cpu == 3) << policy << " " << c.cpu;
    EXPECT_EQ(c.core_idle, 1) << policy;
    EXPECT_EQ(c.ties, 2u) << policy;
  }
  EXPECT_EQ(Slow(SmtSlow(), WithCoreIdle(cpus)).latency_key, 500u);
  // Unpublished idle core still beats a published busy-sibling CPU.
  Cpus unpub = {Cpu(0).Core(0).Idle().Latency(0), Cpu(1).Core(0).Load(1),
                Cpu(2).Core(2).Idle().Unpublished(),
                Cpu(3).Core(2).Idle().Unpublished()};
  loehle_choice u = Slow(SmtSlow(), WithCoreIdle(unpub));
  EXPECT_EQ(u.cpu, 2);
  EXPECT_EQ(u.latency_key, kUnpublished);
}

// seed 002 + seed 000 patch 2: ties of the full key go to the tie-break --
// reservoir is uniform among idle-core CPUs of equal latency only.
TEST(PolicySlowSmt, ReservoirUniformAmongIdleCoreCpusOfEqualLatency) {
  // Cores of 2: {0,1} idle lat 3; {2,3} idle lat 3; {4,5} idle lat 9;
  // {6,7}: 6 idle lat 0 with busy 7.
  Cpus cpus = {
      Cpu(0).Core(0).Idle().Latency(3), Cpu(1).Core(0).Idle().Latency(3),
      Cpu(2).Core(2).Idle().Latency(3), Cpu(3).Core(2).Idle().Latency(3),
      Cpu(4).Core(4).Idle().Latency(9), Cpu(5).Core(4).Idle().Latency(9),
      Cpu(6).Core(6).Idle().Latency(0), Cpu(7).Core(6).Load(1)};
  cpus = WithCoreIdle(cpus);
  const int kTrials = 100000;
  auto hist = SlowHistogram(SmtSlow(LOEHLE_POLICY_RESERVOIR), cpus, kTrials);
  EXPECT_LT(ChiSquareUniform(hist, {0, 1, 2, 3}, kTrials),
            ChiSquareCritical(3));
  loehle_choice c = Slow(SmtSlow(LOEHLE_POLICY_RESERVOIR), cpus);
  EXPECT_EQ(c.ties, 4u);
  EXPECT_EQ(c.pruned, 1u);  // CPU 7 after 6 (idle on a busy core)
}

// seed 002 pruning with core ids across the 64-bit words of the bitmap.
TEST(PolicySlowSmt, PruningAcrossWordBoundariesUpTo512Cpus) {
  // Adjacent pairs over 512 CPUs: core {0, 1} fully idle (the pick), every
  // later pair busy except the last core {510, 511}, fully idle.
  Cpus adj;
  for (int i = 0; i < 512; ++i) {
    Cpu c(i);
    c.Core(AdjacentCore(i));
    if (i <= 1 || i >= 510)
      c.Idle().Latency(2);
    else
      c.Load(1);
    adj.push_back(c);
  }
  loehle_choice a = Slow(SmtSlow(), WithCoreIdle(adj));
  EXPECT_EQ(a.cpu, 0);
  EXPECT_EQ(a.examined, 2u + 254u + 2u);
  EXPECT_EQ(a.pruned, 254u);
  EXPECT_EQ(a.ties, 4u);
  // Interleaved halves: CPU i and i + 256 share core i; core 0 idle.
  Cpus inter;
  for (int i = 0; i < 512; ++i) {
    Cpu c(i);
    c.Core(static_cast<uint32_t>(i % 256));
    if (i == 0 || i == 256 || i == 255)
      c.Idle().Latency(2);
    else
      c.Load(1);
    inter.push_back(c);
  }
  loehle_choice b = Slow(SmtSlow(), WithCoreIdle(inter));
  EXPECT_EQ(b.cpu, 0);
  EXPECT_EQ(b.examined, 257u);  // 0..256
  EXPECT_EQ(b.pruned, 255u);    // 257..511
  EXPECT_EQ(b.ties, 2u);
  // Explicit core ids on both sides of every word boundary up to 511,
  // behind a whole idle core 0.
  Cpus edges = {Cpu(0).Core(0).Idle().Latency(5).CoreIdle()};
  int id = 1;
  for (uint32_t core : {63u, 64u, 127u, 128u, 447u, 448u, 510u, 511u}) {
    edges.push_back(Cpu(id++).Core(core).Load(1));
  }
  for (uint32_t core : {63u, 64u, 127u, 128u, 447u, 448u, 510u, 511u}) {
    edges.push_back(Cpu(id++).Core(core).Idle().Latency(0).CoreIdle());
  }
  edges.push_back(Cpu(id++).Core(509).Idle().Latency(0).CoreIdle());
  loehle_choice e = Slow(SmtSlow(), edges);
  EXPECT_EQ(e.pruned, 8u);
  EXPECT_EQ(e.examined, 10u);
  EXPECT_EQ(e.cpu, id - 1);  // core 509 was never pruned, latency 0 wins
}

// ---------------------------------------------------------------------------
// Slow path beyond prev's group: the kernel's find_idlest_group() counts
// truly idle CPUs, so a group with idle CPUs beats one with only sched-idle
// or busy ones; seed 002's preference applies across groups too.

// seed 004 patch 1 on fork: a truly idle CPU in another node beats a
// sched-idle CPU in prev's node (the RFC's slow path never stops at one).
TEST(PolicySlowGroups, IdleFirstLeavesAGroupOfOnlySchedIdleCpus) {
  SlowCfg cfg = SiMode(LOEHLE_SI_IDLE_FIRST, false);
  loehle_choice home = Slow(cfg, {Cpu(0).SchedIdle(), Cpu(1).Load(1)});
  ASSERT_EQ(home.reason, LOEHLE_REASON_SCHED_IDLE);
  EXPECT_EQ(home.si_fallback, 1);
  EXPECT_EQ(loehle_slow_look_elsewhere(&home, 0),
            static_cast<uint32_t>(LOEHLE_GROUP_IDLE_CPUS));
  loehle_choice other = Slow(cfg, {Cpu(4).Load(1), Cpu(5).Idle().Latency(9)});
  EXPECT_TRUE(loehle_slow_other_wins(&home, &other, 0));
  // Another group with nothing idle either: the sched-idle CPU stays.
  loehle_choice busy = Slow(cfg, {Cpu(4).Load(0), Cpu(5).Load(0)});
  EXPECT_FALSE(loehle_slow_other_wins(&home, &busy, 0));
}

// mainline and wakee-aware return a sched-idle CPU at once (the kernel's
// "if (choose_sched_idle_rq(rq, p)) return i;"): the fork stays home.
TEST(PolicySlowGroups, CountsAsIdleStaysHome) {
  for (uint32_t mode : {LOEHLE_SI_MAINLINE, LOEHLE_SI_WAKEE_AWARE}) {
    loehle_choice home =
        Slow(SiMode(mode, false), {Cpu(0).SchedIdle(), Cpu(1).Load(1)});
    EXPECT_EQ(home.si_fallback, 0) << mode;
    EXPECT_EQ(loehle_slow_look_elsewhere(&home, 0),
              static_cast<uint32_t>(LOEHLE_GROUP_STAY))
        << mode;
  }
}

// No idle CPU (ignore: sched-idle CPUs are busy): the group with the most
// idle CPUs; an equally bad answer there leaves the fork at home.
TEST(PolicySlowGroups, LeastLoadedLooksForIdleCpus) {
  SlowCfg cfg = SiMode(LOEHLE_SI_IGNORE, false);
  loehle_choice home = Slow(cfg, {Cpu(0).SchedIdle().Load(1), Cpu(1).Load(2)});
  ASSERT_EQ(home.reason, LOEHLE_REASON_LEAST_LOADED);
  EXPECT_EQ(loehle_slow_look_elsewhere(&home, 0),
            static_cast<uint32_t>(LOEHLE_GROUP_IDLE_CPUS));
  loehle_choice other = Slow(cfg, {Cpu(4).Load(0)});
  EXPECT_FALSE(loehle_slow_other_wins(&home, &other, 0));
  loehle_choice idle = Slow(cfg, {Cpu(4).Idle()});
  EXPECT_TRUE(loehle_slow_other_wins(&home, &idle, 0));
}

// seed 002 across groups: only partly busy cores at home, a whole idle core
// elsewhere wins; another partly busy core does not.
TEST(PolicySlowGroups, IdleCoreElsewhereBeatsBusySiblingAtHome) {
  Cpus home_cpus = WithCoreIdle({Cpu(0).Core(0).Idle(), Cpu(1).Core(0).Load(1)});
  loehle_choice home = Slow(SmtSlow(), home_cpus);
  EXPECT_EQ(loehle_slow_look_elsewhere(&home, 1),
            static_cast<uint32_t>(LOEHLE_GROUP_IDLE_CORES));
  loehle_choice core =
      Slow(SmtSlow(), WithCoreIdle({Cpu(4).Core(4).Idle(), Cpu(5).Core(4).Idle()}));
  EXPECT_TRUE(loehle_slow_other_wins(&home, &core, 1));
  loehle_choice partly = Slow(SmtSlow(), home_cpus);
  EXPECT_FALSE(loehle_slow_other_wins(&home, &partly, 1));
  // SMT preference off: an idle CPU is as good as it gets.
  EXPECT_EQ(loehle_slow_look_elsewhere(&home, 0),
            static_cast<uint32_t>(LOEHLE_GROUP_STAY));
  EXPECT_FALSE(loehle_slow_other_wins(&home, &core, 0));
  // A whole idle core at home stays home.
  EXPECT_EQ(loehle_slow_look_elsewhere(&core, 1),
            static_cast<uint32_t>(LOEHLE_GROUP_STAY));
}

// ---------------------------------------------------------------------------
// Fast path (select_idle_sibling order) with and without seed 002.

FastCfg SmtFast() {
  FastCfg cfg;
  cfg.smt = true;
  return cfg;
}

// select_idle_sibling: prev idle (and its core idle under seed 002) first.
TEST(PolicyFastOrder, PrevIdleWithIdleCoreDecidedAtBegin) {
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Idle(), Cpu(1).Core(0).Idle(),
                           Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Idle()});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.reason, LOEHLE_REASON_PREV_IDLE);
  EXPECT_EQ(c.examined, 1u);
  EXPECT_EQ(c.core_idle, 1);
  EXPECT_EQ(c.idle_pick, 1);
  loehle_fast_scan s;
  loehle_cpu_facts prev = llc[0].facts();
  EXPECT_NE(loehle_fast_begin(&s, LOEHLE_SI_MAINLINE, 1, 0, &prev), 0);
  EXPECT_NE(loehle_fast_offer(&s, &llc[2].facts()), 0);
}

// seed 002: an idle core in the LLC beats prev idle whose sibling is busy.
TEST(PolicyFastOrder, IdleCoreBeatsPrevIdleWithBusySibling) {
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Idle(), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Idle()});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CORE);
  EXPECT_EQ(c.core_idle, 1);
  EXPECT_EQ(c.examined, 3u);
}

// select_idle_sibling step 3: prev idle (busy sibling) when no idle core.
TEST(PolicyFastOrder, PrevIdleBeatsOtherIdleCpusWithoutIdleCore) {
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Idle(), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Load(1)});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 0);
  EXPECT_EQ(c.reason, LOEHLE_REASON_PREV_IDLE);
  EXPECT_EQ(c.core_idle, 0);
  // prev counts idle from the start, so core 2 is pruned after CPU 2.
  EXPECT_EQ(c.examined, 3u);
  EXPECT_EQ(c.pruned, 1u);
}

// select_idle_smt before select_idle_cpu: prev's idle sibling beats an
// earlier idle CPU on another (busy) core.
TEST(PolicyFastOrder, PrevSmtSiblingBeatsEarlierIdleCpu) {
  // Scan wraps from CPU 2; prev 0 busy, its sibling 1 idle, seen last.
  Cpus llc = WithCoreIdle({Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Load(1),
                           Cpu(4).Core(4).Load(1), Cpu(5).Core(4).Idle(),
                           Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Idle()});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 1);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SMT_SIBLING);
  EXPECT_EQ(c.sched_idle_pick, 0);
  // 2 (fallback, prunes 2), 3 pruned, 4 (prunes 4), 5 pruned, 1 examined.
  EXPECT_EQ(c.examined, 4u);
  EXPECT_EQ(c.pruned, 2u);
}

// seed 002: prev's core is never pruned, whatever its CPUs look like.
TEST(PolicyFastOrder, PrevCoreNeverPruned) {
  // 4 threads per core; prev 0 and CPU 1 busy; CPU 4 (busy sibling 5)
  // becomes the fallback, yet prev's siblings 2 and 3 are still examined.
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                           Cpu(4).Core(4).Idle(), Cpu(5).Core(4).Load(1),
                           Cpu(2).Core(0).Load(1), Cpu(3).Core(0).Idle()});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 3);
  EXPECT_EQ(c.reason, LOEHLE_REASON_SMT_SIBLING);
  EXPECT_EQ(c.examined, 5u);  // prev, 1, 4, 2, 3
  EXPECT_EQ(c.pruned, 1u);    // 5
}

// select_idle_cpu: first idle CPU in scan order when no sibling is idle.
TEST(PolicyFastOrder, FirstIdleCpuWhenNoIdleCoreOrSibling) {
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).Load(1), Cpu(3).Core(2).Idle(),
                           Cpu(4).Core(4).Idle(), Cpu(5).Core(4).Load(1)});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 3);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(c.core_idle, 0);
}

// seed 002 fast-path pruning: exact counts, 4 cores x 2 adjacent threads.
TEST(PolicyFastOrder, PruneCountsAdjacentSiblings) {
  // prev 0 busy; 1 busy (prev core, no fallback yet); 2 idle/3 busy;
  // 4 busy/5 idle; 6, 7 busy.
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Load(1),
                           Cpu(4).Core(4).Load(1), Cpu(5).Core(4).Idle(),
                           Cpu(6).Core(6).Load(1), Cpu(7).Core(6).Load(1)});
  loehle_choice c = Fast(SmtFast(), 0, llc);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(c.examined, 5u);  // prev, 1, 2, 4, 6
  EXPECT_EQ(c.pruned, 3u);    // 3, 5, 7
  // Before the fallback a busy CPU prunes nothing: the idle 3 is found.
  Cpus late = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                            Cpu(2).Core(2).Load(1), Cpu(3).Core(2).Idle(),
                            Cpu(4).Core(4).Load(1), Cpu(5).Core(4).Load(1)});
  loehle_choice l = Fast(SmtFast(), 0, late);
  EXPECT_EQ(l.cpu, 3);
  EXPECT_EQ(l.examined, 5u);  // prev, 1, 2, 3, 4
  EXPECT_EQ(l.pruned, 1u);    // 5
}

// seed 002 off: the first idle CPU ends the scan; nothing is pruned.
TEST(PolicyFastOrder, SmtOffFirstIdleWinsNothingPruned) {
  Cpus llc = WithCoreIdle({Cpu(0).Core(0).Load(1), Cpu(1).Core(0).Load(1),
                           Cpu(2).Core(2).Idle(), Cpu(3).Core(2).Load(1),
                           Cpu(4).Core(4).Idle(), Cpu(5).Core(4).Idle()});
  loehle_choice c = Fast(FastCfg{}, 0, llc);
  EXPECT_EQ(c.cpu, 2);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(c.examined, 3u);
  EXPECT_EQ(c.pruned, 0u);
  // Without SMT preference an idle prev is decided at once.
  llc[0] = Cpu(0).Core(0).Idle();
  loehle_choice p = Fast(FastCfg{}, 0, llc);
  EXPECT_EQ(p.cpu, 0);
  EXPECT_EQ(p.reason, LOEHLE_REASON_PREV_IDLE);
  EXPECT_EQ(p.examined, 1u);
}

// select_idle_sibling: nothing idle -> target (prev), not to be claimed.
// Nothing idle and no idle work in the LLC: the walk's overload cut-off
// skips the scan, so only prev is examined.
TEST(PolicyFastOrder, NothingIdlePrevBusy) {
  for (bool smt : {false, true}) {
    FastCfg cfg;
    cfg.smt = smt;
    Cpus llc;
    for (int i = 0; i < 6; ++i)
      llc.push_back(Cpu(i).Core(AdjacentCore(i)).Load(i));
    loehle_choice c = Fast(cfg, 3, WithCoreIdle(llc));
    EXPECT_EQ(c.cpu, 3) << smt;
    EXPECT_EQ(c.reason, LOEHLE_REASON_PREV_BUSY);
    EXPECT_EQ(c.idle_pick, 0);
    EXPECT_EQ(c.examined, 1u);
    EXPECT_EQ(c.pruned, 0u);
  }
}

// select_idle_sibling scans "& p->cpus_ptr": disallowed CPUs, prev included,
// are never chosen nor examined; an empty mask leaves prev, busy.
TEST(PolicyFastOrder, DisallowedNeverChosenEmptyMaskPrevBusy) {
  Cpus llc = {Cpu(0).Idle().Disallowed(), Cpu(1).Idle().Disallowed(),
              Cpu(2).SchedIdle().Disallowed(), Cpu(3).Idle()};
  loehle_choice c = Fast(FastCfg{}, 0, llc);
  EXPECT_EQ(c.cpu, 3);
  EXPECT_EQ(c.reason, LOEHLE_REASON_IDLE_CPU);
  EXPECT_EQ(c.examined, 2u);  // prev's facts, then 3
  llc[3].Disallowed();
  loehle_choice e = Fast(FastCfg{}, 0, llc);
  EXPECT_EQ(e.cpu, 0);
  EXPECT_EQ(e.reason, LOEHLE_REASON_PREV_BUSY);
  EXPECT_EQ(e.idle_pick, 0);
  FastCfg idle_first;
  idle_first.si = LOEHLE_SI_IDLE_FIRST;
  Cpus si_prev = {Cpu(0).SchedIdle().Disallowed(), Cpu(1).Load(1)};
  loehle_choice s = Fast(idle_first, 0, si_prev);
  EXPECT_EQ(s.reason, LOEHLE_REASON_PREV_BUSY);
  EXPECT_EQ(s.sched_idle_pick, 0);
}

// A one-CPU LLC: prev alone.
TEST(PolicyFastOrder, SingleCpuLlc) {
  EXPECT_EQ(Fast(FastCfg{}, 5, {Cpu(5).Idle()}).reason,
            LOEHLE_REASON_PREV_IDLE);
  loehle_choice busy = Fast(SmtFast(), 5, {Cpu(5).Load(3)});
  EXPECT_EQ(busy.cpu, 5);
  EXPECT_EQ(busy.reason, LOEHLE_REASON_PREV_BUSY);
  EXPECT_EQ(busy.examined, 1u);
}

}  // namespace
