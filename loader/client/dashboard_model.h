// The model of `scx_loehle top` (client/top_command.h), a live dashboard
// over the control socket's `stats` replies.
//
// Everything that decides what is shown is pure and lives here: rates from
// two replies, the per-CPU grouping (node, LLC, core) and its aggregation
// when rows do not fit, /proc/stat busy fractions, and the text of every
// line (sparklines, heat rows). DashboardModel keeps the state between
// frames. RunTop only fetches, feeds the model and puts Render()'s lines on
// an ncurses screen, or on stdout as plain text. The layout is described in
// Documentation/stats.md.

#ifndef LOEHLE_LOADER_CLIENT_DASHBOARD_MODEL_H_
#define LOEHLE_LOADER_CLIENT_DASHBOARD_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "nlohmann/json.hpp"

namespace loehle {

// Cumulative CPU time per CPU id from /proc/stat, in ticks.
struct ProcStat {
  std::vector<uint64_t> busy;   // user nice system irq softirq steal
  std::vector<uint64_t> total;  // busy + idle + iowait
};
ProcStat ParseProcStat(std::string_view text);
// Busy fraction (0..1) of each CPU between two readings; CPUs missing from
// either, or without elapsed ticks, get 0. Empty when `before` is empty.
std::vector<double> BusyFractions(const ProcStat& before, const ProcStat& now);

struct ProgramRate {
  std::string name;
  double calls_per_s = 0;
  double ns_per_call = -1;  // < 0: no calls in the interval
};

// Rates of the current generation between two `stats` replies.
struct Rates {
  uint32_t generation = 0;
  double seconds = 0;               // uptime_s difference; 0 = no rates yet
  bool generation_changed = false;  // counted from 0: it began in between
  std::map<std::string, double> per_s;  // counter name -> per second
  double events_received_per_s = 0;
  std::vector<ProgramRate> programs;

  double Rate(const std::string& counter) const;
};

// `before` may be null (first reply): every rate is then 0.
Rates ComputeRates(const StatsSnapshot* before, const StatsSnapshot& now);

// Online CPUs of one row of the per-CPU view, by core (cores and CPUs in id
// order).
struct CpuGroup {
  std::string label;  // "n0 L1", "n0", "n0-3"
  std::vector<std::vector<int>> cores;
  size_t cpu_count() const;
};
// One group per LLC; per node when there are more LLCs than max_rows; runs
// of consecutive nodes when there are more nodes than that.
std::vector<CpuGroup> GroupCpus(const TopologyInfo& topology, size_t max_rows);

// How a row is drawn in at most max_chars characters: one cell per CPU with
// '|' between cores when it fits, one cell per CPU without separators when
// that fits, else each cell covers several consecutive CPUs.
struct RowCells {
  std::vector<std::vector<int>> cells;
  std::vector<bool> break_before;  // a core boundary precedes cell i
  size_t width() const;
};
RowCells LayoutCells(const CpuGroup& group, size_t max_chars);
// Sum (or mean) of `by_cpu` over the cell's CPUs; ids beyond it count 0.
double CellValue(const std::vector<int>& cpus, const std::vector<double>& by_cpu,
                 bool mean);
// ' ' for 0 (or less), then ". : - = + * # % @" from small to `max`.
char HeatChar(double value, double max);
std::string HeatRow(const RowCells& row, const std::vector<double>& cell_values,
                    double max);
// The last `width` values, '_' for 0, the heat ramp scaled to their maximum.
std::string Sparkline(const std::vector<double>& values, size_t width);
// 0, 7, 12.5, 999, 1.2k, 34k, 1.2M: short numbers for narrow screens.
std::string FormatCount(double value);
// "1h02m03s", "4m05s", "9.5s".
std::string FormatDuration(double seconds);

// The `set` arguments for a key: 'p' next policy, 's' next sched-idle mode,
// 'm' the other SMT mode; nullopt for other keys.
std::optional<nlohmann::json> SettingChangeForKey(const Settings& settings,
                                                  int key);

// State kept between frames.
class DashboardModel {
 public:
  static constexpr size_t kHistory = 120;

  // A new reply (and /proc/stat reading, possibly empty).
  void Update(StatsSnapshot stats, ProcStat proc);
  // Clears the history and counts fork picks from now on.
  void Reset();
  void set_message(std::string message) { message_ = std::move(message); }

  // Lines of one frame, each at most `width` characters, at most `height`
  // lines (the per-CPU rows shrink to fit).
  std::vector<std::string> Render(size_t width, size_t height) const;

  // Null before the first Update.
  const StatsSnapshot* stats() const { return stats_ ? &*stats_ : nullptr; }
  const Rates& rates() const { return rates_; }
  const std::vector<double>& claim_fail_history() const { return fail_history_; }

 private:
  std::vector<std::string> HeaderLines(size_t width) const;
  std::string TieLine(size_t width) const;
  std::vector<std::string> FooterLines(size_t width) const;
  std::vector<std::string> CpuLines(size_t width, size_t rows) const;
  std::vector<double> ForkPicksByCpu() const;

  std::optional<StatsSnapshot> stats_;
  Rates rates_;
  ProcStat proc_;
  std::vector<double> busy_;
  std::vector<double> fail_history_;
  std::vector<uint64_t> fork_baseline_;
  uint32_t fork_baseline_generation_ = 0;
  std::string message_;
};

}  // namespace loehle

#endif  // LOEHLE_LOADER_CLIENT_DASHBOARD_MODEL_H_
