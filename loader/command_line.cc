#include "loader/command_line.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "loader/core/daemon_options.h"
#include "loader/core/generation_history.h"
#include "loader/core/settings.h"

namespace loehle {
namespace {

// absl::StrCat of this abseil takes absl::string_view, not std::string_view.
absl::string_view Abs(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

absl::StatusOr<uint64_t> ParseCount(std::string_view flag, std::string_view text) {
  uint64_t value;
  if (!absl::SimpleAtoi(Abs(text), &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", Abs(flag), " takes a non-negative integer, got \"", Abs(text), "\""));
  }
  return value;
}

absl::StatusOr<double> ParseSeconds(std::string_view flag, std::string_view text) {
  double value;
  if (!absl::SimpleAtod(Abs(text), &value) || !(value > 0) || value > 86400) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", Abs(flag), " takes a number of seconds in (0, 86400], got \"",
        Abs(text), "\""));
  }
  return value;
}

absl::Status NonEmpty(std::string_view flag, std::string_view what,
                      std::string_view value) {
  if (!value.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", Abs(flag), " needs ", Abs(what)));
}

// --- Settings: the scheduler's flags, which `ctl set` takes too. Each one
// sets the scheduler's starting settings and records the change for `ctl
// set`; only the one the command uses matters.

template <absl::StatusOr<uint32_t> (*parse)(std::string_view), uint32_t Settings::*field>
absl::Status ApplyName(std::string_view key, std::string_view value, Command* cmd) {
  absl::StatusOr<uint32_t> parsed = parse(value);
  if (!parsed.ok()) return parsed.status();
  cmd->daemon.settings.*field = *parsed;
  cmd->changes[std::string(key)] = std::string(value);
  return absl::OkStatus();
}

template <typename T, T Settings::*field>
absl::Status ApplyNumber(std::string_view flag, std::string_view key,
                         std::string_view value, Command* cmd) {
  absl::StatusOr<uint64_t> n = ParseCount(flag, value);
  if (!n.ok()) return n.status();
  if (*n > std::numeric_limits<T>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("--", Abs(flag), " is too large"));
  }
  cmd->daemon.settings.*field = static_cast<T>(*n);
  cmd->changes[std::string(key)] = *n;
  return absl::OkStatus();
}

absl::Status ApplyPolicy(std::string_view v, Command* c) {
  return ApplyName<ParsePolicy, &Settings::policy>("policy", v, c);
}
absl::Status ApplySchedIdle(std::string_view v, Command* c) {
  return ApplyName<ParseSchedIdleMode, &Settings::sched_idle>("sched_idle", v, c);
}
absl::Status ApplySchedIdleScope(std::string_view v, Command* c) {
  return ApplyName<ParseSchedIdleScope, &Settings::sched_idle_scope>(
      "sched_idle_scope", v, c);
}
absl::Status ApplySmt(std::string_view v, Command* c) {
  return ApplyName<ParseSmtMode, &Settings::smt>("smt", v, c);
}
absl::Status ApplySliceUs(std::string_view v, Command* c) {
  return ApplyNumber<uint64_t, &Settings::slice_us>("slice-us", "slice_us", v, c);
}
absl::Status ApplyClaimRetries(std::string_view v, Command* c) {
  absl::Status applied = ApplyNumber<uint32_t, &Settings::claim_retries>(
      "claim-retries", "claim_retries", v, c);
  c->sim.claim_retries = c->daemon.settings.claim_retries;  // sim takes it too
  return applied;
}
absl::Status ApplySampleEvery(std::string_view v, Command* c) {
  return ApplyNumber<uint32_t, &Settings::sample_every>("sample-every",
                                                        "sample_every", v, c);
}

// --- The daemon's other flags.

