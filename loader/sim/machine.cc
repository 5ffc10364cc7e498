#include "loader/sim/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "loehle/queue.h"

// The selection walk (loehle/select.h) over the simulated machine. The
// header and its environment sit in an anonymous namespace: the unit tests
// run the same walk over facts of their own, with the same names.
namespace {
#include "loehle/select.h"

struct loehle_walk {
  loehle::sim::Machine* m;
  int waker;  // whose CPU's random stream the reservoir draws from
  const loehle_cg_path* wakee;  // its groups
  const loehle_walk_cfg* cfg;
  loehle::sim::ScanRecord* record;  // the facts and draws, for the tests
  // The group search's, per group (topologies have at most
  // LOEHLE_MAX_LLCS groups: sim_topology.cc refuses more).
  std::array<uint32_t, LOEHLE_MAX_LLCS> counts;
  uint32_t refused = 0;             // sched-idle CPUs refused to the wakee
};

__u32 loehle_env_group_len(loehle_walk* w, __u32 by_node, __u32 group) {
  return static_cast<__u32>(w->m->GroupCpus(by_node, static_cast<int>(group)).size());
}

__s32 loehle_env_group_cpu(loehle_walk* w, __u32 by_node, __u32 group, __u32 k) {
  return w->m->GroupCpus(by_node, static_cast<int>(group))[k];
}

__u32 loehle_env_cpu_llc(loehle_walk* w, __s32 cpu) {
  return static_cast<__u32>(w->m->topology().cpus[cpu].llc);
}

__u32 loehle_env_llc_pos(loehle_walk* w, __s32 cpu) {
  return static_cast<__u32>(w->m->LlcPos(cpu));
}

__u32 loehle_env_core(loehle_walk* w, __s32 cpu) {
  return static_cast<__u32>(w->m->topology().cpus[cpu].core);
}

// Not modelled: affinity masks; every task may run everywhere.
int loehle_env_allowed(loehle_walk* w, __s32 cpu) { return (void)w, (void)cpu, 1; }

int loehle_env_runs_idle_work(loehle_walk* w, __s32 cpu) { return w->m->RunsIdleWork(cpu); }

void loehle_env_gather(loehle_walk* w, __s32 cpu, int want_load, loehle_cpu_facts* f) {
  w->m->GatherFacts(cpu, *w->wakee, want_load, f);
  // Counted as the BPF side counts them (gather_facts).
  if (f->preempt_refused && f->allowed && loehle_cg_refusal_counts(w->cfg->si_mode)) ++w->refused;
  if (w->record) {
    w->record->facts.push_back(*f);
    w->record->draws.push_back(0);
  }
}

// Drawn for the CPU just gathered: the record keeps it beside its facts.
__u32 loehle_env_rand(loehle_walk* w) {
  const __u32 r = w->m->DrawRandom(w->waker);
  if (w->record && !w->record->draws.empty()) w->record->draws.back() = r;
  return r;
}

int loehle_env_scan_group(loehle_walk* w, __u32 by_node, __u32 group, __s32 fallback,
                          loehle_choice* out) {
  return loehle_walk_group_on_stack(w, w->cfg, by_node, group, fallback, out);
}

__s32 loehle_env_busiest_group(loehle_walk* w, __u32 by_node, int whole_cores) {
  return loehle_walk_busiest_group(w, by_node, whole_cores);
}

__u32 loehle_env_nr_groups(loehle_walk* w, __u32 by_node) {
  const loehle::sim::SimTopology& topo = w->m->topology();
  return static_cast<__u32>(by_node ? topo.nr_nodes : topo.nr_llcs);
}

__u32 loehle_env_nr_cpus(loehle_walk* w) {
  return static_cast<__u32>(w->m->topology().cpus.size());
}

int loehle_env_idle_usable(loehle_walk* w, __s32 cpu, int whole_cores) {
  return w->m->CpuIdle(cpu) && (!whole_cores || w->m->CoreIdle(cpu));
}

__u32 loehle_env_cpu_group(loehle_walk* w, __u32 by_node, __s32 cpu) {
  const loehle::sim::SimTopology& topo = w->m->topology();
  return static_cast<__u32>(by_node ? topo.cpus[cpu].node : topo.cpus[cpu].llc);
}

void loehle_env_count_reset(loehle_walk* w, __u32 group) { w->counts[group] = 0; }

void loehle_env_count_add(loehle_walk* w, __u32 group) { ++w->counts[group]; }

__u32 loehle_env_count(loehle_walk* w, __u32 group) { return w->counts[group]; }

int loehle_env_llc_has_idle(loehle_walk* w, __u32 llc) {
  for (int cpu : w->m->GroupCpus(false, static_cast<int>(llc))) {
    if (w->m->CpuIdle(cpu)) return 1;
  }
  return 0;
}

int loehle_env_llc_runs_idle_work(loehle_walk* w, __u32 llc) {
  for (int cpu : w->m->GroupCpus(false, static_cast<int>(llc))) {
    if (w->m->RunsIdleWork(cpu)) return 1;
  }
  return 0;
}

}  // namespace

