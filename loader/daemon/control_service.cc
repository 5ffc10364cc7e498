#include "loader/daemon/control_service.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "loader/net/json_lines.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

constexpr char kCommands[] = "get, set, stats or events";

nlohmann::json OkReply(nlohmann::json result) {
  return nlohmann::json{{"ok", true}, {"result", std::move(result)}};
}

}  // namespace

nlohmann::json ControlService::ErrorReply(const std::string& message) {
  return nlohmann::json{{"ok", false}, {"error", OneLine(message)}};
}

nlohmann::json ControlService::Answer(const nlohmann::json& request) {
  if (!request.is_object()) {
    return ErrorReply(
        "a request must be a JSON object such as {\"cmd\":\"get\"}");
  }
  const auto cmd = request.find("cmd");
  if (cmd == request.end()) {
    return ErrorReply(absl::StrFormat("missing \"cmd\" (expected %s)", kCommands));
  }
  if (!cmd->is_string()) {
    return ErrorReply(
        absl::StrFormat("\"cmd\" must be a string (%s)", kCommands));
  }
  const std::string& name = cmd->get_ref<const std::string&>();
  if (name == "get") return OkReply(handler_->HandleGet());
  if (name == "stats") return AnswerStats(request);
  if (name == "set") return AnswerSet(request);
  if (name == "events") return AnswerEvents(request);
  return ErrorReply(
      absl::StrFormat("unknown cmd \"%s\" (expected %s)", name, kCommands));
}

nlohmann::json ControlService::AnswerStats(const nlohmann::json& request) {
  const auto scope = request.find("generations");
  if (scope == request.end() || *scope == "all") {
    return OkReply(handler_->HandleStats(StatsScope::kAll));
  }
  if (*scope == "current") {
    return OkReply(handler_->HandleStats(StatsScope::kCurrent));
  }
  return ErrorReply("\"generations\" must be \"all\" or \"current\"");
}

nlohmann::json ControlService::AnswerSet(const nlohmann::json& request) {
  const auto args = request.find("args");
  if (args == request.end() || !args->is_object()) {
    return ErrorReply("\"set\" needs an \"args\" object");
  }
  return Reply(handler_->HandleSet(*args));
}

nlohmann::json ControlService::AnswerEvents(const nlohmann::json& request) {
  uint64_t since = 0;
  const auto arg = request.find("since");
  if (arg != request.end()) {
    if (!arg->is_number_unsigned()) {
      return ErrorReply("\"since\" must be a non-negative integer");
    }
    since = arg->get<uint64_t>();
  }
  return Reply(handler_->HandleEvents(since));
}

nlohmann::json ControlService::Reply(absl::StatusOr<nlohmann::json> result) {
  if (!result.ok()) return ErrorReply(std::string(result.status().message()));
  return OkReply(*std::move(result));
}

absl::StatusOr<std::unique_ptr<JsonLineServer>> ListenForControl(
    const std::string& path, ControlHandler* handler) {
  return JsonLineServer::Listen(path, std::make_unique<ControlService>(handler));
}

}  // namespace loehle
