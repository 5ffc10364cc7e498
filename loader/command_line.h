// Command-line grammar of scx_loehle. Pure: parses argv into a Command and
// says, in one line, what is wrong with it; main.cc acts on the result.
//
//   scx_loehle [scheduler flags]                 run the scheduler
//   scx_loehle ctl get|set|stats|send [flags]    talk to a running one
//   scx_loehle stats --json | trace | top [flags]
//   scx_loehle --monitor=SECONDS | --help | --help-stats | --version
//   scx_loehle completion bash                    print the bash completion
//   scx_loehle sim [flags]                       the simulator (loader/sim/)
//
// Every flag is declared once, in the table Flags() returns: its name, the
// syntax of its value, its default, its help text and the commands that
// take it. The parser, `--help` and the checks of the man page
// (command_line_test.cc) all read that table. Flags take their value as
// `--flag=value` or `--flag value`.

#ifndef LOEHLE_LOADER_COMMAND_LINE_H_
#define LOEHLE_LOADER_COMMAND_LINE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "loader/core/daemon_options.h"
#include "loader/core/sim_options.h"
#include "nlohmann/json.hpp"

namespace loehle {

struct Command {
  enum class Kind {
    kRun, kCtlGet, kCtlSet, kCtlStats, kCtlSend, kStatsStream, kTrace, kTop,
    kHelp, kHelpStats, kVersion, kCompletion, kSim
  };
  Kind kind = Kind::kRun;
  DaemonOptions daemon;         // kRun
  nlohmann::json changes;       // kCtlSet: the settings to change
  std::string socket_path = kDefaultSocketPath;
  std::string raw_request;      // kCtlSend: the line, sent as given
  bool json = false;            // kCtlStats, kStatsStream (else text)
  double interval_s = 1;        // kStatsStream, kTop
  int count = 0;                // kStatsStream, kTop (frames): 0 = until interrupted
  std::string out_path;         // kTrace: "-" = stdout
  double duration_s = 0;        // kTrace: 0 = until SIGINT/SIGTERM
  bool once = false;            // kTop: one frame, then exit
  SimOptions sim;               // kSim
};

// The commands a flag belongs to (FlagSpec::commands), one bit each.
enum CommandBit : uint32_t {
  kRunCommand = 1u << 0,       // scx_loehle [flags]
  kCtlGetCommand = 1u << 1,
  kCtlSetCommand = 1u << 2,
  kCtlStatsCommand = 1u << 3,
  kCtlSendCommand = 1u << 4,
  kStatsCommand = 1u << 5,     // stats --json
  kTraceCommand = 1u << 6,
  kTopCommand = 1u << 7,
  kEveryCommand = (1u << 8) - 1,  // every command about a scheduler
  kSimCommand = 1u << 8,          // scx_loehle sim
};

struct FlagSpec {
  std::string_view name;     // without the dashes, e.g. "slice-us"
  std::string_view value;    // the value's syntax, e.g. "N"; "" = a switch
  std::string_view fallback; // the default as --help shows it; "" = none
  std::string_view help;     // what it does; '\n' separates lines
  uint32_t commands;         // CommandBit mask
  // Stores the value (already split off; "" for a switch) in `command`, or
  // says in one line what is wrong with it.
  absl::Status (*apply)(std::string_view value, Command* command);
};

// Every flag, in the order --help lists them.
absl::Span<const FlagSpec> Flags();

// `args` excludes argv[0]. Errors are InvalidArgument with one line; the
// same mistake gets the same message whichever command it is made in (a
// setting out of range in `ctl set` is refused here as it is for the
// scheduler, not by the daemon).
absl::StatusOr<Command> ParseCommandLine(const std::vector<std::string>& args);

std::string UsageText();

// A bash completion script for every command, flag and enumerated value,
// generated from Flags() (`scx_loehle completion bash`; installed as
// share/bash-completion/completions/scx_loehle).
std::string BashCompletion();

}  // namespace loehle

#endif  // LOEHLE_LOADER_COMMAND_LINE_H_
