#include "loader/core/topology.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

constexpr int kMaxCpuListId = 65535;

absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// Closes the descriptor it owns.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads a whole (small) file. A missing file is NotFound so that callers can
// tell "absent" from "unreadable".
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message =
        absl::StrFormat("cannot read %s: %s", path, std::strerror(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  std::string contents;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(
          absl::StrFormat("cannot read %s: %s", path, std::strerror(errno)));
    }
    if (n == 0) break;
    contents.append(buffer, static_cast<size_t>(n));
  }
  return contents;
}

bool IsDirectory(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::is_directory(path, ignored);
}

absl::StatusOr<std::vector<int>> ReadCpuListFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<std::vector<int>> cpus = ParseCpuList(*text);
  if (!cpus.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", path, cpus.status().message()));
  }
  return cpus;
}

absl::StatusOr<uint64_t> ReadNumberFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &value)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected a number, got \"%s\"", path,
                        absl::StripAsciiWhitespace(*text)));
  }
  return value;
}

// The core of `cpu`: lowest id among its SMT siblings, or itself when the
// kernel does not say.
absl::StatusOr<int> ReadCore(const std::string& cpu_dir, int cpu) {
  for (const char* file : {"thread_siblings_list", "core_cpus_list"}) {
    absl::StatusOr<std::vector<int>> siblings =
        ReadCpuListFile(absl::StrCat(cpu_dir, "/topology/", file));
    if (absl::IsNotFound(siblings.status())) continue;
    if (!siblings.ok()) return siblings.status();
    if (siblings->empty()) continue;
    return std::min(cpu, siblings->front());
  }
  return cpu;
}

// The CPUs sharing `cpu`'s last-level cache: shared_cpu_list of the highest
// level among its Unified and Data caches. Empty when there is no cache
// information.
absl::StatusOr<std::vector<int>> ReadLlcCpus(const std::string& cpu_dir) {
  int best_level = -1;
  std::vector<int> best_cpus;
  for (int index = 0;; ++index) {
    const std::string dir = absl::StrCat(cpu_dir, "/cache/index", index);
    if (!IsDirectory(dir)) break;
    absl::StatusOr<std::string> type = ReadFile(dir + "/type");
    if (absl::IsNotFound(type.status())) continue;
    if (!type.ok()) return type.status();
    const absl::string_view kind = absl::StripAsciiWhitespace(*type);
    if (kind != "Unified" && kind != "Data") continue;
    absl::StatusOr<uint64_t> level = ReadNumberFile(dir + "/level");
    if (absl::IsNotFound(level.status())) continue;
    if (!level.ok()) return level.status();
    if (static_cast<int>(*level) <= best_level) continue;
    absl::StatusOr<std::vector<int>> shared =
        ReadCpuListFile(dir + "/shared_cpu_list");
    if (absl::IsNotFound(shared.status())) continue;
    if (!shared.ok()) return shared.status();
    best_level = static_cast<int>(*level);
    best_cpus = std::move(*shared);
  }
  return best_cpus;
}

absl::StatusOr<std::vector<uint64_t>> ReadExitLatencies(
    const std::string& cpu_dir) {
  std::vector<uint64_t> latencies;
  for (int state = 0; state < LOEHLE_MAX_IDLE_STATES; ++state) {
    const std::string dir = absl::StrCat(cpu_dir, "/cpuidle/state", state);
    if (!IsDirectory(dir)) break;
    absl::StatusOr<uint64_t> latency_us = ReadNumberFile(dir + "/latency");
    if (!latency_us.ok()) return latency_us.status();
    latencies.push_back(*latency_us * 1000);
  }
  return latencies;
}

// Node number -> CPUs, for nodes that have CPUs, in node-number order.
absl::StatusOr<std::map<int, std::vector<int>>> ReadNodes(
    const std::string& node_root) {
  std::map<int, std::vector<int>> nodes;
  std::error_code error;
  std::filesystem::directory_iterator it(node_root, error);
  if (error) return nodes;  // no NUMA information: one node
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) {
      return absl::UnavailableError(
          absl::StrFormat("cannot list %s: %s", node_root, error.message()));
    }
    const std::string name = it->path().filename().string();
    int number = 0;
    if (name.rfind("node", 0) != 0 ||
        !absl::SimpleAtoi(absl::string_view(name).substr(4), &number) ||
        number < 0) {
      continue;
    }
    absl::StatusOr<std::vector<int>> cpus =
        ReadCpuListFile(it->path().string() + "/cpulist");
    if (absl::IsNotFound(cpus.status())) continue;
    if (!cpus.ok()) return cpus.status();
    if (!cpus->empty()) nodes[number] = std::move(*cpus);
  }
  return nodes;
}