namespace loehle::sim {
namespace {

constexpr uint32_t kNormalWeight = 100;  // sched_ext's weight of nice 0
constexpr uint32_t kIdleWeight = 1;      // SCHED_IDLE's, scaled alike

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

uint32_t SimRandomSeed(uint64_t seed, int cpu) {
  const uint32_t x = static_cast<uint32_t>(SplitMix64(seed * 1000003 + cpu));
  return x ? x : 1;
}

uint32_t SimRandomNext(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

int LatencyHistogram::Bucket(uint64_t ns) {
  if (ns < kSub) return static_cast<int>(ns);
  ns = std::min<uint64_t>(ns, (uint64_t{1} << 41) - 1);
  const int e = 63 - __builtin_clzll(ns);
  const int sub = static_cast<int>(ns >> (e - 4)) - kSub;
  return kSub + (e - 4) * kSub + sub;
}

uint64_t LatencyHistogram::BucketUpper(int bucket) {
  if (bucket < kSub) return static_cast<uint64_t>(bucket);
  const int e = (bucket - kSub) / kSub + 4;
  const uint64_t sub = static_cast<uint64_t>((bucket - kSub) % kSub);
  return ((kSub + sub + 1) << (e - 4)) - 1;
}

void LatencyHistogram::Add(uint64_t ns) {
  ++buckets_[Bucket(ns)];
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int b = 0; b < kBuckets; ++b) buckets_[b] += other.buckets_[b];
  count_ += other.count_;
}

uint64_t LatencyHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  const auto target = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[b];
    if (seen >= std::max<uint64_t>(target, 1)) return BucketUpper(b);
  }
  return BucketUpper(kBuckets - 1);
}

Machine::Machine(const SimTopology& topology, const MachineConfig& config)
    : topo_(topology), config_(config) {
  const int n = static_cast<int>(topo_.cpus.size());
  cpus_.resize(n);
  llc_cpus_.resize(topo_.nr_llcs);
  node_cpus_.resize(topo_.nr_nodes);
  core_cpus_.resize(topo_.nr_cores);
  llc_pos_.resize(n);
  for (int cpu = 0; cpu < n; ++cpu) {
    const SimCpu& where = topo_.cpus[cpu];
    llc_pos_[cpu] = static_cast<int>(llc_cpus_[where.llc].size());
    llc_cpus_[where.llc].push_back(cpu);
    node_cpus_[where.node].push_back(cpu);
    core_cpus_[where.core].push_back(cpu);
    Cpu& c = cpus_[cpu];
    c.rand = SimRandomSeed(config_.seed, cpu);
    // Idle since long before the run: the deepest state, published.
    c.last_idle_ns = UINT64_MAX;
    if (!topo_.states.empty()) {
      c.state = c.entering = static_cast<uint32_t>(topo_.states.size() - 1);
    }
  }
  normal_queue_.resize(topo_.nr_llcs);
  idle_queue_.resize(topo_.nr_llcs);
  llc_idle_run_.assign(topo_.nr_llcs, 0);
  core_running_.assign(topo_.nr_cores, 0);
  core_changed_.assign(topo_.nr_cores, 0);
  stats_.fork_picks.assign(n, 0);
}

// --- Facts and scans ---------------------------------------------------------

bool Machine::CoreIdle(int cpu) const {
  for (int sibling : core_cpus_[topo_.cpus[cpu].core]) {
    if (!cpus_[sibling].idle) return false;
  }
  return true;
}

