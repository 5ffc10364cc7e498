// Command-line grammar of scx_loehle. Pure: parses argv into a Command and
// says, in one line, what is wrong with it; main.cc acts on the result.
//
//   scx_loehle [--policy=P] [--sched-idle=M] [--smt=M] [--slice-us=N]
//              [--claim-retries=N] [--sample-every=N] [--stats=SECONDS]
//              [--socket=PATH] [--idle-latency-file=PATH]
//              [--metrics-addr=HOST:PORT [--metrics-allow-remote]] [-v]
//   scx_loehle ctl get [--socket=PATH]
//   scx_loehle ctl set [--policy=P] [--sched-idle=M] [--smt=M]
//              [--slice-us=N] [--claim-retries=N] [--sample-every=N]
//   scx_loehle ctl stats [--json] [--socket=PATH]
//   scx_loehle stats --json [--interval=SECONDS] [--count=N] [--socket=PATH]
//   scx_loehle trace --out=FILE [--duration=SECONDS] [--socket=PATH]
//   scx_loehle top [--interval=SECONDS] [--once] [--count=N] [--socket=PATH]
//   scx_loehle --help | --version
//
// Flags take their value as `--flag=value` or `--flag value`.

#ifndef LOEHLE_LOADER_CLI_H_
#define LOEHLE_LOADER_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loader/daemon.h"
#include "nlohmann/json.hpp"

namespace loehle {

struct Command {
  enum class Kind {
    kRun, kCtlGet, kCtlSet, kCtlStats, kCtlSend, kStatsStream, kTrace, kTop,
    kHelp, kVersion
  };
  Kind kind = Kind::kRun;
  DaemonOptions daemon;         // kRun
  nlohmann::json changes;       // kCtlSet: the settings to change
  std::string socket_path = kDefaultSocketPath;
  std::string raw_request;      // kCtlSend: the line, sent as given
  bool json = false;            // kCtlStats
  double interval_s = 1;        // kStatsStream, kTop
  int count = 0;                // kStatsStream, kTop (frames): 0 = until interrupted
  std::string out_path;         // kTrace: "-" = stdout
  double duration_s = 0;        // kTrace: 0 = until SIGINT/SIGTERM
  bool once = false;            // kTop: one frame, then exit
};

// `args` excludes argv[0]. Errors are InvalidArgument with one line.
absl::StatusOr<Command> ParseCommandLine(const std::vector<std::string>& args);

std::string UsageText();

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLI_H_
