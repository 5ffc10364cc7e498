#include "loader/sim/sim_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loader/sim/sim_topology.h"

namespace loehle::sim {
namespace {

absl::Status WriteText(const std::string& path, const std::string& text) {
  if (path == "-") {
    fputs(text.c_str(), stdout);
    fflush(stdout);
    return absl::OkStatus();
  }
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  }
  out << text;
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

}  // namespace

std::vector<RunSpec> SweepSpecs(const SimOptions& options) {
  std::vector<RunSpec> specs;
  for (uint32_t policy : options.policies) {
    for (uint32_t si : options.sched_idle_modes) {
      for (uint32_t smt : options.smt_modes) {
        for (uint32_t size : options.sizes) {
          for (uint32_t rep = 0; rep < options.reps; ++rep) {
            RunSpec spec;
            spec.machine.policy = policy;
            spec.machine.sched_idle = si;
            spec.machine.smt = smt;
            spec.machine.claim_retries = options.claim_retries;
            spec.machine.seed = options.seed + rep;
            spec.machine.cost.scan_ns_per_cpu =
                options.scan_ns_per_cpu ? options.scan_ns_per_cpu : kDefaultScanNsPerCpu;
            spec.workload.kind = options.workload;
            spec.workload.size = size;
            spec.workload.fork_max = options.fork_max;
            spec.workload.idle_hogs = options.idle_hogs;
            spec.workload.seed = options.seed + rep;
            spec.sim_ns = static_cast<uint64_t>(options.sim_seconds * 1e9);
            specs.push_back(spec);
          }
        }
      }
    }
  }
  return specs;
}

absl::Status RunSim(const SimOptions& options) {
  absl::StatusOr<SimTopology> topology = LoadSimTopology(options.topology);
  if (!topology.ok()) return topology.status();
  const std::vector<RunSpec> specs = SweepSpecs(options);
  const bool show = !options.quiet && isatty(STDERR_FILENO);
  absl::StatusOr<std::vector<RunResult>> runs = RunSweep(
      *topology, specs, options.jobs,
      [show](size_t done, size_t total, uint64_t decisions, double wall_s) {
        if (!show) return;
        fprintf(stderr, "\rsim: %zu/%zu runs, %.2f M decisions/s per host thread ", done, total,
                wall_s > 0 ? static_cast<double>(decisions) / wall_s / 1e6 : 0.0);
        if (done == total) fputc('\n', stderr);
      });
  if (!runs.ok()) return runs.status();
  uint64_t decisions = 0;
  double wall_s = 0;
  for (const RunResult& r : *runs) {
    decisions += r.decisions;
    wall_s += r.wall_s;
  }
  if (!options.quiet) {
    fprintf(stderr, "sim: %zu runs, %llu placement decisions, %.2f M decisions/s per host thread\n",
            runs->size(), static_cast<unsigned long long>(decisions),
            wall_s > 0 ? static_cast<double>(decisions) / wall_s / 1e6 : 0.0);
  }
  if (!options.json_out.empty()) {
    absl::Status written =
        WriteText(options.json_out, ResultsJson(*topology, *runs).dump(1) + "\n");
    if (!written.ok()) return written;
  }
  const std::string markdown_path =
      !options.markdown_out.empty() ? options.markdown_out
                                    : (options.json_out == "-" ? "" : "-");
  if (!markdown_path.empty()) {
    return WriteText(markdown_path, ResultsMarkdown(*topology, *runs));
  }
  return absl::OkStatus();
}

}  // namespace loehle::sim
