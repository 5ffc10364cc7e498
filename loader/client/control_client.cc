#include "loader/client/control_client.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "loader/net/json_lines.h"
#include "nlohmann/json.hpp"

namespace loehle {

absl::Status ReplyStatus(const nlohmann::json& reply) {
  const auto ok = reply.is_object() ? reply.find("ok") : reply.end();
  if (!reply.is_object() || ok == reply.end() || !ok->is_boolean()) {
    return absl::DataLossError("malformed reply: no \"ok\" field");
  }
  if (ok->get<bool>()) return absl::OkStatus();
  const auto error = reply.find("error");
  return absl::FailedPreconditionError(absl::StrCat(
      "scheduler refused: ", error != reply.end() && error->is_string()
                                 ? error->get<std::string>()
                                 : std::string("(no reason given)")));
}

absl::StatusOr<nlohmann::json> RequestResult(const std::string& socket,
                                             const nlohmann::json& request) {
  absl::StatusOr<nlohmann::json> reply = JsonRequest(socket, request);
  if (!reply.ok()) return reply.status();
  if (absl::Status status = ReplyStatus(*reply); !status.ok()) return status;
  const auto result = reply->find("result");
  return result != reply->end() ? *result : nlohmann::json::object();
}

}  // namespace loehle
