// The simulator's workloads (Documentation/simulation.md, "Workloads"):
//   fork       stress-ng --fork N --fork-max M: N creators, each forks M
//              children (which run briefly and exit), waits for them, reaps;
//   wakeup     schbench-like: N message threads, each waking its 4 workers
//              one after another (they run briefly and sleep), sleeping
//              itself a little once the last is done;
//   schedidle  seed 003: a fixed number of fork+run jobs (a kernel build's
//              compiler runs) shared by N SCHED_IDLE workers, beside
//              optional SCHED_IDLE CPU hogs; done when the last job ends;
//   smt        seed 002: N tasks (default one per core) running bursts
//              and sleeping briefly, so that wakeups place them again.
// Durations are drawn uniformly in [0.5, 1.5] times their mean from the
// workload's own generator (seeded from the run's seed), never from the
// machine's per-CPU generators. A task calls select_cpu for one wakee per
// burst, its time charged to that burst: calls on one CPU never overlap.
#ifndef LOEHLE_LOADER_SIM_WORKLOADS_H_
#define LOEHLE_LOADER_SIM_WORKLOADS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "loader/sim/machine.h"

namespace loehle::sim {

struct WorkloadSpec {
  std::string kind = "fork";
  uint32_t size = 32;      // creators, message threads, workers or tasks
  uint32_t fork_max = 1;
  uint32_t idle_hogs = 0;
  uint64_t seed = 1;
};

// What a workload did, beside the machine's statistics.
struct WorkloadOutcome {
  uint64_t ops = 0;          // fork: children; wakeup: worker runs;
                             // schedidle: jobs; smt: bursts
  uint64_t done_ns = 0;      // schedidle: when the last job ended (0: not yet)
};

class DrivenWorkload : public Workload {
 public:
  virtual WorkloadOutcome outcome() const = 0;
};

// The workload `spec` names, for `topology`; an unknown kind is an error.
absl::StatusOr<std::unique_ptr<DrivenWorkload>> MakeWorkload(const WorkloadSpec& spec,
                                                             const SimTopology& topology);

// The mean durations the workloads use, in ns (Documentation/simulation.md,
// "Calibration", says where each comes from).
struct WorkloadTimes {
  // fork: seed 000's 1-creator, 1-child row is 779 ops/s, 1.28 ms a
  // fork-run-exit-reap cycle; split as below (the split is assumed).
  static constexpr uint64_t kForkNs = 500'000;
  static constexpr uint64_t kChildNs = 500'000;
  static constexpr uint64_t kReapNs = 200'000;
  // wakeup
  static constexpr uint64_t kMessageNs = 10'000;
  static constexpr uint64_t kWorkerNs = 100'000;
  static constexpr uint64_t kMessageSleepNs = 200'000;
  static constexpr uint32_t kWorkersPerMessage = 4;
  // schedidle: compiler jobs of 20 ms, 4000 of them (80 s of CPU)
  static constexpr uint64_t kJobNs = 20'000'000;
  static constexpr uint32_t kJobs = 4000;
  static constexpr uint64_t kJobForkNs = 300'000;
  // smt: bursts longer than the 5 ms slice, so that slices end under load
  // (where seed 002's move to a whole idle core happens) as well as wakeups
  static constexpr uint64_t kSmtBurstNs = 8'000'000;
  static constexpr uint64_t kSmtSleepNs = 500'000;
};

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_WORKLOADS_H_
