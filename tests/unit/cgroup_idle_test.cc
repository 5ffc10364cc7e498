// Host tests for include/loehle/cgroup_idle.h: what idle work is under the
// three --sched-idle-scope values, and the preemptibility rule of seed 004's
// review, over small cgroup trees (the seed's kubepods tree, Josh Don's
// root-level idle cgroup, nested idle groups, a SCHED_IDLE task inside a
// non-idle group, a wakee inside the idle subtree).

#include "loehle/cgroup_idle.h"
#include "loehle/policy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <thread>

namespace {

// A cgroup tree by path: "/" is the root, "/kubepods/besteffort" a group
// whose parent is "/kubepods". Ids are dense, in creation order.
class Tree {
 public:
  Tree& Group(const std::string& path, bool idle = false) {
    groups_[path] = {next_id_++, idle};
    return *this;
  }
  void SetIdle(const std::string& path, bool idle) { groups_.at(path).idle = idle; }

  // The path of a task in `group`, built as scx/loehle.bpf.c builds it:
  // from the task's own group up to the root's child.
  loehle_cg_path PathOf(const std::string& group, bool sched_idle = false) const {
    loehle_cg_path p;
    loehle_cg_path_init(&p, sched_idle);
    for (std::string g = group; g != "/"; g = Parent(g)) {
      const Info& info = groups_.at(g);
      loehle_cg_path_push_parent(&p, info.id, info.idle);
    }
    return p;
  }

 private:
  struct Info {
    uint32_t id;
    bool idle;
  };
  static std::string Parent(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == 0 ? "/" : path.substr(0, slash);
  }
  std::map<std::string, Info> groups_;
  uint32_t next_id_ = 2;  // the root's css id is 1
};

// Abel Wu's production tree (seed 004, patch 1 and the replies):
//   root -> {kubepods -> {guaranteed, besteffort (cpu.idle=1)},
//            system.slice -> containerd}
Tree Kubepods() {
  Tree t;
  t.Group("/kubepods").Group("/kubepods/guaranteed")
      .Group("/kubepods/besteffort", true)
      .Group("/system.slice").Group("/system.slice/containerd");
  return t;
}

bool MayPreempt(const loehle_cg_path& running, const loehle_cg_path& wakee) {
  return loehle_cg_may_preempt(&running, &wakee) != 0;
}

// Josh Don: "a cpu currently only running tasks in your besteffort
// container ... should be considered as a good target for a waking task in
// the guaranteed container, and not a good target for a waking task in the
// containerd container."
TEST(CgroupIdleRule, SeedTreeGuaranteedMayPreemptBesteffortContainerdMayNot) {
  const Tree t = Kubepods();
  const loehle_cg_path hog = t.PathOf("/kubepods/besteffort");
  EXPECT_TRUE(MayPreempt(hog, t.PathOf("/kubepods/guaranteed")));
  EXPECT_FALSE(MayPreempt(hog, t.PathOf("/system.slice/containerd")));
  // Vincent Guittot: "kubepods vs system.slice is not sched_idle when
  // comparing the entities" -- nor is kubepods against a task of the root.
  EXPECT_FALSE(MayPreempt(hog, t.PathOf("/")));
  // A task in kubepods itself meets besteffort (idle) as a sibling entity.
  EXPECT_TRUE(MayPreempt(hog, t.PathOf("/kubepods")));
}

TEST(CgroupIdleRule, SameGroupComparesTheTasksPolicies) {
  const Tree t = Kubepods();
  const std::string g = "/kubepods/besteffort";
  // Both are normal tasks of the idle group: neither is idle against the
  // other.
  EXPECT_FALSE(MayPreempt(t.PathOf(g), t.PathOf(g)));
  EXPECT_TRUE(MayPreempt(t.PathOf(g, /*sched_idle=*/true), t.PathOf(g)));
  EXPECT_FALSE(MayPreempt(t.PathOf(g, true), t.PathOf(g, true)));
  EXPECT_FALSE(MayPreempt(t.PathOf(g), t.PathOf(g, true)));
}

// Josh Don: "everything inside a root-level sched_idle cgroup is trivially
// preemptible by a task from another hierarchy".
TEST(CgroupIdleRule, RootLevelIdleGroupIsPreemptibleFromAnyOtherHierarchy) {
  Tree t;
  t.Group("/batch", true).Group("/batch/x").Group("/batch/y").Group("/web")
      .Group("/web/api");
  const loehle_cg_path batch_task = t.PathOf("/batch/x");
  EXPECT_TRUE(MayPreempt(batch_task, t.PathOf("/")));
  EXPECT_TRUE(MayPreempt(batch_task, t.PathOf("/web")));
  EXPECT_TRUE(MayPreempt(batch_task, t.PathOf("/web/api")));
  // Inside the idle group, x and y are ordinary siblings.
  EXPECT_FALSE(MayPreempt(batch_task, t.PathOf("/batch/y")));
  // A SCHED_IDLE wakee of the root is idle against the idle group too.
  EXPECT_FALSE(MayPreempt(batch_task, t.PathOf("/", true)));
}

TEST(CgroupIdleRule, NestedIdleGroupsCompareUnderTheCommonAncestor) {
  Tree t;
  t.Group("/a", true).Group("/a/b", true).Group("/a/c").Group("/a/d", true);
  const loehle_cg_path run = t.PathOf("/a/b");
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/a/c")));   // b idle, c not
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/a")));     // b idle, a normal task
  EXPECT_FALSE(MayPreempt(run, t.PathOf("/a/d")));  // both idle
  EXPECT_FALSE(MayPreempt(run, t.PathOf("/a", true)));
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/")));      // a idle at the root
}

// An idle group below a non-idle sibling of the wakee's branch competes by
// weight there: not preemptible at once, though it is idle work.
TEST(CgroupIdleRule, IdleGroupDeeperThanTheCommonAncestorsChildDoesNotCount) {
  Tree t;
  t.Group("/a").Group("/a/b").Group("/a/b/c", true).Group("/a/d");
  const loehle_cg_path run = t.PathOf("/a/b/c");
  EXPECT_FALSE(MayPreempt(run, t.PathOf("/a/d")));
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/a/b")));  // c idle vs a task of b
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &run));
}

