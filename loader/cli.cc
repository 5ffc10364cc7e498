#include "loader/cli.h"

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "loader/options.h"

namespace loehle {
namespace {

struct Flag {
  std::string name;   // without the leading dashes
  std::optional<std::string> value;
};

// Splits "--name=value"; "-v" is the only short flag.
std::optional<Flag> SplitFlag(absl::string_view arg) {
  if (arg == "-v") return Flag{"verbose", std::nullopt};
  if (arg == "-h") return Flag{"help", std::nullopt};
  if (!absl::StartsWith(arg, "--") || arg.size() == 2) return std::nullopt;
  arg.remove_prefix(2);
  size_t eq = arg.find('=');
  if (eq == absl::string_view::npos) return Flag{std::string(arg), std::nullopt};
  return Flag{std::string(arg.substr(0, eq)), std::string(arg.substr(eq + 1))};
}

bool TakesValue(absl::string_view name) {
  for (absl::string_view known :
       {"policy", "sched-idle", "smt", "slice-us", "claim-retries",
        "sample-every", "stats", "socket", "idle-latency-file", "interval",
        "count", "out", "duration", "metrics-addr"}) {
    if (name == known) return true;
  }
  return false;
}

bool IsBoolean(absl::string_view name) {
  return name == "verbose" || name == "json" || name == "help" ||
         name == "version" || name == "once" || name == "metrics-allow-remote";
}

absl::StatusOr<uint64_t> ParseCount(absl::string_view flag, absl::string_view text) {
  uint64_t value;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " takes a non-negative integer, got \"", text, "\""));
  }
  return value;
}

absl::StatusOr<double> ParseSeconds(absl::string_view flag, absl::string_view text) {
  double value;
  if (!absl::SimpleAtod(text, &value) || !(value > 0) || value > 86400) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " takes a number of seconds in (0, 86400], got \"", text, "\""));
  }
  return value;
}