void Machine::GatherFacts(int cpu, const loehle_cg_path& wakee, bool want_load,
                          loehle_cpu_facts* f) const {
  const Cpu& c = cpus_[cpu];
  *f = loehle_cpu_facts{};
  f->cpu = cpu;
  f->core = static_cast<uint32_t>(topo_.cpus[cpu].core);
  f->allowed = 1;
  f->idle = c.idle;
  f->core_idle = SmtActive() ? CoreIdle(cpu) : f->idle;
  f->exit_latency = LOEHLE_U64_MAX;
  f->idle_stamp = c.idle_since;
  if (f->idle) {
    const uint32_t state = c.state;
    f->exit_latency = loehle_exit_latency_key(
        state, state < topo_.states.size() ? topo_.states[state].exit_latency_ns : 0);
    return;
  }
  const auto queued = static_cast<uint32_t>(c.local.size());
  f->sched_idle = loehle_si_is_sched_idle(&c.si, now_, config_.slice_ns, queued);
  // The running task's groups, read whole (the simulator tears no record).
  if (f->sched_idle && c.current >= 0) {
    f->preempt_refused =
        loehle_cg_refused(config_.sched_idle_scope, &tasks_[c.current].groups, &wakee);
  }
  if (want_load || c.si.running == LOEHLE_RUN_IDLE_WORK) {
    const uint32_t weight =
        c.current < 0 ? 0 : (tasks_[c.current].idle_work ? kIdleWeight : kNormalWeight);
    f->load = loehle_si_load(&c.si, weight, queued);
  }
}

loehle_choice Machine::Scan(int task, ScanRecord* record) {
  Task& t = tasks_[task];
  PathStats& ps = t.path == WakePath::kFork ? stats_.fork : stats_.wakeup;
  ++ps.scans;
  const loehle_walk_cfg cfg = {
      config_.policy, config_.sched_idle, IdleCoreMode() ? 1u : 0u,
      loehle_cg_wakee_yields(config_.sched_idle_scope, &t.groups) ? 1u : 0u};
  loehle_walk w{this, t.waker, &t.groups, &cfg, record, {}};
  loehle_choice c{};
  if (t.path == WakePath::kFork) {
    const bool by_node = topo_.nr_nodes > 1;
    const int group = by_node ? topo_.cpus[t.prev].node : topo_.cpus[t.prev].llc;
    loehle_walk_slow(&w, &cfg, by_node, static_cast<uint32_t>(group), t.prev, &c);
  } else {
    loehle_fast_scan s;
    loehle_cpu_facts f;
    loehle_walk_fast(&w, &cfg, &s, &f, t.prev, &c);
  }
  t.refused = w.refused;
  return c;
}

loehle_choice Machine::ScanForTest(int prev, WakePath path, bool wakee_idle_work,
                                   ScanRecord* record) {
  loehle_cg_path groups;
  loehle_cg_path_init(&groups, wakee_idle_work);
  return ScanInGroupsForTest(prev, path, groups, record);
}

loehle_choice Machine::ScanInGroupsForTest(int prev, WakePath path,
                                           const loehle_cg_path& groups, ScanRecord* record) {
  const int task = NewTaskInGroups(groups);
  Task& t = tasks_[task];
  t.path = path;
  t.prev = prev;
  t.waker = prev;
  return Scan(task, record);
}

// --- select_cpu: scan, claim, retry ----------------------------------------

uint64_t Machine::StartScan(int task) {
  Task& t = tasks_[task];
  t.choice = Scan(task, nullptr);
  const uint64_t cost = config_.cost.scan_ns_per_cpu * t.choice.examined +
                        (t.attempt == 0 ? config_.cost.select_base_ns : 0);
  (t.path == WakePath::kFork ? stats_.fork : stats_.wakeup).select_ns += cost;
  events_.Push(now_ + cost, kClaim, task, t.epoch);
  return cost;
}

bool Machine::ClaimChoice(int task) {
  const loehle_choice& c = tasks_[task].choice;
  Cpu& target = cpus_[c.cpu];
  if (!c.sched_idle_pick) {
    // scx_bpf_test_and_clear_cpu_idle()
    if (!target.idle) return false;
    target.idle = false;
    return true;
  }
  const uint64_t seen = target.si.claim;
  if (!loehle_si_claimable(&target.si, seen, now_, config_.slice_ns)) return false;
  const uint64_t mine = loehle_si_claim_word(tasks_[task].pid, now_);
  target.si.claim = mine;  // the compare-and-swap: nobody runs in between
  if (loehle_si_claim_holds(&target.si, mine)) return true;
  target.si.claim = 0;
  return false;
}