// Seed 003's own case, inside a non-idle group: the SCHED_IDLE task is
// preemptible by its group's normal tasks, not by another group's.
TEST(CgroupIdleRule, SchedIdleTaskInsideANonIdleGroup) {
  Tree t;
  t.Group("/g").Group("/h");
  const loehle_cg_path run = t.PathOf("/g", /*sched_idle=*/true);
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/g")));
  EXPECT_FALSE(MayPreempt(run, t.PathOf("/h")));
  EXPECT_FALSE(MayPreempt(run, t.PathOf("/")));
  // The task scope knows no groups: any normal wakee preempts.
  const loehle_cg_path other = t.PathOf("/h");
  EXPECT_TRUE(loehle_cg_preempts(LOEHLE_SCOPE_TASK, &run, &other));
  EXPECT_FALSE(loehle_cg_preempts(LOEHLE_SCOPE_HIERARCHY, &run, &other));
}

// The wakee inside the idle subtree: under cgroup it is idle work and
// yields; under hierarchy it preempts only what its own branch may.
TEST(CgroupIdleRule, WakeeInsideTheIdleSubtree) {
  Tree t = Kubepods();
  t.Group("/kubepods/besteffort/pod1").Group("/kubepods/besteffort/pod2");
  const loehle_cg_path run = t.PathOf("/kubepods/besteffort/pod1");
  const loehle_cg_path wakee = t.PathOf("/kubepods/besteffort/pod2");
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &wakee));
  EXPECT_TRUE(loehle_cg_wakee_yields(LOEHLE_SCOPE_CGROUP, &wakee));
  EXPECT_FALSE(loehle_cg_preempts(LOEHLE_SCOPE_CGROUP, &run, &wakee));
  EXPECT_FALSE(loehle_cg_wakee_yields(LOEHLE_SCOPE_HIERARCHY, &wakee));
  EXPECT_FALSE(MayPreempt(run, wakee));  // pod1 and pod2: non-idle siblings
  // ...but a besteffort pod is preemptible by guaranteed work all the same.
  EXPECT_TRUE(MayPreempt(run, t.PathOf("/kubepods/guaranteed")));
}

TEST(CgroupIdleScope, WhatIsIdleWork) {
  const Tree t = Kubepods();
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  const loehle_cg_path guaranteed = t.PathOf("/kubepods/guaranteed");
  const loehle_cg_path sched_idle = t.PathOf("/kubepods/guaranteed", true);
  EXPECT_FALSE(loehle_cg_idle_work(LOEHLE_SCOPE_TASK, &besteffort));
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &besteffort));
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_HIERARCHY, &besteffort));
  for (uint32_t scope = 0; scope < LOEHLE_NR_SCOPES; ++scope) {
    EXPECT_FALSE(loehle_cg_idle_work(scope, &guaranteed)) << scope;
    EXPECT_TRUE(loehle_cg_idle_work(scope, &sched_idle)) << scope;
  }
}

