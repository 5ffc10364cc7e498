// The client side of the control socket: `scx_loehle ctl ...` and
// `scx_loehle stats --json`. Prints replies to stdout; a refused request or
// an unreachable scheduler comes back as an error status with one line.

#ifndef LOEHLE_LOADER_CTL_H_
#define LOEHLE_LOADER_CTL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/cli.h"
#include "nlohmann/json.hpp"

namespace loehle {

absl::Status RunCtl(const Command& command);

// Sends `request` to the control socket and returns the reply's "result";
// a refusal ({"ok":false}) is FailedPrecondition "scheduler refused: ...".
absl::StatusOr<nlohmann::json> RequestResult(const std::string& socket,
                                             const nlohmann::json& request);

// Human-readable per-generation report of a `stats` reply: settings, calls
// by path, picks by reason, claim-failure rate, spread of fork picks.
std::string FormatStatsReport(const nlohmann::json& stats);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CTL_H_
