// A simulated machine running scx_loehle's placement and queueing rules.
//
// Every decision is made by the very headers the BPF program includes:
// loehle/policy.h (slow and fast path), loehle/sched_idle.h (which CPUs
// run only idle work, and the claim protocol), loehle/queue.h (dispatch
// order, idle work's allowance, whom a queued task preempts). This class
// gathers the facts those functions take from its own state and acts on
// their answers, as scx/loehle.bpf.c does from the kernel's; the order of
// the scans, the group search, the claim-and-retry loop and enqueue's
// kicks follow loehle.bpf.c (its design essay names each). Documented in
// Documentation/simulation.md, "Model".
//
// Concurrency. Each CPU runs its own events. A select_cpu starts on the
// waker's CPU at time t: the scan reads every candidate's facts at t, and
// its claim happens at t + select_base_ns + scan_ns_per_cpu * examined,
// when the wakee lands. A task calls select_cpu for one wakee at a time,
// the time charged to its own run (a retry's rescan too), so calls on one
// CPU never overlap; any selector on another CPU whose scan overlaps can
// take the same CPU in between; the claim then fails (seed 000's stale
// pick: a busy candidate at the final return) and the scan runs again, as
// --claim-retries says. Collisions are counted, never injected.
//
// Slice ends follow loehle_dispatch, then loehle_enqueue: the CPU plans its
// next task with the current one still on it (loehle_plan_dispatch), and
// only when another task was found, or seed 002 wants the task moved, does
// the task take enqueue's slice-end branch.
//
// Idle states. A CPU going idle enters the deepest state whose target
// residency is at most its previous idle period (a menu-governor-like
// prediction), and publishes it idle_entry_ns later; until then its key is
// U64_MAX (seed 000). Waking an idle CPU costs wake_ipi_ns plus what is
// left of the entry plus the state's exit latency.
//
// Not modelled: affinity (every task may run everywhere), cgroups (the
// task scope: idle work is a SCHED_IDLE task), vtime weights (queues are
// FIFO, which vtime order is for equal weights), hotplug, other classes.
#ifndef LOEHLE_LOADER_SIM_MACHINE_H_
#define LOEHLE_LOADER_SIM_MACHINE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "loader/sim/event_queue.h"
#include "loader/sim/sim_topology.h"
#include "loehle/cgroup_idle.h"
#include "loehle/policy.h"
#include "loehle/sched_idle.h"

namespace loehle::sim {

// Simulated costs, in ns (Documentation/simulation.md, "Calibration").
struct CostModel {
  uint64_t select_base_ns = 400;     // entry, config, wakee facts, claim
  uint64_t scan_ns_per_cpu = 40;     // per CPU whose facts a scan gathers
  uint64_t wake_ipi_ns = 3000;       // kick until an idle CPU starts waking
  uint64_t context_switch_ns = 1500; // per task started on a CPU
  uint64_t idle_entry_ns = 5000;     // idle entry until its state is published
};

struct MachineConfig {
  uint32_t policy = LOEHLE_POLICY_RESERVOIR;
  uint32_t sched_idle = LOEHLE_SI_WAKEE_AWARE;
  // What idle work is and who may preempt it (loehle/cgroup_idle.h): the
  // loader's default, hierarchy. Tasks without groups (NewTask) behave
  // alike under all three; NewTaskInGroups gives a task a cgroup path.
  uint32_t sched_idle_scope = LOEHLE_SCOPE_HIERARCHY;
  uint32_t smt = LOEHLE_SMT_IDLE_CORE;
  uint32_t claim_retries = 1;
  uint64_t slice_ns = 5'000'000;
  uint64_t seed = 1;
  CostModel cost;
};

// The per-CPU random numbers of the reservoir draws (bpf_get_prandom_u32
// is per CPU too): xorshift32 seeded from the run's seed and the CPU.
uint32_t SimRandomSeed(uint64_t seed, int cpu);
uint32_t SimRandomNext(uint32_t* state);

// Wakeup latency, log-linear buckets (16 per power of two, 1 ns .. 2^40 ns):
// memory does not grow with simulated time.
class LatencyHistogram {
 public:
  void Add(uint64_t ns);
  void Merge(const LatencyHistogram& other);
  uint64_t count() const { return count_; }
  // The value below which `q` (0..1) of the samples lie, to bucket precision.
  uint64_t Quantile(double q) const;

