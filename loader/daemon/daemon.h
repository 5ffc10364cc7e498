// The scx_loehle daemon: what `scx_loehle [flags]` runs.
//
// It reads the topology (and an idle-latency file when given), starts the
// scheduler, serves the control socket, prints a summary line every
// `stats_interval_s` seconds, drains the pick-event ring buffer, and stops
// on SIGINT or SIGTERM by detaching (exit status 0). When the kernel
// disables the scheduler it prints the kernel's exit record; if the kernel
// asks for a restart (CPU hotplug) it reloads with the same settings and a
// new generation, otherwise RunDaemon returns the exit as an error.

#ifndef LOEHLE_LOADER_DAEMON_DAEMON_H_
#define LOEHLE_LOADER_DAEMON_DAEMON_H_

#include <string>

#include "absl/status/status.h"
#include "loader/core/daemon_options.h"

namespace loehle {

// The daemon loop's timer: how soon it notices that the kernel disabled the
// scheduler, drains a trickle of events, serves a metrics scrape or prints a
// summary. Signals, control clients and a half-full event ring wake it at
// once. Under TCG a timer wakeup costs about 350 us of CPU: at 100 ms the
// idle daemon took 0.35% of one vCPU, at 250 ms 0.15%.
inline constexpr int kDaemonLoopTimeoutMs = 250;

absl::Status RunDaemon(const DaemonOptions& options);

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_DAEMON_H_
