#include "loader/daemon/scx_stats_service.h"

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "loader/core/scx_stats_schema.h"
#include "loader/net/json_lines.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

nlohmann::json Response(int error, nlohmann::json resp) {
  return {{"errno", error}, {"args", {{"resp", std::move(resp)}}}};
}

}  // namespace

nlohmann::json ScxStatsService::ErrorReply(const std::string& message) {
  return Response(EINVAL, OneLine(message));
}

nlohmann::json ScxStatsService::Answer(const nlohmann::json& request) {
  if (!request.is_object()) {
    return ErrorReply("a request must be a JSON object such as {\"req\":\"stats\"}");
  }
  const auto req = request.find("req");
  if (req == request.end() || !req->is_string()) {
    return ErrorReply("missing \"req\" (expected stats or stats_meta)");
  }
  if (*req == "stats_meta") return Response(0, ScxStatsMeta());
  if (*req != "stats") {
    return ErrorReply(absl::StrCat("unknown command \"", req->get<std::string>(),
                                   "\" (expected stats or stats_meta)"));
  }
  std::string target = "top";
  const auto args = request.find("args");
  if (args != request.end() && args->is_object()) {
    const auto t = args->find("target");
    if (t != args->end() && t->is_string()) target = t->get<std::string>();
  }
  if (target != "top") {
    return ErrorReply(absl::StrCat("unknown stat target \"", target, "\" (expected top)"));
  }
  return Response(0, ScxStatsTop(snapshot_()));
}

absl::Status PrepareSocketDirectory(const std::string& socket_path) {
  const std::filesystem::path dir = std::filesystem::path(socket_path).parent_path();
  if (dir.empty()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(
        absl::StrCat("cannot create ", dir.string(), ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace loehle