bool Machine::AnyCpuIdle() const {
  for (const Cpu& c : cpus_) {
    if (c.idle) return true;
  }
  return false;
}

// finish_pick's counters: of the final choice, as the BPF counts them.
void Machine::CountChoice(const Task& t, int cpu) {
  PathStats& ps = t.path == WakePath::kFork ? stats_.fork : stats_.wakeup;
  ps.examined += t.choice.examined;
  ps.sched_idle_refused += t.refused;
  if (t.choice.ties) {
    ++ps.tie_groups;
    ps.tie_candidates += t.choice.ties;
  }
  if (t.path == WakePath::kFork) ++stats_.fork_picks[cpu];
}

// A retry runs on the waker's CPU: the task that called select_cpu waits
// for it (its current segment grows by the scan's time).
void Machine::ChargeWaker(const Task& t, uint64_t ns) {
  Cpu& w = cpus_[t.waker];
  if (t.waker_task < 0 || w.current != t.waker_task || w.segment_len == 0) return;
  w.segment_len += ns;
  events_.Push(w.segment_start + w.segment_len, kSegmentEnd, t.waker, ++w.epoch);
}

void Machine::OnClaim(int task) {
  Task& t = tasks_[task];
  const loehle_choice c = t.choice;
  PathStats& ps = t.path == WakePath::kFork ? stats_.fork : stats_.wakeup;
  if (!c.idle_pick) {
    CountChoice(t, c.cpu);
    Enqueue(task, c.cpu);
    return;
  }
  if (t.attempt == 0) ++ps.idle_picks;
  ++ps.claim_attempts;
  if (!ClaimChoice(task)) {
    ++ps.claim_failures;
    if (t.attempt == 0) ++ps.stale_picks;
    if (t.attempt < config_.claim_retries) {
      ++t.attempt;
      ChargeWaker(t, StartScan(task));
      return;
    }
    ++ps.gave_up;
    CountChoice(t, t.prev);
    Enqueue(task, t.prev);
    return;
  }
  CountChoice(t, c.cpu);
  t.cpu = c.cpu;
  Cpu& target = cpus_[c.cpu];
  if (!c.sched_idle_pick) {
    target.local.push_back(task);
    Kick(c.cpu);
    return;
  }
  ++ps.sched_idle_picks;
  if (t.packing_possible) ++ps.packing;
  // Whether the wakee preempts the idle work is the scope's
  // (loehle_cg_preempts); SCX_ENQ_PREEMPT implies SCX_ENQ_HEAD. One that
  // does not goes through enqueue to its queue, behind the LLC's normal
  // work (loehle_sched_idle_pick_goes_local), as in select_cpu.
  const bool preempts = PreemptsIdleWorkOn(task, c.cpu);
  if (!loehle_sched_idle_pick_goes_local(preempts)) {
    Enqueue(task, c.cpu);
    return;
  }
  target.local.push_front(task);
  ++stats_.preemptions;
  Preempt(c.cpu);
}

uint64_t Machine::Wake(int task, int waker_cpu, WakePath path, uint64_t burst_ns) {
  Task& t = tasks_[task];
  t.burst_left = burst_ns;
  t.runnable = true;
  t.record_latency = true;
  t.runnable_since = now_;
  t.path = path;
  t.waker = waker_cpu >= 0 ? waker_cpu : 0;
  t.waker_task = waker_cpu >= 0 ? cpus_[waker_cpu].current : -1;
  t.prev = t.cpu >= 0 && path != WakePath::kFork ? t.cpu : t.waker;
  t.attempt = 0;
  // Packing needs to know whether a truly idle CPU was on offer at entry.
  t.packing_possible = t.idle_work && AnyCpuIdle();
  ++(path == WakePath::kFork ? stats_.fork : stats_.wakeup).selects;
  const uint64_t cost = StartScan(task);
  return waker_cpu >= 0 ? cost : 0;
}

// --- Queueing ----------------------------------------------------------------

int Machine::PickIdleCpu(bool whole_cores_only) const {
  // scx_bpf_pick_idle_cpu(): whole idle cores first under SMT, then any
  // idle CPU; the search starts where the last one ended (distribute).
  const int n = static_cast<int>(cpus_.size());
  for (int pass = SmtActive() ? 0 : 1; pass < (whole_cores_only ? 1 : 2); ++pass) {
    for (int k = 0; k < n; ++k) {
      const int cpu = (pick_cursor_ + k) % n;
      if (cpus_[cpu].idle && (pass == 1 || CoreIdle(cpu))) return cpu;
    }
  }
  return -1;
}