 private:
  static constexpr int kSub = 16;
  static constexpr int kBuckets = 41 * kSub;
  static int Bucket(uint64_t ns);
  static uint64_t BucketUpper(int bucket);
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
};

enum class WakePath { kFork, kWakeup };

// What placement came to on one path.
struct PathStats {
  uint64_t selects = 0;         // select_cpu calls
  uint64_t scans = 0;           // scans, retries included
  uint64_t idle_picks = 0;      // first scans that picked a CPU to claim
  uint64_t stale_picks = 0;     // ...whose claim failed: the CPU was taken
                                // by the final return (seed 000)
  uint64_t claim_attempts = 0;
  uint64_t claim_failures = 0;
  uint64_t gave_up = 0;         // every claim failed: queued on prev's LLC
  uint64_t examined = 0;        // CPUs the final scans examined (as the BPF)
  uint64_t tie_groups = 0;      // final choices with a tie group
  uint64_t tie_candidates = 0;  // their sizes, summed
  uint64_t sched_idle_picks = 0;
  uint64_t sched_idle_refused = 0;  // refused to the wakee (hierarchy)
  uint64_t packing = 0;         // idle work placed on a sched-idle CPU although
                                // a truly idle CPU was in reach
  uint64_t select_ns = 0;       // simulated select_cpu time, summed
};

struct MachineStats {
  PathStats fork;
  PathStats wakeup;
  std::vector<uint64_t> fork_picks;  // per target CPU
  uint64_t preemptions = 0;          // idle work preempted by a wakee
  uint64_t smt_moves = 0;            // seed 002 at slice expiry
  uint64_t run_ns = 0;               // CPU time of all tasks
  uint64_t corun_ns = 0;             // ...while an SMT sibling was busy too
  uint64_t idle_work_run_ns = 0;
  LatencyHistogram wake_latency;     // wakeup to running, normal tasks
  LatencyHistogram idle_wake_latency;
};

class Machine;

// A workload drives tasks: it starts them, and decides what each does when
// a CPU burst ends.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual void Start(Machine& machine) = 0;
  // `task`'s burst is done and it still runs on its CPU: the workload calls
  // exactly one of Continue, Block or Exit for it (and may wake others).
  virtual void BurstDone(Machine& machine, int task) = 0;
  // A timer set with Machine::Timer fired.
  virtual void OnTimer(Machine& machine, int token) { (void)machine, (void)token; }
};

// A task as the pick-equivalence test sees a scan: each CPU's facts in the
// order offered, and the random number drawn for it.
struct ScanRecord {
  std::vector<loehle_cpu_facts> facts;
  std::vector<uint32_t> draws;
};

class Machine {
 public:
  Machine(const SimTopology& topology, const MachineConfig& config);

  // Runs `workload` until `until_ns` of simulated time, or Stop().
  void Run(Workload& workload, uint64_t until_ns);
  void Stop() { stopped_ = true; }
  uint64_t now() const { return now_; }
  const MachineStats& stats() const { return stats_; }
  const SimTopology& topology() const { return topo_; }
  // Placement decisions made (scans), for the simulator's own speed.
  uint64_t decisions() const { return stats_.fork.scans + stats_.wakeup.scans; }