absl::Status ApplyStats(std::string_view v, Command* c) {
  // 0 turns the summary lines off (the default), as in scripts.
  if (v == "0") {
    c->daemon.stats_interval_s = 0;
    return absl::OkStatus();
  }
  absl::StatusOr<double> s = ParseSeconds("stats", v);
  if (!s.ok()) return s.status();
  c->daemon.stats_interval_s = *s;
  return absl::OkStatus();
}
absl::Status ApplyKeepGenerations(std::string_view v, Command* c) {
  absl::StatusOr<uint64_t> n = ParseCount("keep-generations", v);
  if (!n.ok()) return n.status();
  if (*n < 1 || *n > kMaxKeptGenerations) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--keep-generations must be between 1 and ", kMaxKeptGenerations,
        ", got ", *n));
  }
  c->daemon.keep_generations = static_cast<uint32_t>(*n);
  return absl::OkStatus();
}
absl::Status ApplySocket(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("socket", "a path", v); !s.ok()) return s;
  c->socket_path = std::string(v);
  c->daemon.socket_path = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyIdleLatencyFile(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("idle-latency-file", "a path", v); !s.ok()) return s;
  c->daemon.idle_latency_file = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyMetricsAddr(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("metrics-addr", "HOST:PORT", v); !s.ok()) return s;
  c->daemon.metrics_addr = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyMetricsAllowRemote(std::string_view, Command* c) {
  c->daemon.metrics_allow_remote = true;
  return absl::OkStatus();
}
absl::Status ApplyScxStatsSocket(std::string_view v, Command* c) {
  c->daemon.scx_stats_socket_path = std::string(v);  // "" serves none
  return absl::OkStatus();
}
absl::Status ApplyVerbose(std::string_view, Command* c) {
  c->daemon.verbose = true;
  return absl::OkStatus();
}
// The scx schedulers' spelling of a client that prints stats every SECONDS:
// the `ctl stats` report, repeated. It starts no scheduler.
absl::Status ApplyMonitor(std::string_view v, Command* c) {
  absl::StatusOr<double> s = ParseSeconds("monitor", v);
  if (!s.ok()) return s.status();
  c->kind = Command::Kind::kStatsStream;
  c->interval_s = *s;
  return absl::OkStatus();
}

// --- Commands that end the parse.

absl::Status ApplyHelp(std::string_view, Command* c) {
  c->kind = Command::Kind::kHelp;
  return absl::OkStatus();
}
absl::Status ApplyHelpStats(std::string_view, Command* c) {
  c->kind = Command::Kind::kHelpStats;
  return absl::OkStatus();
}
absl::Status ApplyVersion(std::string_view, Command* c) {
  c->kind = Command::Kind::kVersion;
  return absl::OkStatus();
}

// --- Client flags.

absl::Status ApplyJson(std::string_view, Command* c) {
  c->json = true;
  return absl::OkStatus();
}
absl::Status ApplyInterval(std::string_view v, Command* c) {
  absl::StatusOr<double> s = ParseSeconds("interval", v);
  if (!s.ok()) return s.status();
  c->interval_s = *s;
  return absl::OkStatus();
}
absl::Status ApplyCount(std::string_view v, Command* c) {
  absl::StatusOr<uint64_t> n = ParseCount("count", v);
  if (!n.ok()) return n.status();
  c->count = static_cast<int>(std::min<uint64_t>(*n, 1 << 30));
  return absl::OkStatus();
}
absl::Status ApplyOut(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("out", "a file (or -)", v); !s.ok()) return s;
  c->out_path = std::string(v);
  c->sim.json_out = c->out_path;  // sim: the JSON results
  return absl::OkStatus();
}
absl::Status ApplyDuration(std::string_view v, Command* c) {
  absl::StatusOr<double> s = ParseSeconds("duration", v);
  if (!s.ok()) return s.status();
  c->duration_s = *s;
  return absl::OkStatus();
}
absl::Status ApplyOnce(std::string_view, Command* c) {
  c->once = true;
  return absl::OkStatus();
}


// --- The simulator's flags (scx_loehle sim).

// "a,b,c" -> each parsed by `parse`; empty items are refused.
template <typename T>
absl::StatusOr<std::vector<T>> ParseList(std::string_view flag, std::string_view text,
                                         absl::StatusOr<T> (*parse)(std::string_view)) {
  std::vector<T> out;
  for (absl::string_view item : absl::StrSplit(Abs(text), ',')) {
    if (item.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", Abs(flag), " takes a comma-separated list, got \"", Abs(text), "\""));
    }
    absl::StatusOr<T> value = parse(std::string_view(item.data(), item.size()));
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", Abs(flag), ": ", value.status().message()));
    }
    out.push_back(*value);
  }
  return out;
}

absl::StatusOr<uint32_t> ParseSimPolicy(std::string_view name) {
  absl::StatusOr<uint32_t> policy = ParsePolicy(name);
  if (policy.ok() && *policy == LOEHLE_POLICY_BUILTIN) {
    return absl::InvalidArgumentError(
        "builtin is the kernel's own selection, which the simulator does not model "
        "(expected recency, first or reservoir)");
  }
  return policy;
}

absl::StatusOr<uint32_t> ParseSimSize(std::string_view text) {
  uint32_t n;
  if (!absl::SimpleAtoi(Abs(text), &n) || n > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("sizes are counts in 0..4096, got \"", Abs(text), "\""));
  }
  return n;
}

