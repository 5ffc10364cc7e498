// The client side of the control protocol (daemon/control_service.h): one
// request, its "result" or the scheduler's refusal as an error status.

#ifndef LOEHLE_LOADER_CLIENT_CONTROL_CLIENT_H_
#define LOEHLE_LOADER_CLIENT_CONTROL_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace loehle {

// Sends `request` to the control socket and returns the reply's "result"
// (an empty object when it has none); a refusal ({"ok":false}) is
// FailedPrecondition "scheduler refused: <error>", a reply that is not the
// protocol's is DataLoss.
absl::StatusOr<nlohmann::json> RequestResult(const std::string& socket,
                                             const nlohmann::json& request);

// What the daemon's reply object says about a request: Ok, or the refusal
// as FailedPrecondition "scheduler refused: <error>", or DataLoss when it
// is not a reply of the control protocol.
absl::Status ReplyStatus(const nlohmann::json& reply);

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLIENT_CONTROL_CLIENT_H_