void Machine::Enqueue(int task, int cpu) {
  Task& t = tasks_[task];
  t.cpu = cpu;
  const int llc = topo_.cpus[cpu].llc;
  (t.idle_work ? idle_queue_ : normal_queue_)[llc].push_back(task);
  // Wake an idle CPU for it, ours first.
  if (cpus_[cpu].idle) {
    cpus_[cpu].idle = false;
    Kick(cpu);
    return;
  }
  const int idle = PickIdleCpu(false);
  if (idle >= 0) {
    pick_cursor_ = (idle + 1) % static_cast<int>(cpus_.size());
    cpus_[idle].idle = false;
    Kick(idle);
    return;
  }
  PreemptIdleWork(task, cpu);
}

bool Machine::SmtMoveWanted(int cpu) const {
  return IdleCoreMode() && SiblingBusy(cpu) && PickIdleCpu(true) >= 0;
}

void Machine::EnqueueAtSliceEnd(int task, int cpu) {
  Task& t = tasks_[task];
  t.runnable = true;
  t.record_latency = false;
  // Seed 002 kept up over time: leave a busy core for a whole idle one.
  if (SmtMoveWanted(cpu)) {
    const int idle = ClaimIdleCoreNear(cpu);
    if (idle >= 0) {
      t.cpu = idle;
      cpus_[idle].local.push_back(task);
      Kick(idle);
      ++stats_.smt_moves;
      return;
    }
  }
  // Normal work with nobody waiting in its LLC keeps the CPU.
  if (!t.idle_work && normal_queue_[topo_.cpus[cpu].llc].empty()) {
    cpus_[cpu].local.push_back(task);
    return;
  }
  Enqueue(task, cpu);
}

// May `task` preempt the idle work `cpu` runs (loehle_cg_preempts)?
bool Machine::PreemptsIdleWorkOn(int task, int cpu) const {
  const Cpu& c = cpus_[cpu];
  return loehle_si_runs_idle_work(&c.si) && c.current >= 0 &&
         loehle_cg_preempts(config_.sched_idle_scope, &tasks_[c.current].groups,
                            &tasks_[task].groups);
}

void Machine::PreemptIdleWork(int task, int cpu) {
  // Idle work itself preempts nothing, but under the hierarchy rule.
  if (config_.sched_idle_scope != LOEHLE_SCOPE_HIERARCHY && tasks_[task].idle_work) return;
  const bool own = PreemptsIdleWorkOn(task, cpu);
  int other = -1;
  if (!own) {
    // One CPU of the LLC running idle work, taken in turn
    // (bpf_cpumask_any_and_distribute), not a search of them all for one
    // the task may preempt: as preempt_idle_work in the BPF program.
    const std::vector<int>& llc = llc_cpus_[topo_.cpus[cpu].llc];
    for (size_t k = 0; k < llc.size(); ++k) {
      const int candidate = llc[(static_cast<size_t>(preempt_cursor_) + k) % llc.size()];
      if (loehle_si_runs_idle_work(&cpus_[candidate].si)) {
        if (PreemptsIdleWorkOn(task, candidate)) other = candidate;
        preempt_cursor_ = static_cast<int>((preempt_cursor_ + k + 1) % llc.size());
        break;
      }
    }
  }
  const int32_t target = loehle_preempt_for(0, cpu, own, other);
  if (target < 0) return;
  ++stats_.preemptions;
  Preempt(target);
}

// SCX_KICK_PREEMPT, or a dispatch with SCX_ENQ_PREEMPT: after the IPI the
// CPU's current task loses the rest of its slice.
void Machine::Preempt(int cpu) { events_.Push(now_ + config_.cost.wake_ipi_ns, kPreempt, cpu, 0); }

void Machine::OnPreempt(int cpu) {
  Cpu& c = cpus_[cpu];
  if (c.current < 0) return;  // it stopped meanwhile and dispatched anyway
  Task& t = tasks_[c.current];
  const uint64_t done =
      now_ > c.segment_start ? std::min(now_ - c.segment_start, c.segment_len) : 0;
  t.burst_left -= std::min(t.burst_left, done);
  c.segment_len = 0;
  c.slice_left = 0;
  OnSliceEnd(cpu, c.current);
}