// Applies a settings flag to `settings`, or records it as a JSON change for
// `ctl set`; returns false when `name` is not a settings flag.
absl::StatusOr<bool> ApplySettingFlag(const std::string& name,
                                      const std::string& value,
                                      Settings* settings,
                                      nlohmann::json* changes) {
  if (name == "policy") {
    absl::StatusOr<uint32_t> v = ParsePolicy(value);
    if (!v.ok()) return v.status();
    settings->policy = *v;
    (*changes)["policy"] = value;
  } else if (name == "sched-idle") {
    absl::StatusOr<uint32_t> v = ParseSchedIdleMode(value);
    if (!v.ok()) return v.status();
    settings->sched_idle = *v;
    (*changes)["sched_idle"] = value;
  } else if (name == "smt") {
    absl::StatusOr<uint32_t> v = ParseSmtMode(value);
    if (!v.ok()) return v.status();
    settings->smt = *v;
    (*changes)["smt"] = value;
  } else if (name == "slice-us" || name == "claim-retries" ||
             name == "sample-every") {
    absl::StatusOr<uint64_t> v = ParseCount(name, value);
    if (!v.ok()) return v.status();
    if (name == "slice-us") {
      settings->slice_us = *v;
      (*changes)["slice_us"] = *v;
    } else if (name == "claim-retries") {
      if (*v > UINT32_MAX) return absl::InvalidArgumentError("--claim-retries is too large");
      settings->claim_retries = static_cast<uint32_t>(*v);
      (*changes)["claim_retries"] = *v;
    } else {
      if (*v > UINT32_MAX) return absl::InvalidArgumentError("--sample-every is too large");
      settings->sample_every = static_cast<uint32_t>(*v);
      (*changes)["sample_every"] = *v;
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Command> ParseCommandLine(const std::vector<std::string>& args) {
  Command cmd;
  size_t i = 0;
  std::string mode = "run";
  if (i < args.size() && args[i] == "ctl") {
    ++i;
    if (i >= args.size()) {
      return absl::InvalidArgumentError("ctl needs a command: get, set, stats or send");
    }
    mode = "ctl " + args[i++];
    if (mode == "ctl get") {
      cmd.kind = Command::Kind::kCtlGet;
    } else if (mode == "ctl set") {
      cmd.kind = Command::Kind::kCtlSet;
      cmd.changes = nlohmann::json::object();
    } else if (mode == "ctl stats") {
      cmd.kind = Command::Kind::kCtlStats;
    } else if (mode == "ctl send") {
      // The one positional argument: a raw request line, for scripts and
      // for checking how the daemon answers malformed requests.
      if (i >= args.size()) {
        return absl::InvalidArgumentError("ctl send needs a request line, e.g. '{\"cmd\":\"get\"}'");
      }
      cmd.kind = Command::Kind::kCtlSend;
      cmd.raw_request = args[i++];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown ctl command \"", args[i - 1], "\" (expected get, set, stats or send)"));
    }
  } else if (i < args.size() && args[i] == "stats") {
    ++i;
    mode = "stats";
    cmd.kind = Command::Kind::kStatsStream;
  } else if (i < args.size() && args[i] == "trace") {
    ++i;
    mode = "trace";
    cmd.kind = Command::Kind::kTrace;
  } else if (i < args.size() && args[i] == "top") {
    ++i;
    mode = "top";
    cmd.kind = Command::Kind::kTop;
  }

  bool saw_json = false;
  for (; i < args.size(); ++i) {
    std::optional<Flag> flag = SplitFlag(args[i]);
    if (!flag) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unexpected argument \"", args[i], "\" (see scx_loehle --help)"));
    }
    if (!TakesValue(flag->name) && !IsBoolean(flag->name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", flag->name, " (see scx_loehle --help)"));
    }
    if (!flag->value && !IsBoolean(flag->name)) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag->name, " needs a value"));
      }
      flag->value = args[++i];
    }
    if (flag->value && IsBoolean(flag->name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag->name, " takes no value"));
    }
    const std::string& name = flag->name;
    const std::string value = flag->value.value_or("");

    if (name == "help") {
      cmd.kind = Command::Kind::kHelp;
      return cmd;
    }
    if (name == "version") {
      cmd.kind = Command::Kind::kVersion;
      return cmd;
    }
    if (name == "socket") {
      if (value.empty()) return absl::InvalidArgumentError("--socket needs a path");
      cmd.socket_path = value;
      cmd.daemon.socket_path = value;
      continue;
    }
    if (mode == "run" || mode == "ctl set") {
      absl::StatusOr<bool> applied =
          ApplySettingFlag(name, value, &cmd.daemon.settings, &cmd.changes);
      if (!applied.ok()) return applied.status();
      if (*applied) continue;
    }
    if (mode == "run") {
      if (name == "stats") {
        // 0 turns the summary lines off (the default), as in scripts.
        if (value == "0") {
          cmd.daemon.stats_interval_s = 0;
          continue;
        }
        absl::StatusOr<double> s = ParseSeconds(name, value);
        if (!s.ok()) return s.status();
        cmd.daemon.stats_interval_s = *s;
        continue;
      }
      if (name == "idle-latency-file") {
        if (value.empty()) {
          return absl::InvalidArgumentError("--idle-latency-file needs a path");
        }
        cmd.daemon.idle_latency_file = value;
        continue;
      }
      if (name == "verbose") {
        cmd.daemon.verbose = true;
        continue;
      }
      if (name == "metrics-addr") {
        if (value.empty()) {
          return absl::InvalidArgumentError("--metrics-addr needs HOST:PORT");
        }
        cmd.daemon.metrics_addr = value;
        continue;
      }
      if (name == "metrics-allow-remote") {
        cmd.daemon.metrics_allow_remote = true;
        continue;
      }
    }
    if (mode == "trace" && name == "out") {
      if (value.empty()) return absl::InvalidArgumentError("--out needs a file (or -)");
      cmd.out_path = value;
      continue;
    }
    if (mode == "trace" && name == "duration") {
      absl::StatusOr<double> s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      cmd.duration_s = *s;
      continue;
    }
    if (mode == "top" && name == "once") {
      cmd.once = true;
      continue;
    }
    if ((mode == "ctl stats" || mode == "stats") && name == "json") {
      saw_json = true;
      cmd.json = true;
      continue;
    }
    if ((mode == "stats" || mode == "top") && name == "interval") {
      absl::StatusOr<double> s = ParseSeconds(name, value);
      if (!s.ok()) return s.status();
      cmd.interval_s = *s;
      continue;
    }
    if ((mode == "stats" || mode == "top") && name == "count") {
      absl::StatusOr<uint64_t> n = ParseCount(name, value);
      if (!n.ok()) return n.status();
      cmd.count = static_cast<int>(std::min<uint64_t>(*n, 1 << 30));
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown flag --", name, mode == "run" ? "" : absl::StrCat(" for ", mode),
        " (see scx_loehle --help)"));
  }

  if (mode == "run") {
    if (absl::Status valid = ValidateSettings(cmd.daemon.settings); !valid.ok()) {
      return valid;
    }
  }
  if (mode == "ctl set" && cmd.changes.empty()) {
    return absl::InvalidArgumentError(
        "ctl set needs at least one of --policy, --sched-idle, --smt, "
        "--slice-us, --claim-retries, --sample-every");
  }
  if (mode == "trace" && cmd.out_path.empty()) {
    return absl::InvalidArgumentError("trace needs --out=FILE (or --out=- for stdout)");
  }
  if (mode == "run" && cmd.daemon.metrics_allow_remote &&
      cmd.daemon.metrics_addr.empty()) {
    return absl::InvalidArgumentError("--metrics-allow-remote needs --metrics-addr");
  }
  if (mode == "stats" && !saw_json) {
    return absl::InvalidArgumentError(
        "stats streams JSON lines: pass --json (or use `ctl stats` for text)");
  }
  return cmd;
}