template <uint32_t SimOptions::*field>
absl::Status ApplySimCount(std::string_view flag, std::string_view v, uint32_t min,
                           uint32_t max, Command* c) {
  absl::StatusOr<uint64_t> n = ParseCount(flag, v);
  if (!n.ok()) return n.status();
  if (*n < min || *n > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", Abs(flag), " must be between ", min, " and ", max));
  }
  c->sim.*field = static_cast<uint32_t>(*n);
  return absl::OkStatus();
}

absl::Status ApplyTopology(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("topology", "a preset, host or a file", v); !s.ok()) return s;
  c->sim.topology = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyWorkload(std::string_view v, Command* c) {
  if (v != "fork" && v != "wakeup" && v != "schedidle" && v != "smt") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown workload \"", Abs(v), "\" (expected fork, wakeup, schedidle or smt)"));
  }
  c->sim.workload = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyPolicies(std::string_view v, Command* c) {
  absl::StatusOr<std::vector<uint32_t>> list = ParseList<uint32_t>("policies", v, ParseSimPolicy);
  if (!list.ok()) return list.status();
  c->sim.policies = *list;
  return absl::OkStatus();
}
absl::Status ApplySchedIdleModes(std::string_view v, Command* c) {
  absl::StatusOr<std::vector<uint32_t>> list =
      ParseList<uint32_t>("sched-idle-modes", v, ParseSchedIdleMode);
  if (!list.ok()) return list.status();
  c->sim.sched_idle_modes = *list;
  return absl::OkStatus();
}
absl::Status ApplySmtModes(std::string_view v, Command* c) {
  absl::StatusOr<std::vector<uint32_t>> list = ParseList<uint32_t>("smt-modes", v, ParseSmtMode);
  if (!list.ok()) return list.status();
  c->sim.smt_modes = *list;
  return absl::OkStatus();
}
absl::Status ApplySizes(std::string_view flag, std::string_view v, Command* c) {
  absl::StatusOr<std::vector<uint32_t>> list = ParseList<uint32_t>(flag, v, ParseSimSize);
  if (!list.ok()) return list.status();
  c->sim.sizes = *list;
  return absl::OkStatus();
}
absl::Status ApplyForkers(std::string_view v, Command* c) { return ApplySizes("forkers", v, c); }
absl::Status ApplyWorkers(std::string_view v, Command* c) { return ApplySizes("workers", v, c); }
absl::Status ApplyForkMax(std::string_view v, Command* c) {
  return ApplySimCount<&SimOptions::fork_max>("fork-max", v, 1, 64, c);
}
absl::Status ApplyIdleHogs(std::string_view v, Command* c) {
  return ApplySimCount<&SimOptions::idle_hogs>("idle-hogs", v, 0, 4096, c);
}
absl::Status ApplyReps(std::string_view v, Command* c) {
  return ApplySimCount<&SimOptions::reps>("reps", v, 1, 1000, c);
}
absl::Status ApplyJobs(std::string_view v, Command* c) {
  return ApplySimCount<&SimOptions::jobs>("jobs", v, 0, 1024, c);
}
absl::Status ApplySeed(std::string_view v, Command* c) {
  absl::StatusOr<uint64_t> n = ParseCount("seed", v);
  if (!n.ok()) return n.status();
  c->sim.seed = *n;
  return absl::OkStatus();
}
absl::Status ApplySimSeconds(std::string_view v, Command* c) {
  double s;
  if (!absl::SimpleAtod(Abs(v), &s) || !(s > 0) || s > 3600) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sim-seconds takes simulated seconds in (0, 3600], got \"", Abs(v), "\""));
  }
  c->sim.sim_seconds = s;
  return absl::OkStatus();
}
absl::Status ApplyScanNs(std::string_view v, Command* c) {
  absl::StatusOr<uint64_t> n = ParseCount("scan-ns-per-cpu", v);
  if (!n.ok()) return n.status();
  if (*n < 1 || *n > 100000) {
    return absl::InvalidArgumentError("--scan-ns-per-cpu must be between 1 and 100000");
  }
  c->sim.scan_ns_per_cpu = *n;
  return absl::OkStatus();
}
absl::Status ApplyMarkdown(std::string_view v, Command* c) {
  if (absl::Status s = NonEmpty("markdown", "a file (or -)", v); !s.ok()) return s;
  c->sim.markdown_out = std::string(v);
  return absl::OkStatus();
}
absl::Status ApplyQuiet(std::string_view, Command* c) {
  c->sim.quiet = true;
  return absl::OkStatus();
}

constexpr uint32_t kSettingsCommands = kRunCommand | kCtlSetCommand;
constexpr uint32_t kClientCommands = kEveryCommand & ~kRunCommand;

