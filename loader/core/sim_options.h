// What `scx_loehle sim` was asked to run (loader/sim/, Documentation/
// simulation.md): filled by the command line, read by the simulator. Plain
// values only, so that the command-line layer needs nothing of the
// simulator's.
#ifndef LOEHLE_LOADER_CORE_SIM_OPTIONS_H_
#define LOEHLE_LOADER_CORE_SIM_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "loehle/intf.h"

namespace loehle {

struct SimOptions {
  // A preset name (loader/sim/sim_topology.h), "host", or a file.
  std::string topology = "altra-160";
  // fork | wakeup | schedidle | smt
  std::string workload = "fork";
  // Every combination of these is one run.
  std::vector<uint32_t> policies = {LOEHLE_POLICY_RECENCY, LOEHLE_POLICY_FIRST,
                                    LOEHLE_POLICY_RESERVOIR};
  std::vector<uint32_t> sched_idle_modes = {LOEHLE_SI_WAKEE_AWARE};
  std::vector<uint32_t> smt_modes = {LOEHLE_SMT_IDLE_CORE};
  // The workload's size: creators (fork), workers (schedidle), message
  // threads (wakeup), tasks (smt; 0 = one per core).
  std::vector<uint32_t> sizes = {32};
  uint32_t fork_max = 1;        // fork: children per creator before it waits
  uint32_t idle_hogs = 0;       // schedidle: SCHED_IDLE CPU hogs beside the jobs
  uint32_t reps = 1;            // seeds seed, seed + 1, ...
  uint64_t seed = 1;
  double sim_seconds = 1.0;     // simulated time per run (schedidle: a bound)
  uint32_t jobs = 0;            // host threads; 0 = every host core
  uint32_t claim_retries = 1;
  uint64_t scan_ns_per_cpu = 0; // 0 = the calibrated default
  std::string json_out;         // "" = none, "-" = stdout
  std::string markdown_out;     // "" = stdout unless json_out is "-"
  bool quiet = false;           // no progress line
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_SIM_OPTIONS_H_
