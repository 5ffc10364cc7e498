// scx_loehle's /metrics endpoint: the stats snapshot in the Prometheus text
// exposition format (0.0.4), served over HTTP by cpp-httplib.
//
// Threads: the HTTP server runs on its own threads and never touches the
// scheduler or libbpf. On each scrape it asks the daemon's main loop for a
// fresh snapshot (SnapshotWanted) and waits up to kSnapshotWait for the loop
// to Publish one; if none comes it serves the previous snapshot. The
// families are listed in Documentation/stats.md.

#ifndef LOEHLE_LOADER_DAEMON_METRICS_SERVER_H_
#define LOEHLE_LOADER_DAEMON_METRICS_SERVER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "loader/core/stats_snapshot.h"

namespace loehle {

// Renders a stats snapshot; every counter of every generation is a sample,
// labelled with the generation and its settings.
std::string FormatMetrics(const StatsSnapshot& stats);

// Escapes a label value: backslash, double quote and newline.
std::string EscapeLabelValue(std::string_view value);

struct MetricsAddress {
  std::string host;  // without brackets for IPv6
  int port = 0;
};

// Parses "HOST:PORT" or "[V6]:PORT" (PORT 0..65535; 0 picks a free port).
// A HOST that is not loopback (127.0.0.0/8, ::1, localhost) is refused with
// InvalidArgument unless allow_remote.
absl::StatusOr<MetricsAddress> ParseMetricsAddress(std::string_view text,
                                                   bool allow_remote);

class MetricsServer {
 public:
  static constexpr std::chrono::milliseconds kSnapshotWait{1000};

  // Binds and starts serving; Unimplemented when built without cpp-httplib.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      const MetricsAddress& address);

  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // Stops the server and joins its thread.
  ~MetricsServer();

  int port() const { return port_; }

  // Main loop side: true when a scrape waits for a snapshot.
  bool SnapshotWanted();
  // Main loop side: hands over a fresh `stats` reply.
  void Publish(StatsSnapshot stats);

  // HTTP side (public for tests): the body of GET /metrics; waits for a
  // snapshot as described above. Empty when none was ever published.
  std::string Scrape();

 private:
  struct Impl;
  MetricsServer();

  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  int port_ = 0;

  std::mutex mu_;
  std::condition_variable published_;
  bool wanted_ = false;
  uint64_t serial_ = 0;  // snapshots published so far
  StatsSnapshot snapshot_;
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_METRICS_SERVER_H_