// The three-way table for a CPU running only besteffort work: who
// treats it as sched-idle and preempts there.
TEST(CgroupIdleScope, SeedTreeAcrossTheThreeScopes) {
  const Tree t = Kubepods();
  const loehle_cg_path hog = t.PathOf("/kubepods/besteffort");
  const loehle_cg_path guaranteed = t.PathOf("/kubepods/guaranteed");
  const loehle_cg_path containerd = t.PathOf("/system.slice/containerd");
  // task: the hog is not idle work, so the CPU is not sched-idle at all.
  EXPECT_FALSE(loehle_cg_idle_work(LOEHLE_SCOPE_TASK, &hog));
  // cgroup: sched-idle, and both wakees may take and preempt it.
  EXPECT_FALSE(loehle_cg_refused(LOEHLE_SCOPE_CGROUP, &hog, &containerd));
  EXPECT_TRUE(loehle_cg_preempts(LOEHLE_SCOPE_CGROUP, &hog, &containerd));
  EXPECT_TRUE(loehle_cg_preempts(LOEHLE_SCOPE_CGROUP, &hog, &guaranteed));
  // hierarchy: guaranteed only.
  EXPECT_FALSE(loehle_cg_refused(LOEHLE_SCOPE_HIERARCHY, &hog, &guaranteed));
  EXPECT_TRUE(loehle_cg_refused(LOEHLE_SCOPE_HIERARCHY, &hog, &containerd));
  EXPECT_TRUE(loehle_cg_preempts(LOEHLE_SCOPE_HIERARCHY, &hog, &guaranteed));
  EXPECT_FALSE(loehle_cg_preempts(LOEHLE_SCOPE_HIERARCHY, &hog, &containerd));
  // Neither wakee yields as a whole under the hierarchy scope.
  EXPECT_FALSE(loehle_cg_wakee_yields(LOEHLE_SCOPE_HIERARCHY, &containerd));
}

// cpu.idle toggled at run time: the next path read decides.
TEST(CgroupIdleScope, TogglingCpuIdleChangesTheAnswer) {
  Tree t = Kubepods();
  const loehle_cg_path guaranteed = t.PathOf("/kubepods/guaranteed");
  EXPECT_TRUE(MayPreempt(t.PathOf("/kubepods/besteffort"), guaranteed));
  t.SetIdle("/kubepods/besteffort", false);
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  EXPECT_FALSE(MayPreempt(besteffort, guaranteed));
  EXPECT_FALSE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &besteffort));
}

// Paths deeper than LOEHLE_CG_LEVELS: an idle group below the kept levels
// still makes idle work; a decision that needs an unkept level refuses.
TEST(CgroupIdlePath, DeeperThanTheKeptLevels) {
  Tree t;
  std::string g;
  for (int d = 1; d <= LOEHLE_CG_LEVELS + 2; ++d) {
    g += "/l" + std::to_string(d);
    t.Group(g, d == LOEHLE_CG_LEVELS + 2);
    if (d == LOEHLE_CG_LEVELS) t.Group(g + "/other");
  }
  const loehle_cg_path deep = t.PathOf(g);
  EXPECT_EQ(deep.depth, LOEHLE_CG_LEVELS + 2);
  EXPECT_EQ(deep.idle_levels, 0);
  EXPECT_TRUE(deep.idle_below);
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &deep));
  // They part below the kept levels: unknown, so refused.
  std::string sibling = g.substr(0, g.rfind('/')) + "/x";
  t.Group(sibling);
  EXPECT_FALSE(MayPreempt(deep, t.PathOf(sibling)));
  // They part within the kept levels: decided as usual (l8 vs other, both
  // non-idle).
  std::string at_levels;
  for (int d = 1; d <= LOEHLE_CG_LEVELS; ++d) at_levels += "/l" + std::to_string(d);
  EXPECT_FALSE(MayPreempt(deep, t.PathOf(at_levels + "/other")));
}

