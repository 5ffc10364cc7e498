// `scx_loehle sim`: runs the sweep the options describe and writes its
// tables (markdown) and results (JSON). Documentation/simulation.md.
#ifndef LOEHLE_LOADER_SIM_SIM_COMMAND_H_
#define LOEHLE_LOADER_SIM_SIM_COMMAND_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "loader/core/sim_options.h"
#include "loader/sim/experiment.h"

namespace loehle::sim {

// The scan cost per examined CPU when --scan-ns-per-cpu is not given
// (Documentation/simulation.md, "Calibration").
inline constexpr uint64_t kDefaultScanNsPerCpu = 40;

// Every combination of the options' lists, repetitions innermost.
std::vector<RunSpec> SweepSpecs(const SimOptions& options);

absl::Status RunSim(const SimOptions& options);

}  // namespace loehle::sim

#endif  // LOEHLE_LOADER_SIM_SIM_COMMAND_H_
