// scx_loehle: flags in, one of the commands out. Every error is one line on
// stderr: exit status 2 for bad usage, 1 for everything else.

#include <cstdio>
#include <string>
#include <vector>

#include "loader/client/ctl_command.h"
#include "loader/client/top_command.h"
#include "loader/client/trace_command.h"
#include "loader/command_line.h"
#include "loader/core/build_info.h"
#include "loader/core/scx_stats_schema.h"
#include "loader/daemon/daemon.h"
#include "loader/sim/sim_command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<loehle::Command> command = loehle::ParseCommandLine(args);
  if (!command.ok()) {
    fprintf(stderr, "scx_loehle: %s\n",
            std::string(command.status().message()).c_str());
    return 2;
  }
  absl::Status result;
  switch (command->kind) {
    case loehle::Command::Kind::kHelp:
      fputs(loehle::UsageText().c_str(), stdout);
      return 0;
    case loehle::Command::Kind::kHelpStats:
      fputs(loehle::DescribeScxStats().c_str(), stdout);
      return 0;
    case loehle::Command::Kind::kCompletion:
      fputs(loehle::BashCompletion().c_str(), stdout);
      return 0;
    case loehle::Command::Kind::kVersion:
      printf("%s\n", loehle::VersionLine().c_str());
      return 0;
    case loehle::Command::Kind::kRun:
      result = loehle::RunDaemon(command->daemon);
      break;
    case loehle::Command::Kind::kTrace:
      result = loehle::RunTrace(*command);
      break;
    case loehle::Command::Kind::kTop:
      result = loehle::RunTop(*command);
      break;
    case loehle::Command::Kind::kSim:
      result = loehle::sim::RunSim(command->sim);
      break;
    default:
      result = loehle::RunCtl(*command);
      break;
  }
  if (!result.ok()) {
    fprintf(stderr, "scx_loehle: %s\n", std::string(result.message()).c_str());
    return 1;
  }
  return 0;
}
