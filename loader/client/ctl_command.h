// The client side of the control socket: `scx_loehle ctl ...` and
// `scx_loehle stats --json`. Prints replies to stdout; a refused request or
// an unreachable scheduler comes back as an error status with one line.

#ifndef LOEHLE_LOADER_CLIENT_CTL_COMMAND_H_
#define LOEHLE_LOADER_CLIENT_CTL_COMMAND_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/core/stats_snapshot.h"

namespace loehle {

struct Command;

absl::Status RunCtl(const Command& command);

// Human-readable per-generation report of a `stats` reply: settings, calls
// by path, picks by reason, claim-failure rate, spread of fork picks.
std::string FormatStatsReport(const StatsSnapshot& stats);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLIENT_CTL_COMMAND_H_