constexpr FlagSpec kFlags[] = {
    {"policy", "builtin|recency|first|reservoir", "reservoir",
     "tie-break among equally shallow idle CPUs on fork\n"
     "(builtin = scx_bpf_select_cpu_dfl)",
     kSettingsCommands, ApplyPolicy},
    {"sched-idle", "mainline|wakee-aware|idle-first|ignore", "wakee-aware",
     "how CPUs running only idle work count", kSettingsCommands,
     ApplySchedIdle},
    {"sched-idle-scope", "hierarchy|cgroup|task", "hierarchy",
     "what idle work is: SCHED_IDLE tasks (task), also\n"
     "tasks in cpu.idle=1 cgroups (cgroup), and only for\n"
     "wakees that may preempt it (hierarchy)",
     kSettingsCommands, ApplySchedIdleScope},
    {"smt", "idle-core|off", "idle-core",
     "prefer CPUs whose whole SMT core is idle", kSettingsCommands, ApplySmt},
    {"slice-us", "N", "5000", "time slice in microseconds (50..1000000); an idle task\n"
     "waits at most 5 s + a slice + 5 ms per overdue idle\n"
     "task ahead (11 s at 1000000 with 1000 of them)",
     kSettingsCommands, ApplySliceUs},
    {"claim-retries", "N", "1", "rescans after a lost claim of an idle CPU (0..16)",
     kSettingsCommands | kSimCommand, ApplyClaimRetries},
    {"sample-every", "N", "64",
     "send every Nth pick to the event ring buffer\n(0 = none, 1 = every pick)",
     kSettingsCommands, ApplySampleEvery},
    {"stats", "SECONDS", "0", "print a summary line every SECONDS (0: none)",
     kRunCommand, ApplyStats},
    {"keep-generations", "N", "16",
     "generations the stats reply lists one by one (1..4096);\n"
     "older ones are summed under older_generations",
     kRunCommand, ApplyKeepGenerations},
    {"socket", "PATH", kDefaultSocketPath,
     "the control socket, served by the scheduler\nand used by every client",
     kEveryCommand, ApplySocket},
    {"idle-latency-file", "PATH", "",
     "per-CPU idle-state exit latencies where sysfs has\n"
     "none; lines \"<cpus> <state>=<latency_us> ...\",\ne.g. \"* 0=0 1=100\"",
     kRunCommand, ApplyIdleLatencyFile},
    {"metrics-addr", "HOST:PORT", "",
     "serve Prometheus metrics on http://HOST:PORT/metrics\n"
     "(HOST must be loopback, e.g. 127.0.0.1,\nunless --metrics-allow-remote is given)",
     kRunCommand, ApplyMetricsAddr},
    {"metrics-allow-remote", "", "",
     "let --metrics-addr listen beyond loopback",
     kRunCommand, ApplyMetricsAllowRemote},
    {"scx-stats-socket", "PATH", kScxStatsSocketPath,
     "the scx_stats protocol socket of sched_ext's own\n"
     "schedulers, for scxtop and scx clients (empty: none)",
     kRunCommand, ApplyScxStatsSocket},
    {"verbose", "", "", "libbpf's messages and verifier statistics (also -v)", kRunCommand,
     ApplyVerbose},
    {"monitor", "SECONDS", "",
     "do not run a scheduler: print the running one's\n"
     "`ctl stats` report every SECONDS, as the scx\nschedulers' --monitor does",
     kRunCommand, ApplyMonitor},
    {"json", "", "", "JSON instead of text (stats: required)",
     kCtlStatsCommand | kStatsCommand, ApplyJson},
    {"interval", "SECONDS", "1", "time between two replies or frames",
     kStatsCommand | kTopCommand, ApplyInterval},
    {"count", "N", "0", "stop after N replies or frames (0: until interrupted)",
     kStatsCommand | kTopCommand, ApplyCount},
    {"out", "FILE", "", "where the trace (trace) or the JSON results (sim) go\n(- for stdout)",
     kTraceCommand | kSimCommand, ApplyOut},
    {"duration", "SECONDS", "", "trace for SECONDS (default: until SIGINT)",
     kTraceCommand, ApplyDuration},
    {"once", "", "", "print one frame and exit", kTopCommand, ApplyOnce},
    {"topology", "NAME|host|FILE", "altra-160",
     "sim: a preset (altra-160, xeon-64, vera-352, epyc-256,\n"
     "vm-8), this machine's sysfs, or a topology file",
     kSimCommand, ApplyTopology},
    {"workload", "fork|wakeup|schedidle|smt", "fork", "sim: what runs", kSimCommand,
     ApplyWorkload},
    {"policies", "LIST", "recency,first,reservoir", "sim: the --policy values to compare",
     kSimCommand, ApplyPolicies},
    {"sched-idle-modes", "LIST", "wakee-aware", "sim: the --sched-idle values to compare",
     kSimCommand, ApplySchedIdleModes},
    {"smt-modes", "LIST", "idle-core", "sim: the --smt values to compare", kSimCommand,
     ApplySmtModes},
    {"forkers", "LIST", "32", "sim: creators of the fork workload, e.g. 1,16,32,64",
     kSimCommand, ApplyForkers},
    {"workers", "LIST", "32",
     "sim: the size of the other workloads (message\nthreads, workers, tasks; smt: 0 = one per core)",
     kSimCommand, ApplyWorkers},
    {"fork-max", "N", "1", "sim: children a creator forks before it waits (1..64)",
     kSimCommand, ApplyForkMax},
    {"idle-hogs", "N", "0", "sim: SCHED_IDLE CPU hogs beside the schedidle jobs",
     kSimCommand, ApplyIdleHogs},
    {"sim-seconds", "S", "1", "sim: simulated seconds per run (schedidle: at most)",
     kSimCommand, ApplySimSeconds},
    {"seed", "N", "1", "sim: the first run's seed (a run is a function of it)",
     kSimCommand, ApplySeed},
    {"reps", "N", "1", "sim: repetitions (seeds seed, seed+1, ...), pooled",
     kSimCommand, ApplyReps},
    {"jobs", "N", "0", "sim: host threads (0: every host core)", kSimCommand, ApplyJobs},
    {"scan-ns-per-cpu", "N", "40",
     "sim: simulated select_cpu time per CPU examined", kSimCommand, ApplyScanNs},
    {"markdown", "FILE", "-", "sim: where the tables go (- for stdout)", kSimCommand,
     ApplyMarkdown},
    {"quiet", "", "", "sim: no progress line and no summary", kSimCommand, ApplyQuiet},
    {"help", "", "", "this text (also -h)", kEveryCommand | kSimCommand, ApplyHelp},
    {"help-stats", "", "", "the fields of the scx_stats socket", kEveryCommand,
     ApplyHelpStats},
    {"version", "", "", "the version", kEveryCommand | kSimCommand, ApplyVersion},
};

