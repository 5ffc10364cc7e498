// libFuzzer target: ParseCpuList (loader/core/topology.h) on any text.
// Beyond not crashing: a list it accepts is sorted, free of duplicates and
// within the documented 0..65535.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "loader/core/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<int>> cpus = loehle::ParseCpuList(text);
  if (!cpus.ok()) return 0;
  for (size_t i = 0; i < cpus->size(); ++i) {
    if ((*cpus)[i] < 0 || (*cpus)[i] > 65535) abort();
    if (i > 0 && (*cpus)[i - 1] >= (*cpus)[i]) abort();
  }
  return 0;
}