uint32_t Machine::NormalQueued() const {
  size_t n = 0;
  for (const std::deque<int>& q : normal_queue_) n += q.size();
  return static_cast<uint32_t>(n);
}

int Machine::PopQueue(int cpu, uint32_t step) {
  const int llc = topo_.cpus[cpu].llc;
  const bool idle = step != LOEHLE_STEP_NORMAL;
  const int from = step == LOEHLE_STEP_IDLE_REMOTE ? 1 : 0;
  const int to = step == LOEHLE_STEP_IDLE_LOCAL ? 1 : topo_.nr_llcs;
  auto& queues = idle ? idle_queue_ : normal_queue_;
  for (int i = from; i < to; ++i) {
    std::deque<int>& q = queues[(llc + i) % topo_.nr_llcs];
    if (q.empty()) continue;
    const int task = q.front();
    q.pop_front();
    return task;
  }
  return -1;
}

// loehle_dispatch: what the CPU runs next, `prev` (or -1) still on it.
// Returns the task found, or -1; *keep_prev when prev keeps the CPU.
int Machine::PlanNext(int cpu, int prev, bool* keep_prev) {
  const int llc = topo_.cpus[cpu].llc;
  const int due = loehle_idle_turn_due(now_, llc_idle_run_[llc], config_.slice_ns,
                                       static_cast<uint32_t>(idle_queue_[llc].size()));
  const bool may_keep = prev >= 0 && !SmtMoveWanted(cpu);
  const uint32_t plan =
      loehle_plan_dispatch(due, may_keep, prev >= 0 && tasks_[prev].idle_work);
  *keep_prev = false;
  for (uint32_t k = 0; k < LOEHLE_DISPATCH_STEPS; ++k) {
    const uint32_t step = loehle_plan_step(plan, k);
    if (step == LOEHLE_STEP_END) break;
    if (step == LOEHLE_STEP_KEEP_PREV) {
      *keep_prev = cpus_[cpu].local.empty();
      break;
    }
    const int next = PopQueue(cpu, step);
    if (next >= 0) return next;
  }
  return -1;
}

void Machine::Dispatch(int cpu) {
  Cpu& c = cpus_[cpu];
  if (!c.local.empty()) {
    const int task = c.local.front();
    c.local.pop_front();
    RunTask(cpu, task);
    return;
  }
  bool keep = false;
  const int next = PlanNext(cpu, -1, &keep);
  if (next >= 0) {
    RunTask(cpu, next);
  } else {
    GoIdle(cpu);
  }
}

// The slice of `task` ran out on `cpu` (or was zeroed by a preemption):
// the kernel asks ops.dispatch with prev still on the CPU, unless the local
// DSQ has work; prev then keeps the CPU (KEEP_PREV) or goes through
// ops.enqueue's slice-end branch.
void Machine::OnSliceEnd(int cpu, int task) {
  Cpu& c = cpus_[cpu];
  int next = -1;
  if (c.local.empty()) {
    bool keep = false;
    next = PlanNext(cpu, task, &keep);
    if (keep) {
      c.slice_left = config_.slice_ns;
      StartSegment(cpu);
      return;
    }
  }
  StopRunning(cpu);
  if (next >= 0) c.local.push_front(next);
  EnqueueAtSliceEnd(task, cpu);
  if (c.current < 0 && !c.starting) Dispatch(cpu);
}

void Machine::AccountCore(int cpu, int delta) {
  const int core = topo_.cpus[cpu].core;
  const uint64_t elapsed = now_ - core_changed_[core];
  const auto running = static_cast<uint64_t>(core_running_[core]);
  stats_.run_ns += elapsed * running;
  if (running >= 2) stats_.corun_ns += elapsed * running;
  core_changed_[core] = now_;
  core_running_[core] += delta;
}