const FlagSpec* FindFlag(std::string_view name) {
  for (const FlagSpec& flag : kFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

struct Flag {
  std::string name;  // without the leading dashes
  std::optional<std::string> value;
};

// Splits "--name=value"; -v and -h are the only short flags.
std::optional<Flag> SplitFlag(absl::string_view arg) {
  if (arg == "-v") return Flag{"verbose", std::nullopt};
  if (arg == "-h") return Flag{"help", std::nullopt};
  if (!absl::StartsWith(arg, "--") || arg.size() == 2) return std::nullopt;
  arg.remove_prefix(2);
  size_t eq = arg.find('=');
  if (eq == absl::string_view::npos) return Flag{std::string(arg), std::nullopt};
  return Flag{std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1))};
}

struct CommandWord {
  const char* words;  // as typed
  uint32_t bit;
  Command::Kind kind;
};

constexpr CommandWord kCtlCommands[] = {
    {"get", kCtlGetCommand, Command::Kind::kCtlGet},
    {"set", kCtlSetCommand, Command::Kind::kCtlSet},
    {"stats", kCtlStatsCommand, Command::Kind::kCtlStats},
    {"send", kCtlSendCommand, Command::Kind::kCtlSend},
};
constexpr CommandWord kTopLevelCommands[] = {
    {"stats", kStatsCommand, Command::Kind::kStatsStream},
    {"trace", kTraceCommand, Command::Kind::kTrace},
    {"top", kTopCommand, Command::Kind::kTop},
    {"sim", kSimCommand, Command::Kind::kSim},
};

// The command words at the front of `args`; *next is the first flag.
absl::StatusOr<CommandWord> ParseCommandWords(const std::vector<std::string>& args,
                                              size_t* next, Command* cmd) {
  size_t i = 0;
  CommandWord found{"", kRunCommand, Command::Kind::kRun};
  if (i < args.size() && args[i] == "ctl") {
    ++i;
    if (i >= args.size()) {
      return absl::InvalidArgumentError("ctl needs a command: get, set, stats or send");
    }
    const std::string& word = args[i++];
    const CommandWord* ctl = nullptr;
    for (const CommandWord& c : kCtlCommands) {
      if (word == c.words) ctl = &c;
    }
    if (ctl == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown ctl command \"", word, "\" (expected get, set, stats or send)"));
    }
    found = *ctl;
  } else if (i < args.size()) {
    for (const CommandWord& c : kTopLevelCommands) {
      if (args[i] == c.words) {
        found = c;
        ++i;
        break;
      }
    }
  }
  cmd->kind = found.kind;
  if (found.bit == kCtlSetCommand) cmd->changes = nlohmann::json::object();
  *next = i;
  return found;
}

