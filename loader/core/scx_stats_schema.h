// The scx_stats view of a StatsSnapshot: what scx_loehle serves on the
// sched_ext ecosystem's stats socket (daemon/scx_stats_service.h), in the
// shape scx's own schedulers use, so that `scxtop --stats-socket-path` and
// scx's clients read it.
//
// One struct, "Stats", is the "top" target: the current generation's
// settings and every counter (from core/counters.h), the daemon's event
// figures and two derived rates. ScxStatsMeta() describes every field of it
// from the same metadata; `scx_loehle --help-stats` prints that description.

#ifndef LOEHLE_LOADER_CORE_SCX_STATS_SCHEMA_H_
#define LOEHLE_LOADER_CORE_SCX_STATS_SCHEMA_H_

#include <string>

#include "loader/core/stats_snapshot.h"
#include "nlohmann/json.hpp"

namespace loehle {

inline constexpr char kScxStatsStruct[] = "Stats";

// The "top" target's response: a flat object, one key per field of
// ScxStatsMeta() (counters of the current generation, cumulative).
nlohmann::json ScxStatsTop(const StatsSnapshot& snapshot);

// The stats_meta response: {"Stats":{"name":"Stats","top":"true",
// "desc":...,"fields":{"<field>":{"datum":"u64"|"float"|"string",
// "desc":...,"user":{"kind":"counter"|"gauge","unit":...,"scope":
// "current generation"|"daemon"}},...}}}.
nlohmann::json ScxStatsMeta();

// One line per field, "name (datum) : description [kind, unit, scope]",
// under a title: the text of `scx_loehle --help-stats`.
std::string DescribeScxStats();

}  // namespace loehle

#endif  // LOEHLE_LOADER_CORE_SCX_STATS_SCHEMA_H_
