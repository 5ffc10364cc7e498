// libFuzzer target: one request line of each of the daemon's protocols
// (loader/daemon/control_service.h, loader/daemon/scx_stats_service.h),
// parsed as the server parses it, answered with the real settings parser
// behind `set`. Beyond not crashing or throwing: every reply is an object
// the server can write (invalid UTF-8 replaced), the control reply carries
// a boolean "ok", the scx_stats reply an "errno", and every `set` the
// handler accepts yields settings that pass ValidateSettings.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "loader/daemon/control_service.h"
#include "loader/daemon/scx_stats_service.h"
#include "nlohmann/json.hpp"

namespace {

class SettingsHandler : public loehle::ControlHandler {
 public:
  nlohmann::json HandleGet() override { return loehle::SettingsToJson(settings_); }
  absl::StatusOr<nlohmann::json> HandleSet(const nlohmann::json& args) override {
    absl::StatusOr<loehle::Settings> next = loehle::ApplySettingsJson(settings_, args);
    if (!next.ok()) return next.status();
    if (!loehle::ValidateSettings(*next).ok()) abort();
    settings_ = *next;
    return HandleGet();
  }
  nlohmann::json HandleStats(loehle::StatsScope) override {
    return loehle::ToJson(loehle::StatsSnapshot{});
  }

 private:
  loehle::Settings settings_;
};

void Written(const nlohmann::json& reply) {
  if (!reply.is_object()) abort();
  (void)reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static SettingsHandler handler;
  static loehle::ControlService control(&handler);
  static loehle::ScxStatsService scx_stats(
      [] { return loehle::StatsSnapshot{}; });
  const nlohmann::json request =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) {
    const std::string line(reinterpret_cast<const char*>(data), size);
    Written(control.ErrorReply("not JSON: " + line));
    Written(scx_stats.ErrorReply("not JSON: " + line));
    return 0;
  }
  const nlohmann::json reply = control.Answer(request);
  Written(reply);
  if (!reply.contains("ok") || !reply["ok"].is_boolean()) abort();
  const nlohmann::json scx_reply = scx_stats.Answer(request);
  Written(scx_reply);
  if (!scx_reply.contains("errno")) abort();
  return 0;
}