std::string CommandName(const CommandWord& command) {
  if (command.bit == kRunCommand) return "";
  for (const CommandWord& c : kCtlCommands) {
    if (c.bit == command.bit) return absl::StrCat("ctl ", c.words);
  }
  return command.words;
}

bool EndsTheParse(Command::Kind kind) {
  return kind == Command::Kind::kHelp || kind == Command::Kind::kHelpStats ||
         kind == Command::Kind::kVersion;
}

// What must hold once every flag is read; `given` are the flags the
// command line had.
absl::Status CheckCommand(const CommandWord& command, const Command& cmd,
                          const std::vector<std::string_view>& given) {
  if (command.bit == kRunCommand && cmd.kind == Command::Kind::kStatsStream) {
    for (std::string_view flag : given) {
      if (flag != "monitor" && flag != "socket") {
        return absl::InvalidArgumentError(absl::StrCat(
            "--monitor only watches a running scx_loehle; it takes no "
            "scheduler flags besides --socket (got --", Abs(flag), ")"));
      }
    }
    return absl::OkStatus();
  }
  switch (command.bit) {
    case kRunCommand:
      if (cmd.daemon.metrics_allow_remote && cmd.daemon.metrics_addr.empty()) {
        return absl::InvalidArgumentError("--metrics-allow-remote needs --metrics-addr");
      }
      return ValidateSettings(cmd.daemon.settings);
    case kCtlSetCommand: {
      if (cmd.changes.empty()) {
        return absl::InvalidArgumentError(
            "ctl set needs at least one of --policy, --sched-idle, "
            "--sched-idle-scope, --smt, --slice-us, --claim-retries, "
            "--sample-every");
      }
      // The ranges the scheduler enforces at start, with its message.
      absl::StatusOr<Settings> valid = ApplySettingsJson(Settings{}, cmd.changes);
      return valid.ok() ? absl::OkStatus() : valid.status();
    }
    case kTraceCommand:
      if (cmd.out_path.empty()) {
        return absl::InvalidArgumentError("trace needs --out=FILE (or --out=- for stdout)");
      }
      return absl::OkStatus();
    case kSimCommand:
      if (cmd.sim.claim_retries > kMaxClaimRetries) {
        return absl::InvalidArgumentError(
            absl::StrCat("--claim-retries must be between 0 and ", kMaxClaimRetries));
      }
      if (cmd.sim.workload == "fork" && absl::c_linear_search(cmd.sim.sizes, 0u)) {
        return absl::InvalidArgumentError("--forkers: the fork workload needs at least 1 creator");
      }
      return absl::OkStatus();
    case kStatsCommand:
      if (!cmd.json) {
        return absl::InvalidArgumentError(
            "stats streams JSON lines: pass --json (or use `ctl stats` for text)");
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

// "  --slice-us=N            time slice ... (default 5000)" and its
// continuation lines.
std::string FlagHelp(const FlagSpec& flag) {
  std::string head = absl::StrCat("  --", Abs(flag.name),
                                  flag.value.empty() ? "" : "=", Abs(flag.value));
  constexpr size_t kColumn = 24;
  std::vector<std::string> lines = absl::StrSplit(Abs(flag.help), '\n');
  constexpr size_t kWidth = 79;
  if (!flag.fallback.empty()) {
    const std::string fallback = absl::StrCat("(default ", Abs(flag.fallback), ")");
    if (kColumn + lines.back().size() + 1 + fallback.size() <= kWidth) {
      absl::StrAppend(&lines.back(), " ", fallback);
    } else {
      lines.push_back(fallback);
    }
  }
  std::string out;
  const std::string indent(kColumn, ' ');
  if (head.size() + 1 >= kColumn) {
    absl::StrAppend(&out, head, "\n");
  } else {
    out = head + std::string(kColumn - head.size(), ' ') + lines.front() + "\n";
    lines.erase(lines.begin());
  }
  for (const std::string& line : lines) absl::StrAppend(&out, indent, line, "\n");
  return out;
}

enum class HelpSection { kRun, kClient, kSim };

std::string FlagsHelp(HelpSection section) {
  std::string out;
  for (const FlagSpec& flag : kFlags) {
    const bool run = (flag.commands & kRunCommand) != 0;
    const bool client = (flag.commands & kClientCommands) != 0;
    const bool sim_only = flag.commands == kSimCommand;
    const bool shown = section == HelpSection::kRun      ? run
                       : section == HelpSection::kClient ? client && !run
                                                         : sim_only;
    if (shown) absl::StrAppend(&out, FlagHelp(flag));
  }
  return out;
}

}  // namespace

absl::Span<const FlagSpec> Flags() { return kFlags; }

namespace {

// An argument echoed in a message must not break its one line: control
// characters become \xNN.
absl::Status WithPrintableMessage(const absl::Status& status) {
  std::string message;
  for (const char c : status.message()) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      absl::StrAppend(&message, absl::StrFormat("\\x%02x", byte));
    } else {
      message.push_back(c);
    }
  }
  return absl::Status(status.code(), message);
}

absl::StatusOr<Command> ParseArguments(const std::vector<std::string>& args) {
  Command cmd;
  if (!args.empty() && args[0] == "completion") {
    if (args.size() != 2 || args[1] != "bash") {
      return absl::InvalidArgumentError(
          "completion takes one argument, the shell: bash");
    }
    cmd.kind = Command::Kind::kCompletion;
    return cmd;
  }
  size_t i = 0;
  absl::StatusOr<CommandWord> command = ParseCommandWords(args, &i, &cmd);
  if (!command.ok()) return command.status();
  const std::string name = CommandName(*command);
  bool saw_request = false;
  std::vector<std::string_view> given;
  for (; i < args.size(); ++i) {
    std::optional<Flag> split = SplitFlag(args[i]);
    if (!split && command->bit == kCtlSendCommand && !saw_request) {
      // The one positional argument: a raw request line, for scripts and
      // for checking how a daemon answers malformed requests.
      cmd.raw_request = args[i];
      saw_request = true;
      continue;
    }
    if (!split) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", args[i], "\" (see scx_loehle --help)"));
    }
    const FlagSpec* flag = FindFlag(split->name);
    if (flag == nullptr || !(flag->commands & command->bit)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", split->name, name.empty() ? "" : absl::StrCat(" for ", name),
          " (see scx_loehle --help)"));
    }
    if (flag->value.empty() && split->value) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", split->name, " takes no value"));
    }
    if (!flag->value.empty() && !split->value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", split->name, " needs a value"));
      }
      split->value = args[++i];
    }
    if (absl::Status applied = flag->apply(split->value.value_or(""), &cmd);
        !applied.ok()) {
      return applied;
    }
    given.push_back(flag->name);
    if (EndsTheParse(cmd.kind)) return cmd;
  }
  if (command->bit == kCtlSendCommand && !saw_request) {
    return absl::InvalidArgumentError(
        "ctl send needs a request line, e.g. '{\"cmd\":\"get\"}'");
  }
  if (absl::Status valid = CheckCommand(*command, cmd, given); !valid.ok()) {
    return valid;
  }
  return cmd;
}

}  // namespace

