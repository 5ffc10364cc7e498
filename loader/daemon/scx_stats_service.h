// The scx_stats protocol of sched_ext's own schedulers, served beside the
// richer control protocol (daemon/control_service.h) on its own socket,
// default /var/run/scx/root/stats, with the same 0600 and peer rules.
//
// Requests, one JSON object per line:
//   {"req":"stats","args":{"target":"top"}}   ScxStatsTop() of a snapshot
//                                             of the current generation
//                                             ("target" may be left out)
//   {"req":"stats_meta"}                      ScxStatsMeta()
// Replies: {"errno":0,"args":{"resp":<response>}}; anything else gets
// {"errno":22 (EINVAL),"args":{"resp":"<one line>"}}: an unknown "req" or
// target, a request that is not an object, a line that is not JSON.

#ifndef LOEHLE_LOADER_DAEMON_SCX_STATS_SERVICE_H_
#define LOEHLE_LOADER_DAEMON_SCX_STATS_SERVICE_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "loader/core/stats_snapshot.h"
#include "loader/net/json_lines.h"
#include "nlohmann/json.hpp"

namespace loehle {

class ScxStatsService : public JsonLineProtocol {
 public:
  // `snapshot` is called on the server's thread for every stats request.
  explicit ScxStatsService(std::function<StatsSnapshot()> snapshot)
      : snapshot_(std::move(snapshot)) {}
  nlohmann::json Answer(const nlohmann::json& request) override;
  nlohmann::json ErrorReply(const std::string& message) override;

 private:
  std::function<StatsSnapshot()> snapshot_;
};

// Creates the socket's directory (mode 0755) when it is missing, as scx's
// schedulers do; errors name the path.
absl::Status PrepareSocketDirectory(const std::string& socket_path);

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_SCX_STATS_SERVICE_H_
