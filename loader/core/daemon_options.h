// What `scx_loehle [flags]` asks of the daemon (daemon/daemon.h), as the
// command line (command_line.h) produces it.

#ifndef LOEHLE_LOADER_CORE_DAEMON_OPTIONS_H_
#define LOEHLE_LOADER_CORE_DAEMON_OPTIONS_H_

#include <string>

#include "loader/core/generation_history.h"
#include "loader/core/settings.h"

namespace loehle {

inline constexpr char kDefaultSocketPath[] = "/run/scx_loehle.sock";
// Where sched_ext's own schedulers serve the scx_stats protocol.
inline constexpr char kScxStatsSocketPath[] = "/var/run/scx/root/stats";

struct DaemonOptions {
  Settings settings;
  std::string socket_path = kDefaultSocketPath;  // "" disables the socket
  // The scx_stats protocol's socket (daemon/scx_stats_service.h); "" = none.
  std::string scx_stats_socket_path = kScxStatsSocketPath;
  std::string idle_latency_file;                 // "" = sysfs only
  double stats_interval_s = 0;                   // 0 = no summary lines
  // Generations kept one by one; older ones are summed
  // (core/generation_history.h).
  uint32_t keep_generations = kDefaultKeptGenerations;
  bool verbose = false;
  // "HOST:PORT" of the /metrics endpoint; "" = none. HOST must be a
  // loopback address unless metrics_allow_remote.
  std::string metrics_addr;
  bool metrics_allow_remote = false;
  std::string sysfs_root = "/sys";
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_DAEMON_OPTIONS_H_