// Splits "a-b" or "a" into a CPU range.
bool ParseCpuRange(absl::string_view part, int* lo, int* hi) {
  const size_t dash = part.find('-');
  if (dash == absl::string_view::npos) {
    if (!absl::SimpleAtoi(part, lo)) return false;
    *hi = *lo;
  } else if (!absl::SimpleAtoi(part.substr(0, dash), lo) ||
             !absl::SimpleAtoi(part.substr(dash + 1), hi)) {
    return false;
  }
  // SimpleAtoi accepts signs and surrounding blanks; a cpulist does not.
  for (const char c : part) {
    if (!absl::ascii_isdigit(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  const absl::string_view list = absl::StripAsciiWhitespace(ToAbsl(text));
  std::vector<int> cpus;
  if (list.empty()) return cpus;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    int lo = 0;
    int hi = 0;
    if (!ParseCpuRange(part, &lo, &hi) || lo < 0 || lo > hi) {
      return absl::InvalidArgumentError(
          absl::StrFormat("bad cpulist \"%s\"", list));
    }
    if (hi > kMaxCpuListId) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "bad cpulist \"%s\": cpu %d is beyond %d", list, hi, kMaxCpuListId));
    }
    for (int cpu = lo; cpu <= hi; ++cpu) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

namespace {

// 0 when the kernel has no such file.
absl::StatusOr<uint64_t> ReadHotplugSeq(const std::string& sysfs_root) {
  absl::StatusOr<uint64_t> seq =
      ReadNumberFile(sysfs_root + "/kernel/sched_ext/hotplug_seq");
  if (absl::IsNotFound(seq.status())) return 0;
  return seq;
}

// One entry per possible CPU, with its online flag.
absl::StatusOr<std::vector<CpuTopology>> ReadPossibleCpus(const std::string& cpu_root) {
  absl::StatusOr<std::vector<int>> possible = ReadCpuListFile(cpu_root + "/possible");
  if (!possible.ok()) return possible.status();
  if (possible->empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s/possible lists no CPUs", cpu_root));
  }
  const int nr_cpus = possible->back() + 1;
  if (nr_cpus > LOEHLE_MAX_CPUS) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%d possible CPUs exceed scx_loehle's limit of %d",
                        nr_cpus, LOEHLE_MAX_CPUS));
  }
  std::vector<CpuTopology> cpus(nr_cpus);
  for (int cpu = 0; cpu < nr_cpus; ++cpu) cpus[cpu].cpu = cpu;
  absl::StatusOr<std::vector<int>> online = ReadCpuListFile(cpu_root + "/online");
  if (absl::IsNotFound(online.status())) {
    online = *possible;
  } else if (!online.ok()) {
    return online.status();
  }
  for (int cpu : *online) {
    if (cpu < nr_cpus) cpus[cpu].online = true;
  }
  return cpus;
}

// Dense node indices, in node-number order.
absl::Status AssignNodes(const std::string& node_root, Topology* topo) {
  absl::StatusOr<std::map<int, std::vector<int>>> nodes = ReadNodes(node_root);
  if (!nodes.ok()) return nodes.status();
  const int nr_cpus = static_cast<int>(topo->cpus.size());
  int node_index = 0;
  for (const auto& [number, cpus] : *nodes) {
    for (int cpu : cpus) {
      if (cpu < nr_cpus) topo->cpus[cpu].node = node_index;
    }
    ++node_index;
  }
  topo->nr_nodes = std::max(node_index, 1);
  if (topo->nr_nodes > LOEHLE_MAX_NODES) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%d NUMA nodes exceed scx_loehle's limit of %d",
                        topo->nr_nodes, LOEHLE_MAX_NODES));
  }
  return absl::OkStatus();
}

// Core, dense LLC index and exit latencies of every CPU; nodes first, as
// CPUs without cache information fall back to one LLC per node.
absl::Status ReadPerCpu(const std::string& cpu_root, Topology* topo) {
  // An LLC is identified by the CPUs sharing it, or, without cache
  // information, by its node ({-1 - node} cannot clash with a CPU list).
  std::map<std::vector<int>, int> llc_index;
  bool any_latency = false;
  for (CpuTopology& entry : topo->cpus) {
    const std::string cpu_dir = absl::StrCat(cpu_root, "/cpu", entry.cpu);
    absl::StatusOr<int> core = ReadCore(cpu_dir, entry.cpu);
    if (!core.ok()) return core.status();
    entry.core = *core;

    absl::StatusOr<std::vector<int>> llc_cpus = ReadLlcCpus(cpu_dir);
    if (!llc_cpus.ok()) return llc_cpus.status();
    if (llc_cpus->empty() && entry.online) llc_cpus->push_back(-1 - entry.node);
    if (llc_cpus->empty()) {
      entry.llc = 0;  // offline and unknown: must not invent an LLC
    } else {
      entry.llc =
          llc_index.emplace(*llc_cpus, static_cast<int>(llc_index.size()))
              .first->second;
    }

    absl::StatusOr<std::vector<uint64_t>> latencies = ReadExitLatencies(cpu_dir);
    if (!latencies.ok()) return latencies.status();
    if (!latencies->empty()) any_latency = true;
    topo->exit_latency_ns[entry.cpu] = std::move(*latencies);
  }
  topo->nr_llcs = std::max(static_cast<int>(llc_index.size()), 1);
  if (topo->nr_llcs > LOEHLE_MAX_LLCS) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%d LLCs exceed scx_loehle's limit of %d", topo->nr_llcs,
                        LOEHLE_MAX_LLCS));
  }
  topo->latency_source = any_latency ? "sysfs" : "none";
  return absl::OkStatus();
}