absl::StatusOr<Command> ParseCommandLine(const std::vector<std::string>& args) {
  absl::StatusOr<Command> command = ParseArguments(args);
  if (!command.ok()) return WithPrintableMessage(command.status());
  return command;
}

std::string UsageText() {
  return absl::StrCat(
      R"(scx_loehle: a sched_ext scheduler for seed-000/002/003/004 placement policies

Run the scheduler (as root, on a kernel with sched_ext):
  scx_loehle [--policy=P] [--sched-idle=M] [--sched-idle-scope=S]
             [--smt=M] [--slice-us=N] [--claim-retries=N] [--sample-every=N]
             [--stats=SECONDS]
             [--keep-generations=N] [--socket=PATH] [--idle-latency-file=PATH]
             [--metrics-addr=HOST:PORT [--metrics-allow-remote]]
             [--scx-stats-socket=PATH] [-v]

)",
      FlagsHelp(HelpSection::kRun), R"(
Control a running scheduler:
  scx_loehle ctl get
  scx_loehle ctl set [--policy=...] [--sched-idle=...]
                     [--sched-idle-scope=...] [--smt=...] [--slice-us=N]
                     [--claim-retries=N] [--sample-every=N]
  scx_loehle ctl stats [--json]
  scx_loehle ctl send 'JSON-LINE'
                     send one raw request line, print the reply; exit 1
                     when the reply is an error (also to the scx_stats
                     socket: --socket=/var/run/scx/root/stats)
  scx_loehle stats --json [--interval=SECONDS] [--count=N]
                     one stats reply per line (schema: Documentation/stats.md)
  scx_loehle trace --out=FILE [--duration=SECONDS]
                     pick events as JSON lines (--out=- for stdout)
  scx_loehle top [--interval=SECONDS] [--once] [--count=N]
                     live dashboard; keys: p policy, s sched-idle,
                     g sched-idle scope, m smt, r reset view, q quit.
                     Plain-text frames when stdout is not a terminal
                     (--once: one frame, --count: N frames)
  scx_loehle completion bash
                     the bash completion script (installed with the package)
  scx_loehle --monitor=SECONDS
                     the `ctl stats` report every SECONDS, as the scx
                     schedulers' --monitor does
  scx_loehle --help-stats
                     the fields of the scx_stats socket and what they mean
  Every client command takes --socket=PATH.

)",
      FlagsHelp(HelpSection::kClient), R"(
