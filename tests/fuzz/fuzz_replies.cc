// libFuzzer target: the clients' readers of the daemon's replies
// (loader/core/stats_snapshot.h, loader/core/event_wire.h) on any JSON.
// Beyond not crashing: what a reader accepts, written back with ToJson,
// reads again to the very same JSON (the writer and reader agree).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "loader/core/event_wire.h"
#include "loader/core/stats_snapshot.h"
#include "nlohmann/json.hpp"

namespace {

template <typename Parse>
void CheckRoundTrip(const nlohmann::json& input, Parse parse) {
  auto first = parse(input);
  if (!first.ok()) return;
  const nlohmann::json written = loehle::ToJson(*first);
  auto second = parse(written);
  if (!second.ok()) abort();
  if (loehle::ToJson(*second) != written) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json input =
      nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return 0;
  CheckRoundTrip(input, [](const nlohmann::json& j) {
    return loehle::ParseStatsSnapshot(j);
  });
  CheckRoundTrip(input, [](const nlohmann::json& j) {
    return loehle::ParseSchedulerStatus(j);
  });
  absl::StatusOr<loehle::EventBatch> events = loehle::DecodeEventsReply(input);
  if (events.ok()) {
    absl::StatusOr<loehle::EventBatch> again =
        loehle::DecodeEventsReply(loehle::EventsReply(*events));
    if (!again.ok()) abort();
  }
  return 0;
}
