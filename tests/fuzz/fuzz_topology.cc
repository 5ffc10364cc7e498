// libFuzzer target: the sysfs topology reader (ReadTopology,
// loader/core/topology.h) on generated trees. The input, split at NUL
// bytes, gives the contents of a fixed list of sysfs files for a 4-CPU
// machine (an empty piece: the file is absent), written under a fresh
// folder each run. Beyond not crashing: an accepted topology has every
// CPU's core, LLC and node in range, and the CPU lists the BPF side walks
// (BuildCpuLists) hold every CPU exactly once.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "loader/core/topology.h"
#include "loehle/intf.h"

namespace {

std::vector<std::string> Files() {
  std::vector<std::string> files = {
      "devices/system/cpu/possible", "devices/system/cpu/online",
      "kernel/sched_ext/hotplug_seq", "devices/system/node/node0/cpulist",
      "devices/system/node/node1/cpulist"};
  for (int cpu = 0; cpu < 4; ++cpu) {
    const std::string dir = "devices/system/cpu/cpu" + std::to_string(cpu);
    files.push_back(dir + "/topology/thread_siblings_list");
    files.push_back(dir + "/topology/core_cpus_list");
    for (int index = 0; index < 2; ++index) {
      const std::string cache = dir + "/cache/index" + std::to_string(index);
      files.push_back(cache + "/type");
      files.push_back(cache + "/level");
      files.push_back(cache + "/shared_cpu_list");
    }
    files.push_back(dir + "/cpuidle/state0/latency");
    files.push_back(dir + "/cpuidle/state1/latency");
  }
  return files;
}

void Check(const loehle::Topology& topo) {
  const int n = static_cast<int>(topo.cpus.size());
  if (n < 1 || n > LOEHLE_MAX_CPUS) abort();
  if (topo.nr_llcs < 1 || topo.nr_llcs > LOEHLE_MAX_LLCS) abort();
  if (topo.nr_nodes < 1 || topo.nr_nodes > LOEHLE_MAX_NODES) abort();
  for (const loehle::CpuTopology& cpu : topo.cpus) {
    if (cpu.core < 0 || cpu.core > cpu.cpu) abort();
    if (cpu.llc < 0 || cpu.llc >= topo.nr_llcs) abort();
    if (cpu.node < 0 || cpu.node >= topo.nr_nodes) abort();
  }
  const loehle_cpu_lists lists = loehle::BuildCpuLists(topo);
  std::vector<int> seen(n, 0);
  for (int llc = 0; llc < topo.nr_llcs; ++llc) {
    for (uint32_t k = 0; k < lists.llc_len[llc]; ++k) {
      const uint32_t cpu = lists.llc_cpus[lists.llc_start[llc] + k];
      if (cpu >= static_cast<uint32_t>(n)) abort();
      ++seen[cpu];
    }
  }
  for (int count : seen) {
    if (count != 1) abort();
  }
}

// The tree of the last input, removed when the fuzzer exits.
std::string TreeRoot() {
  static const std::string root =
      (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp") +
      std::string("/loehle-fuzz-topology.") + std::to_string(getpid());
  return root;
}
void RemoveTree() {
  std::error_code error;
  std::filesystem::remove_all(TreeRoot(), error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> files = Files();
  // TreeRoot() first: its string must outlive the exit handler.
  static const bool cleanup_registered = (TreeRoot(), atexit(RemoveTree), true);
  (void)cleanup_registered;
  const std::string root = TreeRoot();
  std::error_code error;
  std::filesystem::remove_all(root, error);
  size_t start = 0;
  for (const std::string& file : files) {
    if (start > size) break;
    size_t end = start;
    while (end < size && data[end] != 0) ++end;
    if (end > start) {
      const std::filesystem::path path = root + "/" + file;
      std::filesystem::create_directories(path.parent_path(), error);
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(data + start), end - start);
    }
    start = end + 1;
  }
  absl::StatusOr<loehle::Topology> topology = loehle::ReadTopology(root);
  if (topology.ok()) Check(*topology);
  return 0;
}