Simulate the policies on machines this one is not (no root, no sched_ext;
Documentation/simulation.md):
  scx_loehle sim [--topology=...] [--workload=...] [--policies=LIST]
                 [--forkers=LIST | --workers=LIST] [--sim-seconds=S]
                 [--reps=N] [--out=FILE] [--markdown=FILE]
                 (also --claim-retries=N, and --help, --version)

)", FlagsHelp(HelpSection::kSim), R"(
No sched_ext kernel here? Run it in the project's VM:
  scripts/vm -- build/scx_loehle
)");
}

}  // namespace loehle

namespace loehle {
namespace {

// The flags of one command as completion words: "--name=" for a flag that
// takes a value, "--name" for a switch.
std::string FlagWords(uint32_t bit) {
  std::vector<std::string> words;
  for (const FlagSpec& flag : kFlags) {
    if (flag.commands & bit) {
      words.push_back(absl::StrCat("--", Abs(flag.name), flag.value.empty() ? "" : "="));
    }
  }
  return absl::StrJoin(words, " ");
}

// A case arm per flag whose value the shell can offer: the alternatives of
// "a|b|c", or file names for a PATH or FILE.
std::string ValueArms() {
  std::string out;
  for (const FlagSpec& flag : kFlags) {
    const absl::string_view value = Abs(flag.value);
    std::string action;
    if (absl::StrContains(value, '|')) {
      action = absl::StrCat("words=\"", absl::StrReplaceAll(value, {{"|", " "}}), "\"");
    } else if (value == "PATH" || value == "FILE") {
      action = "COMPREPLY=($(compgen -f -- \"$cur\")); return";
    } else {
      continue;
    }
    absl::StrAppend(&out, "\t\t--", Abs(flag.name), ") ", action, " ;;\n");
  }
  return out;
}

// "\t\t\"ctl get\") words=\"--socket=\" ;;" for each command.
std::string CommandArms() {
  std::string out;
  for (const CommandWord& c : kCtlCommands) {
    absl::StrAppend(&out, "\t\"ctl ", c.words, "\") words=\"", FlagWords(c.bit), "\" ;;\n");
  }
  for (const CommandWord& c : kTopLevelCommands) {
    absl::StrAppend(&out, "\t", c.words, ") words=\"", FlagWords(c.bit), "\" ;;\n");
  }
  return out;
}

}  // namespace

std::string BashCompletion() {
  std::string ctl_words, top_words;
  for (const CommandWord& c : kCtlCommands) absl::StrAppend(&ctl_words, " ", c.words);
  for (const CommandWord& c : kTopLevelCommands) absl::StrAppend(&top_words, " ", c.words);
  return absl::StrCat(
      "# bash completion for scx_loehle(8), generated by `scx_loehle completion\n"
      "# bash` from the flag table of loader/command_line.cc: do not edit.\n"
      "_scx_loehle() {\n"
      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= flag= cmd= words= i w\n"
      "\t((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
      "\t# bash splits --flag=value at '=': the value is completed after it.\n"
      "\tif [[ $cur == = ]]; then\n"
      "\t\tflag=$prev cur=\n"
      "\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then\n"
      "\t\tflag=${COMP_WORDS[COMP_CWORD - 2]}\n"
      "\tfi\n"
      "\tif [[ -n $flag ]]; then\n"
      "\t\tcase $flag in\n",
      ValueArms(),
      "\t\t*) return ;;\n"
      "\t\tesac\n"
      "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "\t\treturn\n"
      "\tfi\n"
      "\t# The command so far: the words before the first flag.\n"
      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
      "\t\tw=${COMP_WORDS[i]}\n"
      "\t\t[[ $w == -* ]] && break\n"
      "\t\tcmd=${cmd:+$cmd }$w\n"
      "\tdone\n"
      "\tcase $cmd in\n"
      "\t\"\") words=\"", FlagWords(kRunCommand), " ctl",
      top_words, " completion\" ;;\n"
      "\tctl) words=\"", absl::StripLeadingAsciiWhitespace(ctl_words), "\" ;;\n",
      CommandArms(),
      "\tcompletion) words=bash ;;\n"
      "\t*) return ;;\n"
      "\tesac\n"
      "\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "\t# A flag that takes a value: no space after its '='.\n"
      "\t[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace\n"
      "}\n"
      "complete -F _scx_loehle scx_loehle\n");
}

}  // namespace loehle