  // --- For workloads.
  // A task of the root group; `sched_idle`: its policy is SCHED_IDLE.
  int NewTask(bool sched_idle);
  // A task with this cgroup path (ids and cpu.idle of its groups, top
  // down; loehle/cgroup_idle.h), idle work or not under the scope.
  int NewTaskInGroups(const loehle_cg_path& groups);
  bool IsIdleWork(int task) const { return tasks_[task].idle_work; }
  // Makes `task` runnable with a CPU burst of `burst_ns`, placed by
  // select_cpu as called on `waker_cpu` (-1: none; the scan runs on CPU 0
  // at no cost to anyone). Returns the select_cpu time the caller should
  // add to the waker's own burst.
  uint64_t Wake(int task, int waker_cpu, WakePath path, uint64_t burst_ns);
  void Continue(int task, uint64_t burst_ns);
  void Block(int task);
  void Exit(int task);
  int TaskCpu(int task) const { return tasks_[task].cpu; }
  // Calls the workload's OnTimer(token) `delay_ns` from now.
  void Timer(uint64_t delay_ns, int token);

  // --- For tests: put the machine in a state and look at one scan.
  // CPU `cpu` runs a new task (normal or idle work) from now on.
  void PlaceRunningForTest(int cpu, bool idle_work);
  void PlaceRunningInGroupsForTest(int cpu, const loehle_cg_path& groups);
  // CPU `cpu` has been idle since `since_ns`, in idle state `state`
  // (LOEHLE_STATE_UNPUBLISHED: not published yet).
  void SetIdleForTest(int cpu, uint64_t since_ns, uint32_t state);
  // One scan as select_cpu would run it now, without claiming; the
  // facts and draws it used land in *record.
  loehle_choice ScanForTest(int prev, WakePath path, bool wakee_idle_work,
                            ScanRecord* record);
  // The same for a wakee with these groups.
  loehle_choice ScanInGroupsForTest(int prev, WakePath path, const loehle_cg_path& groups,
                                    ScanRecord* record);
  uint32_t RandomStateForTest(int cpu) const { return cpus_[cpu].rand; }
  // Task slots ever allocated (exited tasks' slots are reused).
  size_t TaskSlots() const { return tasks_.size(); }

  // --- For the selection walk (loehle/select.h), which machine.cc runs
  // over these facts as scx/loehle.bpf.c runs it over the kernel's.
  // A node's (by_node) or an LLC's CPUs in id order.
  const std::vector<int>& GroupCpus(bool by_node, int group) const {
    return by_node ? node_cpus_[group] : llc_cpus_[group];
  }
  int LlcPos(int cpu) const { return llc_pos_[cpu]; }
  bool CpuIdle(int cpu) const { return cpus_[cpu].idle; }
  bool CoreIdle(int cpu) const;
  bool RunsIdleWork(int cpu) const { return loehle_si_runs_idle_work(&cpus_[cpu].si); }
  // loehle.bpf.c's gather_facts: what policy.h needs to know about `cpu`.
  // `wakee`: the waking task's groups, against which a CPU running idle
  // work is refused (the hierarchy rule).
  void GatherFacts(int cpu, const loehle_cg_path& wakee, bool want_load,
                   loehle_cpu_facts* f) const;
  // The next number of `cpu`'s random stream (the reservoir's draws come
  // from the selecting CPU's, as bpf_get_prandom_u32() is per CPU).
  uint32_t DrawRandom(int cpu) { return SimRandomNext(&cpus_[cpu].rand); }

