// Command-line grammar of scx_loehle. Pure: parses argv into a Command and
// says, in one line, what is wrong with it; main.cc acts on the result.
//
//   scx_loehle [--policy=P] [--sched-idle=M] [--smt=M] [--slice-us=N]
//              [--claim-retries=N] [--sample-every=N] [--stats=SECONDS]
//              [--socket=PATH] [--idle-latency-file=PATH] [-v]
//   scx_loehle ctl get [--socket=PATH]
//   scx_loehle ctl set [--policy=P] [--sched-idle=M] [--smt=M]
//              [--slice-us=N] [--claim-retries=N] [--sample-every=N]
//   scx_loehle ctl stats [--json] [--socket=PATH]
//   scx_loehle stats --json [--interval=SECONDS] [--count=N] [--socket=PATH]
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
  enum class Kind { kRun, kCtlGet, kCtlSet, kCtlStats, kStatsStream, kHelp, kVersion };
  Kind kind = Kind::kRun;
  DaemonOptions daemon;         // kRun
  nlohmann::json changes;       // kCtlSet: the settings to change
  std::string socket_path = kDefaultSocketPath;
  bool json = false;            // kCtlStats
  double interval_s = 1;        // kStatsStream
  int count = 0;                // kStatsStream: 0 = until interrupted
};

// `args` excludes argv[0]. Errors are InvalidArgument with one line.
absl::StatusOr<Command> ParseCommandLine(const std::vector<std::string>& args);

std::string UsageText();

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLI_H_