// A walk that stopped short of the root (scx/loehle.bpf.c walks at most 32
// levels) holds the bottom of the path: the rule cannot align it with
// another path and refuses, even where the kept ids would match; the
// idleness it saw still makes idle work.
TEST(CgroupIdlePath, CutPathIsRefusedButKeepsItsIdleness) {
  Tree t = Kubepods();
  loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  const loehle_cg_path guaranteed = t.PathOf("/kubepods/guaranteed");
  ASSERT_TRUE(MayPreempt(besteffort, guaranteed));
  loehle_cg_path_cut(&besteffort);
  EXPECT_FALSE(MayPreempt(besteffort, guaranteed));
  EXPECT_TRUE(loehle_cg_idle_work(LOEHLE_SCOPE_CGROUP, &besteffort));
  loehle_cg_path cut_wakee = guaranteed;
  loehle_cg_path_cut(&cut_wakee);
  EXPECT_FALSE(MayPreempt(t.PathOf("/kubepods/besteffort"), cut_wakee));
  loehle_cg_path fresh = besteffort;
  loehle_cg_path_init(&fresh, 0);
  EXPECT_EQ(fresh.cut, 0);
}

TEST(CgroupIdlePath, RootTaskHasAnEmptyPath) {
  const loehle_cg_path root = Tree().PathOf("/", true);
  EXPECT_EQ(root.depth, 0);
  EXPECT_EQ(root.idle_levels, 0);
  EXPECT_TRUE(root.task_idle);
  // Two root tasks: the policies decide, as before any cgroup.
  EXPECT_TRUE(MayPreempt(root, Tree().PathOf("/")));
  EXPECT_FALSE(MayPreempt(Tree().PathOf("/"), Tree().PathOf("/")));
}

// sched_idle_refused counts refusals only where scans read them: the
// wakee-aware mode (loehle_counts_idle ignores preempt_refused otherwise).
TEST(CgroupIdleRule, RefusalsCountOnlyUnderWakeeAware) {
  EXPECT_TRUE(loehle_cg_refusal_counts(LOEHLE_SI_WAKEE_AWARE));
  for (uint32_t mode : {LOEHLE_SI_MAINLINE, LOEHLE_SI_IDLE_FIRST, LOEHLE_SI_IGNORE}) {
    EXPECT_FALSE(loehle_cg_refusal_counts(mode)) << mode;
    loehle_cpu_facts refused{};
    refused.sched_idle = 1;
    refused.preempt_refused = 1;
    loehle_cpu_facts taken = refused;
    taken.preempt_refused = 0;
    // The refusal changes nothing the mode decides.
    EXPECT_EQ(loehle_counts_idle(mode, 0, &refused), loehle_counts_idle(mode, 0, &taken)) << mode;
  }
}

