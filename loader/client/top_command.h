// `scx_loehle top [--interval=S] [--once] [--count=N]`: fetches the current
// generation's stats, feeds a DashboardModel (client/dashboard_model.h) and
// draws its lines on an ncurses screen, or on stdout as plain text when
// stdout or stdin is not a terminal (or with --once / --count). Keys: q
// quits, r resets the history, p/s/m switch policy, sched-idle and SMT mode.

#ifndef LOEHLE_LOADER_CLIENT_TOP_COMMAND_H_
#define LOEHLE_LOADER_CLIENT_TOP_COMMAND_H_

#include <string>

#include "absl/status/status.h"

namespace loehle {

struct Command;

absl::Status RunTop(const Command& command);

// Why top stopped after a failed stats request `why`, with sched_ext's
// state read then (empty: unknown). A request that timed out means a
// daemon too busy to answer, not one that went away.
absl::Status TopLostStats(const absl::Status& why, const std::string& state);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLIENT_TOP_COMMAND_H_