void Machine::RunTask(int cpu, int task) {
  Cpu& c = cpus_[cpu];
  Task& t = tasks_[task];
  c.idle = false;
  c.starting = false;
  c.current = task;
  c.run_started = now_;
  t.cpu = cpu;
  t.runnable = false;
  if (t.record_latency) {
    (t.idle_work ? stats_.idle_wake_latency : stats_.wake_latency).Add(now_ - t.runnable_since);
    t.record_latency = false;
  }
  AccountCore(cpu, +1);
  loehle_si_on_running(&c.si, t.idle_work, t.pid);
  if (t.idle_work) llc_idle_run_[topo_.cpus[cpu].llc] = now_;
  c.slice_left = config_.slice_ns;
  c.segment_start = now_ + config_.cost.context_switch_ns;
  c.segment_len = std::min(t.burst_left, c.slice_left);
  c.segment_is_slice = t.burst_left > c.slice_left;
  events_.Push(c.segment_start + c.segment_len, kSegmentEnd, cpu, ++c.epoch);
}

// The current task goes on, its slice counting down from where it is.
void Machine::StartSegment(int cpu) {
  Cpu& c = cpus_[cpu];
  const Task& t = tasks_[c.current];
  c.segment_start = now_;
  c.segment_len = std::min(t.burst_left, c.slice_left);
  c.segment_is_slice = t.burst_left > c.slice_left;
  events_.Push(now_ + c.segment_len, kSegmentEnd, cpu, ++c.epoch);
}

void Machine::StopRunning(int cpu) {
  Cpu& c = cpus_[cpu];
  Task& t = tasks_[c.current];
  // A segment cut short leaves the rest of its work.
  const uint64_t done =
      now_ > c.segment_start ? std::min(now_ - c.segment_start, c.segment_len) : 0;
  t.burst_left -= std::min(t.burst_left, done);
  c.segment_len = 0;
  if (t.idle_work) stats_.idle_work_run_ns += now_ - c.run_started;
  AccountCore(cpu, -1);
  loehle_si_on_stopping(&c.si);
  c.current = -1;
  ++c.epoch;
}

// sibling_busy(): another thread of the core runs something.
bool Machine::SiblingBusy(int cpu) const {
  for (int sibling : core_cpus_[topo_.cpus[cpu].core]) {
    if (sibling != cpu && cpus_[sibling].current >= 0) return true;
  }
  return false;
}

int Machine::ClaimIdleCoreNear(int cpu) {
  const std::vector<int>* groups[] = {&llc_cpus_[topo_.cpus[cpu].llc],
                                      &node_cpus_[topo_.cpus[cpu].node]};
  for (int pass = 0; pass < (topo_.nr_nodes > 1 ? 2 : 1); ++pass) {
    for (int other : *groups[pass]) {
      if (cpus_[other].idle && CoreIdle(other)) {
        cpus_[other].idle = false;
        return other;
      }
    }
  }
  const int other = PickIdleCpu(true);
  if (other >= 0) cpus_[other].idle = false;
  return other;
}

void Machine::OnSegmentEnd(int cpu) {
  Cpu& c = cpus_[cpu];
  const int task = c.current;
  Task& t = tasks_[task];
  t.burst_left -= std::min(t.burst_left, c.segment_len);
  c.slice_left -= std::min(c.slice_left, c.segment_len);
  const bool slice_end = c.segment_is_slice;
  c.segment_len = 0;
  if (slice_end) {
    OnSliceEnd(cpu, task);
    return;
  }
  t.burst_left = 0;
  workload_->BurstDone(*this, task);
}

uint64_t Machine::WakeCost(int cpu) const {
  const Cpu& c = cpus_[cpu];
  uint64_t cost = config_.cost.wake_ipi_ns;
  if (!topo_.states.empty()) {
    // Entry cannot be aborted: finish it, then exit.
    if (now_ < c.publish_at) cost += c.publish_at - now_;
    cost += topo_.states[c.entering].exit_latency_ns;
  }
  return cost;
}

void Machine::Kick(int cpu) {
  Cpu& c = cpus_[cpu];
  if (c.current >= 0 || c.starting) return;
  c.starting = true;
  c.last_idle_ns = now_ - c.idle_since;
  events_.Push(now_ + WakeCost(cpu), kCpuStart, cpu, ++c.epoch);
}

void Machine::GoIdle(int cpu) {
  Cpu& c = cpus_[cpu];
  c.idle = true;
  c.starting = false;
  c.idle_since = now_;
  c.state = LOEHLE_STATE_UNPUBLISHED;
  loehle_si_on_idle(&c.si);
  ++c.epoch;
  if (topo_.states.empty()) return;
  // The deepest state whose target residency the last idle period covered.
  uint32_t state = 0;
  for (uint32_t k = 0; k < topo_.states.size(); ++k) {
    if (topo_.states[k].target_residency_ns <= c.last_idle_ns) state = k;
  }
  c.entering = state;
  c.publish_at = now_ + config_.cost.idle_entry_ns;
  events_.Push(c.publish_at, kPublish, cpu, c.epoch);
}

