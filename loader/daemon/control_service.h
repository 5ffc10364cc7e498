// scx_loehle's control protocol, spoken on /run/scx_loehle.sock (the JSON-
// lines transport is net/json_lines.h).
//
// Requests:
//   {"cmd":"get"}                   current settings
//   {"cmd":"set","args":{...}}      change settings (ControlHandler::HandleSet)
//   {"cmd":"stats"}                 statistics, every generation
//   {"cmd":"stats","generations":"current"}
//                                   the same with only the current generation
//                                   (what `top` polls: a fraction of the
//                                   cost once many generations have run)
//   {"cmd":"events","since":N}      pick events after sequence number N
// Replies:
//   {"ok":true,"result":<handler json>}
//   {"ok":false,"error":"<one line>"}
// A bad request (malformed JSON, not an object, missing or unknown "cmd",
// "set" without an "args" object, a line longer than the transport's limit,
// a handler error) gets an error reply and the connection carries on.


#ifndef LOEHLE_LOADER_DAEMON_CONTROL_SERVICE_H_
#define LOEHLE_LOADER_DAEMON_CONTROL_SERVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "loader/net/json_lines.h"
#include "nlohmann/json.hpp"

namespace loehle {

// Which generations a stats reply carries ("generations": "all" or
// "current").
enum class StatsScope { kAll, kCurrent };

// What the protocol asks of the scheduler. All calls are made from within
// JsonLineServer::Poll, on the thread that calls it.
class ControlHandler {
 public:
  virtual ~ControlHandler() = default;
  // The reply's "result" for {"cmd":"get"}.
  virtual nlohmann::json HandleGet() = 0;
  // {"cmd":"set","args":args}; args is always an object. An error status
  // becomes the reply's "error" (its message, on one line).
  virtual absl::StatusOr<nlohmann::json> HandleSet(
      const nlohmann::json& args) = 0;
  // The reply's "result" for {"cmd":"stats"}: with kCurrent only the
  // current generation is in "generations".
  virtual nlohmann::json HandleStats(StatsScope scope) = 0;
  // {"cmd":"events","since":since}; since is a non-negative integer (0 when
  // the request has none). Handlers without events keep the default.
  virtual absl::StatusOr<nlohmann::json> HandleEvents(uint64_t since) {
    (void)since;
    return absl::UnimplementedError("this server keeps no events");
  }
};

// The protocol above over `handler`, which must outlive it.
class ControlService : public JsonLineProtocol {
 public:
  explicit ControlService(ControlHandler* handler) : handler_(handler) {}
  nlohmann::json Answer(const nlohmann::json& request) override;
  nlohmann::json ErrorReply(const std::string& message) override;

 private:
  nlohmann::json AnswerStats(const nlohmann::json& request);
  nlohmann::json AnswerSet(const nlohmann::json& request);
  nlohmann::json AnswerEvents(const nlohmann::json& request);
  // The ok reply with the result, or the error reply with its message.
  nlohmann::json Reply(absl::StatusOr<nlohmann::json> result);

  ControlHandler* handler_;
};

// A server with one socket at `path` speaking ControlService.
absl::StatusOr<std::unique_ptr<JsonLineServer>> ListenForControl(
    const std::string& path, ControlHandler* handler);

}  // namespace loehle

#endif  // LOEHLE_LOADER_DAEMON_CONTROL_SERVICE_H_
