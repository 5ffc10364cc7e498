// libFuzzer target: the --idle-latency-file parser (ApplyIdleLatencyFile,
// loader/core/topology.h) on any file content, against an 8-CPU topology.
// Beyond not crashing: an error names the file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "loader/core/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("idle-latency", 0);
  if (fd < 0) abort();
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) abort();
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  loehle::Topology topology;
  for (int cpu = 0; cpu < 8; ++cpu) {
    topology.cpus.push_back({cpu, cpu & ~1, cpu / 4, cpu / 4, true});
  }
  topology.nr_llcs = 2;
  topology.nr_nodes = 2;
  topology.exit_latency_ns.resize(8);
  const absl::Status status = loehle::ApplyIdleLatencyFile(path, &topology);
  close(fd);
  if (!status.ok() && status.message().find(path) == std::string::npos) abort();
  return 0;
}