// --- Tasks -------------------------------------------------------------------

int Machine::NewTask(bool sched_idle) {
  loehle_cg_path groups;
  loehle_cg_path_init(&groups, sched_idle);
  return NewTaskInGroups(groups);
}

int Machine::NewTaskInGroups(const loehle_cg_path& groups) {
  int task;
  if (!free_tasks_.empty()) {
    task = free_tasks_.back();
    free_tasks_.pop_back();
  } else {
    task = static_cast<int>(tasks_.size());
    tasks_.emplace_back();
  }
  Task& t = tasks_[task];
  const uint64_t epoch = t.epoch + 1;
  t = Task{};
  t.epoch = epoch;
  t.groups = groups;
  t.idle_work = loehle_cg_idle_work(config_.sched_idle_scope, &groups);
  t.pid = static_cast<uint32_t>(task + 1) & ((1u << 22) - 1);
  return task;
}

void Machine::Continue(int task, uint64_t burst_ns) {
  tasks_[task].burst_left = burst_ns;
  StartSegment(tasks_[task].cpu);
}

void Machine::Block(int task) {
  const int cpu = tasks_[task].cpu;
  StopRunning(cpu);
  Dispatch(cpu);
}

void Machine::Exit(int task) {
  const int cpu = tasks_[task].cpu;
  StopRunning(cpu);
  ++tasks_[task].epoch;
  free_tasks_.push_back(task);
  Dispatch(cpu);
}

void Machine::Timer(uint64_t delay_ns, int token) {
  events_.Push(now_ + delay_ns, kTimer, token, 0);
}

void Machine::PlaceRunningForTest(int cpu, bool idle_work) {
  loehle_cg_path groups;
  loehle_cg_path_init(&groups, idle_work);
  PlaceRunningInGroupsForTest(cpu, groups);
}

void Machine::PlaceRunningInGroupsForTest(int cpu, const loehle_cg_path& groups) {
  const int task = NewTaskInGroups(groups);
  tasks_[task].burst_left = UINT64_MAX / 2;
  cpus_[cpu].idle = false;
  RunTask(cpu, task);
}

void Machine::SetIdleForTest(int cpu, uint64_t since_ns, uint32_t state) {
  Cpu& c = cpus_[cpu];
  c.idle = true;
  c.idle_since = since_ns;
  c.state = state;
  if (state < topo_.states.size()) c.entering = state;
}

void Machine::Run(Workload& workload, uint64_t until_ns) {
  workload_ = &workload;
  workload.Start(*this);
  while (!events_.Empty() && !stopped_) {
    const Event e = events_.Pop();
    if (e.time > until_ns) break;
    now_ = e.time;
    switch (e.kind) {
      case kSegmentEnd:
        if (cpus_[e.subject].epoch == e.epoch) OnSegmentEnd(e.subject);
        break;
      case kCpuStart:
        if (cpus_[e.subject].epoch == e.epoch) {
          cpus_[e.subject].starting = false;
          Dispatch(e.subject);
        }
        break;
      case kPublish:
        if (cpus_[e.subject].epoch == e.epoch && cpus_[e.subject].idle) {
          cpus_[e.subject].state = cpus_[e.subject].entering;
        }
        break;
      case kClaim:
        if (tasks_[e.subject].epoch == e.epoch) OnClaim(e.subject);
        break;
      case kTimer:
        workload.OnTimer(*this, e.subject);
        break;
      case kPreempt:
        OnPreempt(e.subject);
        break;
    }
  }
  if (!stopped_) now_ = until_ns;
  for (int cpu = 0; cpu < static_cast<int>(cpus_.size()); ++cpu) {
    if (cpus_[cpu].current >= 0 && tasks_[cpus_[cpu].current].idle_work) {
      stats_.idle_work_run_ns += now_ - cpus_[cpu].run_started;
      cpus_[cpu].run_started = now_;
    }
  }
  for (int core = 0; core < topo_.nr_cores; ++core) {
    AccountCore(core_cpus_[core].front(), 0);
  }
}

}  // namespace loehle::sim