// Some core has two online threads.
bool SmtActive(const Topology& topo) {
  std::map<int, int> online_threads_per_core;
  for (const CpuTopology& entry : topo.cpus) {
    if (entry.online && ++online_threads_per_core[entry.core] > 1) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<Topology> ReadTopology(const std::string& sysfs_root) {
  // Before anything else: a hotplug from here on shows as a newer number.
  absl::StatusOr<uint64_t> hotplug_seq = ReadHotplugSeq(sysfs_root);
  if (!hotplug_seq.ok()) return hotplug_seq.status();
  const std::string cpu_root = sysfs_root + "/devices/system/cpu";
  absl::StatusOr<std::vector<CpuTopology>> cpus = ReadPossibleCpus(cpu_root);
  if (!cpus.ok()) return cpus.status();

  Topology topo;
  topo.hotplug_seq = *hotplug_seq;
  topo.cpus = *std::move(cpus);
  topo.exit_latency_ns.resize(topo.cpus.size());
  if (absl::Status s = AssignNodes(sysfs_root + "/devices/system/node", &topo);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ReadPerCpu(cpu_root, &topo); !s.ok()) return s;
  topo.smt_active = SmtActive(topo);
  return topo;
}

namespace {

// States no line of an idle-latency file has given yet.
constexpr uint64_t kUnsetLatency = UINT64_MAX;

// The CPUs of a line's first field: "*" or a cpulist below nr_cpus.
absl::StatusOr<std::vector<int>> LatencyLineCpus(absl::string_view field,
                                                 int nr_cpus) {
  std::vector<int> cpus;
  if (field == "*") {
    for (int cpu = 0; cpu < nr_cpus; ++cpu) cpus.push_back(cpu);
    return cpus;
  }
  absl::StatusOr<std::vector<int>> parsed =
      ParseCpuList(std::string_view(field.data(), field.size()));
  if (!parsed.ok()) return parsed.status();
  if (!parsed->empty() && parsed->back() >= nr_cpus) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cpu %d is beyond the %d possible CPUs", parsed->back(), nr_cpus));
  }
  return parsed;
}

struct StateLatency {
  uint32_t state = 0;
  uint64_t latency_ns = 0;
};

// "<state>=<latency_us>".
absl::StatusOr<StateLatency> ParseStateLatency(absl::string_view field) {
  const size_t equals = field.find('=');
  if (equals == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("expected <state>=<latency_us>, got \"%s\"", field));
  }
  const absl::string_view state_text = field.substr(0, equals);
  const absl::string_view latency_text = field.substr(equals + 1);
  const auto all_digits = [](absl::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return absl::ascii_isdigit(c);
    });
  };
  StateLatency out;
  if (!all_digits(state_text) || !absl::SimpleAtoi(state_text, &out.state)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bad state number \"%s\"", state_text));
  }
  if (out.state >= LOEHLE_MAX_IDLE_STATES) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "state %d is not below %d", out.state, LOEHLE_MAX_IDLE_STATES));
  }
  uint64_t latency_us = 0;
  if (!all_digits(latency_text) || !absl::SimpleAtoi(latency_text, &latency_us) ||
      latency_us > UINT64_MAX / 1000 - 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bad latency \"%s\" (microseconds)", latency_text));
  }
  out.latency_ns = latency_us * 1000;
  return out;
}