bool SamePath(const loehle_cg_path& a, const loehle_cg_path& b) {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

// Why a CPU's record is read under a sequence count: the tick rebuilds a
// besteffort hog's path in place, one group at a time, and the path half
// built ([besteffort] under the root) lets a containerd wakee preempt.
TEST(CgroupIdleRecord, HalfBuiltBesteffortPathWouldLetContainerdPreempt) {
  const Tree t = Kubepods();
  const loehle_cg_path containerd = t.PathOf("/system.slice/containerd");
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  ASSERT_FALSE(MayPreempt(besteffort, containerd));
  loehle_cg_path half;
  loehle_cg_path_init(&half, 0);
  loehle_cg_path_push_parent(&half, besteffort.ids[1], 1);  // not yet kubepods
  EXPECT_TRUE(MayPreempt(half, containerd));
}

TEST(CgroupIdleRecord, StoredPathLoadsWhole) {
  const Tree t = Kubepods();
  loehle_cg_record record{};
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  loehle_cg_record_store(&record, &besteffort);
  loehle_cg_path read;
  EXPECT_TRUE(loehle_cg_record_load(&record, &read));
  EXPECT_TRUE(SamePath(read, besteffort));
  EXPECT_EQ(record.seq % 2, 0u);
}

TEST(CgroupIdleRecord, OddOrMovedSequenceIsTorn) {
  EXPECT_TRUE(loehle_cg_seq_whole(4, 4));
  EXPECT_FALSE(loehle_cg_seq_whole(5, 5));  // read while written
  EXPECT_FALSE(loehle_cg_seq_whole(4, 6));  // rewritten during the read
  EXPECT_FALSE(loehle_cg_seq_whole(4, 5));
  EXPECT_TRUE(loehle_cg_seq_whole(0xfffffffe, 0xfffffffe));
}

// A torn copy decides nothing: not idle work, refused under HIERARCHY
// (and only there: the other scopes never refuse), never preempted.
TEST(CgroupIdleRecord, TornReadIsRefusedAndNeverPreempted) {
  const Tree t = Kubepods();
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  const loehle_cg_path guaranteed = t.PathOf("/kubepods/guaranteed");
  for (uint32_t scope : {LOEHLE_SCOPE_TASK, LOEHLE_SCOPE_CGROUP, LOEHLE_SCOPE_HIERARCHY}) {
    const loehle_cg_path idle_task = t.PathOf("/kubepods/besteffort", true);
    EXPECT_TRUE(loehle_cg_idle_work_as_read(scope, 1, &idle_task)) << scope;
    EXPECT_FALSE(loehle_cg_idle_work_as_read(scope, 0, &idle_task)) << scope;
    EXPECT_TRUE(loehle_cg_preempts_as_read(scope, 1, &idle_task, &guaranteed)) << scope;
    EXPECT_FALSE(loehle_cg_preempts_as_read(scope, 0, &idle_task, &guaranteed)) << scope;
    EXPECT_EQ(loehle_cg_refused_as_read(scope, 0, &besteffort, &guaranteed),
              scope == LOEHLE_SCOPE_HIERARCHY) << scope;
    EXPECT_EQ(loehle_cg_refused_as_read(scope, 1, &besteffort, &guaranteed),
              loehle_cg_refused(scope, &besteffort, &guaranteed)) << scope;
  }
}

// One writer rewrites a record as a CPU does (each store alternating a
// besteffort hog's path and a root task's), a reader on another thread
// loads it: every copy said to be whole is one of the two. Without the
// sequence count, copies mixing the two show up within milliseconds on
// two cores. The check means something only when loads and stores did
// interleave, so the test proves they did: a load that found a store in
// progress (torn) is one where a mixed copy could have been taken, and a
// whole load that differs from the one before shows the writer ran in
// between. The reader goes on until it has made kMinLoads loads and seen
// kMinOverlaps of each, for at most kMaxSeconds, and fails without them
// (two threads that never interleave cannot pass by showing nothing; on
// one CPU, by time slicing, the counts still come within a few seconds).
TEST(CgroupIdleRecord, ConcurrentRewritesNeverLoadAMixedPathAsWhole) {
  constexpr uint64_t kMinOverlaps = 100;
  constexpr uint64_t kMinLoads = 1000000;
  constexpr int kMaxSeconds = 10;
  const Tree t = Kubepods();
  const loehle_cg_path besteffort = t.PathOf("/kubepods/besteffort");
  const loehle_cg_path root = t.PathOf("/");
  const loehle_cg_path containerd = t.PathOf("/system.slice/containerd");
  loehle_cg_record record{};
  loehle_cg_record_store(&record, &root);
  std::atomic<bool> stop{false};
  std::atomic<bool> writing{false};
  std::thread writer([&] {
    writing = true;
    for (uint64_t k = 0; !stop.load(std::memory_order_relaxed); k++)
      loehle_cg_record_store(&record, k % 2 ? &besteffort : &root);
  });
  while (!writing.load()) std::this_thread::yield();
  uint64_t whole = 0, torn = 0, changes = 0, mixed = 0, wrong_preempts = 0;
  bool last_was_root = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kMaxSeconds);
  for (uint64_t k = 0;; k++) {
    if (k % 4096 == 0 &&
        ((k >= kMinLoads && torn >= kMinOverlaps && changes >= kMinOverlaps) ||
         std::chrono::steady_clock::now() >= deadline))
      break;
    loehle_cg_path read;
    const int ok = loehle_cg_record_load(&record, &read);
    if (!ok) {
      torn++;
      continue;
    }
    whole++;
    const bool is_root = SamePath(read, root);
    if (!is_root && !SamePath(read, besteffort)) mixed++;
    if (is_root != last_was_root) changes++;
    last_was_root = is_root;
    if (loehle_cg_preempts_as_read(LOEHLE_SCOPE_HIERARCHY, ok, &read, &containerd))
      wrong_preempts++;
  }
  stop = true;
  writer.join();
  EXPECT_EQ(mixed, 0u) << "of " << whole << " whole loads (" << torn << " torn)";
  EXPECT_EQ(wrong_preempts, 0u);
  EXPECT_GE(torn, kMinOverlaps)
      << "only " << torn << " loads overlapped a store in " << kMaxSeconds
      << " s: the threads barely interleaved, so the test showed little";
  EXPECT_GE(changes, kMinOverlaps)
      << "the record changed between whole loads only " << changes << " times in "
      << kMaxSeconds << " s";
}

}  // namespace
