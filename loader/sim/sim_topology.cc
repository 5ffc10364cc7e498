#include "loader/sim/sim_topology.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "loader/core/topology.h"
#include "loehle/intf.h"

namespace loehle::sim {
namespace {

absl::string_view Abs(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

// The presets. Idle-state figures (exit latency, target residency, in
// microseconds) and where they come from:
// - xeon-64: the kernel's intel_idle table for Skylake-SP (POLL, C1 2/2,
//   C1E 10/20, C6 133/600), the seed-003 machine's generation.
// - altra-160, vera-352: arm64 WFI (1/1) and a core power-down state; the
//   power-down figures (altra 50/200, vera 80/400) are representative of
//   ACPI LPI tables of such servers, not read from the machines.
// - epyc-256: acpi_idle as AMD servers commonly report it (C1 1/2 by
//   MWAIT, C2 350/700 by I/O port).
// - vm-8: the project's QEMU guest (2 nodes x 2 cores x 2 threads, siblings
//   adjacent) as scripts/bench runs it: no cpuidle driver, so every idle
//   CPU reports the default idle's state 1, whose latency the bench's
//   latency file sets to 10 us everywhere (exit 10, residency 0).
struct Preset {
  std::string_view name;
  std::string_view text;
};

constexpr Preset kPresets[] = {
    {"altra-160",
     "name altra-160\nnodes 2\nllcs-per-node 1\ncores-per-llc 80\n"
     "threads-per-core 1\nstate WFI 1 1\nstate cpuoff 50 200\n"},
    {"xeon-64",
     "name xeon-64\nnodes 2\nllcs-per-node 1\ncores-per-llc 16\n"
     "threads-per-core 2\nnumbering thread-major\nstate POLL 0 0\n"
     "state C1 2 2\nstate C1E 10 20\nstate C6 133 600\n"},
    {"vera-352",
     "name vera-352\nnodes 2\nllcs-per-node 1\ncores-per-llc 88\n"
     "threads-per-core 2\nnumbering thread-major\nstate WFI 1 1\n"
     "state cpuoff 80 400\n"},
    {"epyc-256",
     "name epyc-256\nnodes 2\nllcs-per-node 8\ncores-per-llc 8\n"
     "threads-per-core 2\nnumbering thread-major\nstate C1 1 2\n"
     "state C2 350 700\n"},
    {"vm-8",
     "name vm-8\nnodes 2\nllcs-per-node 1\ncores-per-llc 2\n"
     "threads-per-core 2\nnumbering core-major\nstate default-idle 10 0\n"},
};

struct Shape {
  std::map<std::string, int> counts;  // nodes, llcs-per-node, ...
  bool thread_major = false;
  std::string name;
  std::vector<IdleState> states;
};

absl::Status LineError(std::string_view origin, int line, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(Abs(origin), ":", line, ": ", Abs(what)));
}

absl::StatusOr<uint64_t> Micros(std::string_view origin, int line,
                                absl::string_view field, absl::string_view what) {
  uint64_t us;
  if (!absl::SimpleAtoi(field, &us) || us > 10'000'000) {
    return LineError(origin, line,
                     absl::StrCat(what, " must be microseconds in 0..10000000, got \"",
                                  field, "\""));
  }
  return us * 1000;
}

absl::Status ParseLine(std::string_view origin, int line,
                       const std::vector<absl::string_view>& f, Shape* shape) {
  const std::string key(f[0]);
  if (key == "state") {
    if (f.size() != 4) {
      return LineError(origin, line,
                       "state takes a name, an exit latency and a target residency (us)");
    }
    IdleState state{std::string(f[1]), 0, 0};
    absl::StatusOr<uint64_t> exit = Micros(origin, line, f[2], "the exit latency");
    if (!exit.ok()) return exit.status();
    absl::StatusOr<uint64_t> residency = Micros(origin, line, f[3], "the target residency");
    if (!residency.ok()) return residency.status();
    state.exit_latency_ns = *exit;
    state.target_residency_ns = *residency;
    if (!shape->states.empty() &&
        (state.exit_latency_ns < shape->states.back().exit_latency_ns ||
         state.target_residency_ns < shape->states.back().target_residency_ns)) {
      return LineError(origin, line, "states must be listed shallowest first");
    }
    if (shape->states.size() >= LOEHLE_MAX_IDLE_STATES) {
      return LineError(origin, line,
                       absl::StrCat("more than ", LOEHLE_MAX_IDLE_STATES, " idle states"));
    }
    shape->states.push_back(state);
    return absl::OkStatus();
  }
  if (f.size() != 2) return LineError(origin, line, absl::StrCat(key, " takes one value"));
  if (key == "name") {
    shape->name = std::string(f[1]);
    return absl::OkStatus();
  }
  if (key == "numbering") {
    if (f[1] != "core-major" && f[1] != "thread-major") {
      return LineError(origin, line, "numbering is core-major or thread-major");
    }
    shape->thread_major = f[1] == "thread-major";
    return absl::OkStatus();
  }
  if (key != "nodes" && key != "llcs-per-node" && key != "cores-per-llc" &&
      key != "threads-per-core") {
    return LineError(origin, line, absl::StrCat("unknown key \"", key, "\""));
  }
  int n;
  if (!absl::SimpleAtoi(f[1], &n) || n < 1 || n > LOEHLE_MAX_CPUS) {
    return LineError(origin, line,
                     absl::StrCat(key, " must be a count in 1..", LOEHLE_MAX_CPUS,
                                  ", got \"", f[1], "\""));
  }
  if (!shape->counts.emplace(key, n).second) {
    return LineError(origin, line, absl::StrCat(key, " given twice"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SimTopology> Build(const Shape& shape, std::string_view origin) {
  for (const char* key : {"nodes", "llcs-per-node", "cores-per-llc"}) {
    if (!shape.counts.count(key)) {
      return absl::InvalidArgumentError(absl::StrCat(Abs(origin), ": ", key, " is missing"));
    }
  }
  const int nodes = shape.counts.at("nodes");
  const int llcs_per_node = shape.counts.at("llcs-per-node");
  const int cores_per_llc = shape.counts.at("cores-per-llc");
  const int threads =
      shape.counts.count("threads-per-core") ? shape.counts.at("threads-per-core") : 1;
  const int64_t cpus = int64_t{nodes} * llcs_per_node * cores_per_llc * threads;
  if (threads > LOEHLE_MAX_SMT || nodes > LOEHLE_MAX_NODES ||
      nodes * llcs_per_node > LOEHLE_MAX_LLCS || cpus > LOEHLE_MAX_CPUS) {
    return absl::InvalidArgumentError(absl::StrCat(
        Abs(origin), ": at most ", LOEHLE_MAX_CPUS, " CPUs, ", LOEHLE_MAX_LLCS, " LLCs, ",
        LOEHLE_MAX_NODES, " nodes and ", LOEHLE_MAX_SMT, " threads per core (got ", cpus,
        " CPUs, ", nodes * llcs_per_node, " LLCs, ", nodes, " nodes, ", threads,
        " threads)"));
  }
  SimTopology topo;
  topo.name = shape.name.empty() ? std::string(origin) : shape.name;
  topo.nr_nodes = nodes;
  topo.nr_llcs = nodes * llcs_per_node;
  topo.nr_cores = nodes * llcs_per_node * cores_per_llc;
  topo.threads_per_core = threads;
  topo.states = shape.states;
  topo.cpus.resize(static_cast<size_t>(cpus));
  for (int core = 0; core < topo.nr_cores; ++core) {
    for (int t = 0; t < threads; ++t) {
      const int cpu = shape.thread_major ? core + t * topo.nr_cores : core * threads + t;
      topo.cpus[cpu] = SimCpu{core, core / cores_per_llc,
                              core / (cores_per_llc * llcs_per_node)};
    }
  }
  return topo;
}

// A topology read from sysfs (loader/core/topology.h), idle states from
// cpu0.
absl::StatusOr<SimTopology> FromHost() {
  absl::StatusOr<Topology> host = ReadTopology("/sys");
  if (!host.ok()) return host.status();
  SimTopology topo;
  topo.name = "host";
  topo.source = "host";
  std::map<int, int> cores;  // lowest sibling id -> dense index
  std::map<int, int> threads;
  for (const CpuTopology& cpu : host->cpus) {
    if (!cpu.online) continue;
    cores.emplace(cpu.core, static_cast<int>(cores.size()));
  }
  for (const CpuTopology& cpu : host->cpus) {
    if (!cpu.online) {
      return absl::FailedPreconditionError(absl::StrCat(
          "host: cpu ", cpu.cpu, " is offline; the simulator needs every CPU online"));
    }
    topo.cpus.push_back(SimCpu{cores[cpu.core], cpu.llc, cpu.node});
    topo.threads_per_core = std::max(topo.threads_per_core, ++threads[cpu.core]);
  }
  topo.nr_cores = static_cast<int>(cores.size());
  topo.nr_llcs = host->nr_llcs;
  topo.nr_nodes = host->nr_nodes;
  if (!host->exit_latency_ns.empty()) {
    int k = 0;
    for (uint64_t ns : host->exit_latency_ns[0]) {
      topo.states.push_back(IdleState{absl::StrCat("state", k++), ns, 3 * ns});
    }
  }
  return topo;
}

}  // namespace

absl::StatusOr<SimTopology> ParseSimTopology(std::string_view text,
                                             std::string_view origin) {
  Shape shape;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(Abs(text), '\n')) {
    ++line_no;
    line = line.substr(0, line.find('#'));
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.empty()) continue;
    if (absl::Status parsed = ParseLine(origin, line_no, fields, &shape); !parsed.ok()) {
      return parsed;
    }
  }
  absl::StatusOr<SimTopology> topo = Build(shape, origin);
  if (topo.ok()) topo->source = std::string(origin);
  return topo;
}

std::vector<std::string> SimTopologyPresets() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.emplace_back(preset.name);
  return names;
}

std::string_view SimTopologyPresetText(std::string_view name) {
  for (const Preset& preset : kPresets) {
    if (preset.name == name) return preset.text;
  }
  return {};
}

absl::StatusOr<SimTopology> LoadSimTopology(std::string_view spec) {
  if (spec == "host") return FromHost();
  if (std::string_view text = SimTopologyPresetText(spec); !text.empty()) {
    absl::StatusOr<SimTopology> topo = ParseSimTopology(text, spec);
    if (topo.ok()) topo->source = "preset";
    return topo;
  }
  std::ifstream in{std::string(spec)};
  if (!in) {
    return absl::NotFoundError(absl::StrCat(
        "--topology: \"", Abs(spec), "\" is neither a preset (",
        absl::StrJoin(SimTopologyPresets(), ", "), "), host, nor a readable file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return ParseSimTopology(text.str(), spec);
}

std::string DescribeSimTopology(const SimTopology& topo) {
  std::vector<std::string> states;
  for (const IdleState& s : topo.states) {
    states.push_back(absl::StrCat(s.name, "(", s.exit_latency_ns / 1000, "us)"));
  }
  return absl::StrCat(topo.name, ": ", topo.cpus.size(), " CPUs, ", topo.nr_cores,
                      " cores x ", topo.threads_per_core, " threads, ", topo.nr_llcs,
                      " LLCs, ", topo.nr_nodes, " nodes, idle states ",
                      states.empty() ? "none" : absl::StrJoin(states, " "));
}

}  // namespace loehle::sim