// Applies one line ("<cpus> <state>=<latency_us> ...", comment removed) to
// `latencies`; blank lines do nothing.
absl::Status ApplyLatencyLine(absl::string_view line,
                              std::vector<std::vector<uint64_t>>* latencies) {
  std::vector<absl::string_view> fields =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (fields.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<int>> cpus =
      LatencyLineCpus(fields[0], static_cast<int>(latencies->size()));
  if (!cpus.ok()) return cpus.status();
  if (fields.size() == 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected <state>=<latency_us> after \"%s\"", fields[0]));
  }
  for (size_t i = 1; i < fields.size(); ++i) {
    absl::StatusOr<StateLatency> entry = ParseStateLatency(fields[i]);
    if (!entry.ok()) return entry.status();
    for (int cpu : *cpus) {
      std::vector<uint64_t>& states = (*latencies)[cpu];
      if (states.size() <= entry->state) {
        states.resize(entry->state + 1, kUnsetLatency);
      }
      states[entry->state] = entry->latency_ns;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyIdleLatencyFile(const std::string& path, Topology* topo) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  const int nr_cpus = static_cast<int>(topo->cpus.size());
  // Built aside and swapped in at the end, so that an error leaves *topo as
  // it was.
  std::vector<std::vector<uint64_t>> latencies(nr_cpus);
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_number;
    if (absl::Status applied =
            ApplyLatencyLine(line.substr(0, line.find('#')), &latencies);
        !applied.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s:%d: %s", path, line_number, applied.message()));
    }
  }
  for (int cpu = 0; cpu < nr_cpus; ++cpu) {
    const std::vector<uint64_t>& states = latencies[cpu];
    for (size_t state = 0; state < states.size(); ++state) {
      if (states[state] == kUnsetLatency) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: cpu %d has state %d but not state %d", path,
                            cpu, states.size() - 1, state));
      }
    }
  }
  topo->exit_latency_ns = std::move(latencies);
  topo->latency_source = "file:" + path;
  return absl::OkStatus();
}

loehle_cpu_lists BuildCpuLists(const Topology& topo) {
  loehle_cpu_lists lists{};
  // Counting sort by group: CPUs are visited in id order, so each run is
  // ascending.
  const auto fill = [&](auto group_of, int nr_groups, uint32_t* cpus,
                        uint32_t* start, uint32_t* len, uint32_t* pos) {
    uint32_t next = 0;
    for (int group = 0; group < nr_groups; ++group) {
      start[group] = next;
      for (const CpuTopology& entry : topo.cpus) {
        if (group_of(entry) != group) continue;
        if (pos != nullptr) pos[entry.cpu] = len[group];
        cpus[next++] = static_cast<uint32_t>(entry.cpu);
        ++len[group];
      }
    }
  };
  fill([](const CpuTopology& c) { return c.llc; },
       std::min(topo.nr_llcs, LOEHLE_MAX_LLCS), lists.llc_cpus,
       lists.llc_start, lists.llc_len, lists.llc_pos);
  fill([](const CpuTopology& c) { return c.node; },
       std::min(topo.nr_nodes, LOEHLE_MAX_NODES), lists.node_cpus,
       lists.node_start, lists.node_len, nullptr);
  return lists;
}

std::vector<OnlineChange> FollowOnlineCpus(const std::vector<bool>& online,
                                           Topology* topology) {
  std::vector<OnlineChange> changes;
  for (CpuTopology& entry : topology->cpus) {
    const size_t cpu = static_cast<size_t>(entry.cpu);
    const bool now = cpu < online.size() && online[cpu];
    if (now == entry.online) continue;
    entry.online = now;
    changes.push_back({entry.cpu, now});
  }
  return changes;
}

bool HasExitLatencies(const Topology& topo) {
  for (const std::vector<uint64_t>& table : topo.exit_latency_ns) {
    if (!table.empty()) return true;
  }
  return false;
}

std::string DescribeTopology(const Topology& topo) {
  int online = 0;
  std::set<int> cores;
  for (const CpuTopology& entry : topo.cpus) {
    if (!entry.online) continue;
    ++online;
    cores.insert(entry.core);
  }
  const int offline = static_cast<int>(topo.cpus.size()) - online;
  const auto plural = [](int n, std::string_view one, std::string_view many) {
    return absl::StrFormat("%d %s", n, n == 1 ? one : many);
  };

  std::string latency = "no exit latencies";
  if (topo.latency_source == "sysfs") {
    latency = "exit latencies from sysfs";
  } else if (topo.latency_source.rfind("file:", 0) == 0) {
    latency = "exit latencies from " + topo.latency_source.substr(5);
  }
  return absl::StrFormat(
      "%s%s, %s (SMT %s), %s, %s, %s", plural(online, "CPU", "CPUs"),
      offline > 0 ? absl::StrFormat(" (%d offline)", offline) : "",
      plural(static_cast<int>(cores.size()), "core", "cores"),
      topo.smt_active ? "on" : "off", plural(topo.nr_llcs, "LLC", "LLCs"),
      plural(topo.nr_nodes, "node", "nodes"), latency);
}

}  // namespace loehle
