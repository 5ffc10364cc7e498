// One simulated run and a sweep of them: what `scx_loehle sim` runs and
// reports (markdown tables and JSON; Documentation/simulation.md).
#ifndef LOEHLE_LOADER_SIM_EXPERIMENT_H_
#define LOEHLE_LOADER_SIM_EXPERIMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/sim/machine.h"
#include "loader/sim/sim_topology.h"
#include "loader/sim/workloads.h"
#include "nlohmann/json.hpp"

namespace loehle::sim {

struct RunSpec {
  MachineConfig machine;
  WorkloadSpec workload;
  uint64_t sim_ns = 1'000'000'000;  // schedidle: an upper bound
};

struct RunResult {
  RunSpec spec;
  MachineStats stats;
  WorkloadOutcome outcome;
  uint64_t simulated_ns = 0;  // what the run covered
  uint64_t decisions = 0;     // scans
  double wall_s = 0;          // host time the run took
};

// Derived figures (percentages are of the first scans that picked a CPU
// to claim, or of claim attempts).
double StalePickPercent(const PathStats& p);
double ClaimFailurePercent(const PathStats& p);
double MeanTieGroup(const PathStats& p);
double ExaminedPerSelect(const PathStats& p);
// Coefficient of variation of the per-CPU fork-pick counts over the CPUs
// of `topology` (0: perfectly even).
double ForkSpreadCv(const std::vector<uint64_t>& picks);
double CorunShare(const MachineStats& s);

// Runs one spec on `topology`.
absl::StatusOr<RunResult> RunOnce(const SimTopology& topology, const RunSpec& spec);

// Runs every spec, `jobs` at a time on host threads (0: every host core);
// results in the order of `specs`. `progress(done, total, decisions, wall_s)`
// is called from the calling thread after every finished run.
using Progress = std::function<void(size_t, size_t, uint64_t, double)>;
absl::StatusOr<std::vector<RunResult>> RunSweep(const SimTopology& topology,
                                                const std::vector<RunSpec>& specs,
                                                unsigned jobs, const Progress& progress);

// One JSON object per run; deterministic for given specs (no wall time).
nlohmann::json ResultsJson(const SimTopology& topology, const std::vector<RunResult>& runs);
// A markdown table for the workload's figures, repetitions pooled, with
// each policy's ratio to the first policy listed where that means something.
std::string ResultsMarkdown(const SimTopology& topology, const std::vector<RunResult>& runs);

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_EXPERIMENT_H_
