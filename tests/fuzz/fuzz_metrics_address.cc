// libFuzzer target: ParseMetricsAddress (loader/daemon/metrics_server.h),
// the --metrics-addr value. Beyond not crashing: an accepted address has a
// port in 0..65535 and, unless remote hosts are allowed, a loopback host.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "loader/daemon/metrics_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool allow_remote : {false, true}) {
    absl::StatusOr<loehle::MetricsAddress> address =
        loehle::ParseMetricsAddress(text, allow_remote);
    if (!address.ok()) continue;
    if (address->port < 0 || address->port > 65535) abort();
    if (!allow_remote && address->host != "localhost" && address->host != "::1" &&
        address->host.rfind("127.", 0) != 0) {
      abort();
    }
  }
  return 0;
}