std::string UsageText() {
  return R"(scx_loehle: a sched_ext scheduler for seed-000/002/003/004 placement policies

Run the scheduler (as root, on a kernel with sched_ext):
  scx_loehle [--policy=builtin|recency|first|reservoir]
             [--sched-idle=mainline|wakee-aware|idle-first|ignore]
             [--smt=idle-core|off] [--slice-us=N] [--claim-retries=N]
             [--sample-every=N] [--stats=SECONDS] [--socket=PATH]
             [--idle-latency-file=PATH]
             [--metrics-addr=HOST:PORT [--metrics-allow-remote]] [-v]

  --policy             tie-break among equally shallow idle CPUs on fork
                       (default reservoir; builtin = scx_bpf_select_cpu_dfl)
  --sched-idle         how CPUs running only SCHED_IDLE work count
                       (default wakee-aware)
  --smt                prefer CPUs whose whole SMT core is idle (default idle-core)
  --slice-us           time slice in microseconds (50..1000000, default 5000)
  --claim-retries      rescans after a lost claim of an idle CPU (0..16, default 1)
  --sample-every       send every Nth pick to the event ring buffer
                       (0 = none, 1 = every pick, default 64)
  --stats              print a summary line every SECONDS (0: none, the default)
  --socket             control socket (default /run/scx_loehle.sock)
  --idle-latency-file  per-CPU idle-state exit latencies where sysfs has none;
                       lines "<cpus> <state>=<latency_us> ...", e.g. "* 0=0 1=100"
  --metrics-addr       serve Prometheus metrics on http://HOST:PORT/metrics
                       (off by default; HOST must be loopback, e.g. 127.0.0.1,
                       unless --metrics-allow-remote is given)
  -v, --verbose        print libbpf's messages

Control a running scheduler:
  scx_loehle ctl get
  scx_loehle ctl set [--policy=...] [--sched-idle=...] [--smt=...]
                     [--slice-us=N] [--claim-retries=N] [--sample-every=N]
  scx_loehle ctl stats [--json]
  scx_loehle ctl send 'JSON-LINE'
                     send one raw request line, print the reply; exit 1
                     when the reply is an error
  scx_loehle stats --json [--interval=SECONDS] [--count=N]
                     one stats reply per line (schema: Documentation/stats.md)
  scx_loehle trace --out=FILE [--duration=SECONDS]
                     pick events as JSON lines (--out=- for stdout)
  scx_loehle top [--interval=SECONDS] [--once] [--count=N]
                     live dashboard; keys: p policy, s sched-idle, m smt,
                     r reset view, q quit. Plain-text frames when stdout is
                     not a terminal (--once: one frame, --count: N frames)
  Every client command takes --socket=PATH.

No sched_ext kernel here? Run it in the project's VM: scripts/vm -- build/scx_loehle
)";
}

}  // namespace loehle