 private:
  struct Cpu {
    int current = -1;      // running task
    bool idle = true;      // in the idle mask: idle and not claimed
    bool starting = false; // claimed or kicked, on its way to run
    uint64_t idle_since = 0;
    uint64_t publish_at = 0;
    uint64_t last_idle_ns = 0;
    uint32_t state = LOEHLE_STATE_UNPUBLISHED;  // published idle state
    uint32_t entering = 0;                      // the state being entered
    loehle_si_cpu si{};
    uint32_t rand = 1;
    std::deque<int> local;  // direct dispatches
    uint64_t epoch = 0;     // moves on whenever a pending event goes stale
    uint64_t segment_start = 0;  // when the current segment's work began
    uint64_t segment_len = 0;
    bool segment_is_slice = false;  // ends by the slice, burst not done
    uint64_t slice_left = 0;        // of the current task's slice
    uint64_t run_started = 0;
  };
  struct Task {
    bool idle_work = false;  // under the scope: loehle_cg_idle_work()
    loehle_cg_path groups{};
    int cpu = -1;
    uint64_t burst_left = 0;
    uint64_t runnable_since = 0;
    bool runnable = false;
    bool record_latency = false;  // woken: its wait is a wakeup latency
    uint32_t pid = 1;
    // A select_cpu in flight.
    WakePath path = WakePath::kWakeup;
    int prev = 0;
    int waker = 0;
    int waker_task = -1;       // what ran on the waker's CPU at the call
    bool packing_possible = false;
    uint32_t attempt = 0;
    uint32_t refused = 0;  // sched-idle CPUs the last scan refused it
    uint64_t select_started = 0;
    uint64_t epoch = 0;
    loehle_choice choice{};
  };
  enum EventKind : uint32_t { kSegmentEnd, kCpuStart, kPublish, kClaim, kTimer, kPreempt };

  // One scan of select_cpu: the selection walk (loehle/select.h) over
  // this machine, the slow one for forks.
  loehle_choice Scan(int task, ScanRecord* record);
  bool SmtActive() const { return topo_.threads_per_core > 1; }
  bool IdleCoreMode() const { return config_.smt == LOEHLE_SMT_IDLE_CORE && SmtActive(); }

  // select_cpu's claim-and-retry loop; StartScan returns the scan's time.
  uint64_t StartScan(int task);
  void OnClaim(int task);
  bool ClaimChoice(int task);
  bool AnyCpuIdle() const;
  void CountChoice(const Task& t, int cpu);
  void ChargeWaker(const Task& t, uint64_t ns);

  // Queueing (loehle.bpf.c's enqueue and dispatch).
  void Enqueue(int task, int cpu);
  void EnqueueAtSliceEnd(int task, int cpu);
  int PickIdleCpu(bool whole_cores_only) const;
  bool SmtMoveWanted(int cpu) const;
  void PreemptIdleWork(int task, int cpu);
  bool PreemptsIdleWorkOn(int task, int cpu) const;
  void Preempt(int cpu);
  void OnPreempt(int cpu);
  uint32_t NormalQueued() const;
  int PopQueue(int cpu, uint32_t step);
  int PlanNext(int cpu, int prev, bool* keep_prev);
  void Dispatch(int cpu);
  void RunTask(int cpu, int task);
  void StartSegment(int cpu);
  void OnSegmentEnd(int cpu);
  void OnSliceEnd(int cpu, int task);
  int ClaimIdleCoreNear(int cpu);
  bool SiblingBusy(int cpu) const;
  void StopRunning(int cpu);
  void GoIdle(int cpu);
  void Kick(int cpu);
  uint64_t WakeCost(int cpu) const;
  void AccountCore(int cpu, int delta);

  const SimTopology topo_;
  const MachineConfig config_;
  Workload* workload_ = nullptr;
  EventQueue events_;
  uint64_t now_ = 0;
  bool stopped_ = false;
  std::vector<Cpu> cpus_;
  std::vector<Task> tasks_;
  std::vector<std::vector<int>> llc_cpus_, node_cpus_, core_cpus_;
  std::vector<int> llc_pos_;  // each CPU's index in its LLC's list
  std::vector<std::deque<int>> normal_queue_, idle_queue_;  // per LLC
  std::vector<uint64_t> llc_idle_run_;
  std::vector<int> core_running_;
  std::vector<uint64_t> core_changed_;
  std::vector<int> free_tasks_;
  int pick_cursor_ = 0;
  int preempt_cursor_ = 0;
  MachineStats stats_;
};

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_MACHINE_H_
