#include "loader/client/dashboard_model.h"


#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loader/core/stats.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

constexpr char kRamp[] = " .:-=+*#%@";  // 0 = none, 9 = the most
constexpr int kRampTop = 9;

std::string Fit(std::string line, size_t width) {
  if (line.size() > width) line.resize(width);
  return line;
}

// Words joined by two spaces into at most max_lines lines of `width`; the
// first line starts with `head`, the others are indented as deep.
std::vector<std::string> Wrap(const std::string& head,
                              const std::vector<std::string>& words,
                              size_t width, size_t max_lines) {
  std::vector<std::string> lines{head};
  const std::string indent(head.size(), ' ');
  for (const std::string& word : words) {
    std::string& line = lines.back();
    const bool fresh = line.size() == head.size();
    if (line.size() + (fresh ? 0 : 2) + word.size() <= width || fresh) {
      absl::StrAppend(&line, fresh ? "" : "  ", word);
    } else if (lines.size() < max_lines) {
      lines.push_back(indent + word);
    } else {
      if (line.size() + 3 <= width) line += " >";
      break;
    }
  }
  for (std::string& line : lines) line = Fit(line, width);
  return lines;
}

}  // namespace

ProcStat ParseProcStat(std::string_view text) {
  ProcStat stat;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    if (line.size() < 4 || line.substr(0, 3) != "cpu" ||
        !absl::ascii_isdigit(static_cast<unsigned char>(line[3]))) {
      continue;
    }
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 5) continue;
    uint32_t cpu;
    if (!absl::SimpleAtoi(f[0].substr(3), &cpu) || cpu >= 65536) continue;
    uint64_t v[8] = {};  // user nice system idle iowait irq softirq steal
    for (size_t i = 0; i < 8 && i + 1 < f.size(); ++i) {
      if (!absl::SimpleAtoi(f[i + 1], &v[i])) v[i] = 0;
    }
    if (stat.busy.size() <= cpu) {
      stat.busy.resize(cpu + 1);
      stat.total.resize(cpu + 1);
    }
    stat.busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    stat.total[cpu] = stat.busy[cpu] + v[3] + v[4];
  }
  return stat;
}

std::vector<double> BusyFractions(const ProcStat& before, const ProcStat& now) {
  std::vector<double> busy;
  if (before.total.empty()) return busy;
  busy.assign(now.total.size(), 0.0);
  for (size_t cpu = 0; cpu < now.total.size() && cpu < before.total.size(); ++cpu) {
    if (now.total[cpu] <= before.total[cpu]) continue;
    const double total = static_cast<double>(now.total[cpu] - before.total[cpu]);
    const double used = now.busy[cpu] > before.busy[cpu]
                            ? static_cast<double>(now.busy[cpu] - before.busy[cpu])
                            : 0.0;
    busy[cpu] = std::min(1.0, used / total);
  }
  return busy;
}

double Rates::Rate(const std::string& counter) const {
  auto it = per_s.find(counter);
  return it == per_s.end() ? 0.0 : it->second;
}

Rates ComputeRates(const StatsSnapshot* before, const StatsSnapshot& now) {
  Rates rates;
  rates.generation = now.generation;
  if (before == nullptr) return rates;
  rates.seconds = now.uptime_s - before->uptime_s;
  if (!(rates.seconds > 0)) {
    rates.seconds = 0;
    return rates;
  }
  auto per_s = [&rates](uint64_t now_value, uint64_t before_value) {
    return now_value > before_value
               ? static_cast<double>(now_value - before_value) / rates.seconds
               : 0.0;
  };
  const GenerationSnapshot* cur = now.Current();
  const GenerationSnapshot* old = before->Find(rates.generation);
  rates.generation_changed = old == nullptr;
  if (cur != nullptr) {
    const GenerationStats empty;
    const GenerationStats& base = old != nullptr ? old->stats : empty;
    for (uint32_t i = 0; i < LOEHLE_NR_STATS; ++i) {
      rates.per_s[StatName(i)] = per_s(cur->stats.Get(i), base.Get(i));
    }
  }
  rates.events_received_per_s = per_s(now.events.received, before->events.received);
  std::map<std::string, ProgramStats> earlier;
  for (const ProgramStats& program : before->programs) earlier[program.name] = program;
  for (const ProgramStats& program : now.programs) {
    ProgramRate rate;
    rate.name = program.name;
    const ProgramStats& old_program = earlier[program.name];
    if (program.run_count > old_program.run_count) {
      const uint64_t calls = program.run_count - old_program.run_count;
      rate.calls_per_s = static_cast<double>(calls) / rates.seconds;
      rate.ns_per_call =
          program.run_time_ns > old_program.run_time_ns
              ? static_cast<double>(program.run_time_ns - old_program.run_time_ns) /
                    static_cast<double>(calls)
              : 0.0;
    }
    rates.programs.push_back(rate);
  }
  return rates;
}

size_t CpuGroup::cpu_count() const {
  size_t n = 0;
  for (const auto& core : cores) n += core.size();
  return n;
}

std::vector<CpuGroup> GroupCpus(const TopologyInfo& topology, size_t max_rows) {
  max_rows = std::max<size_t>(max_rows, 1);
  // (node, llc) -> core -> cpus
  std::map<std::pair<uint64_t, uint64_t>, std::map<uint64_t, std::vector<int>>> llcs;
  for (const CpuInfo& cpu : topology.cpus) {
    if (!cpu.online) continue;
    llcs[{cpu.node, cpu.llc}][cpu.core].push_back(cpu.cpu);
  }
  auto cores_of = [](const std::map<uint64_t, std::vector<int>>& by_core) {
    std::vector<std::vector<int>> cores;
    for (const auto& [core, cpus] : by_core) {
      std::vector<int> sorted = cpus;
      std::sort(sorted.begin(), sorted.end());
      cores.push_back(std::move(sorted));
    }
    return cores;
  };
  std::vector<CpuGroup> groups;
  if (llcs.size() <= max_rows) {
    for (const auto& [key, by_core] : llcs) {
      groups.push_back({absl::StrCat("n", key.first, " L", key.second), cores_of(by_core)});
    }
    return groups;
  }
  std::map<uint64_t, std::map<uint64_t, std::vector<int>>> nodes;
  for (const auto& [key, by_core] : llcs) {
    for (const auto& [core, cpus] : by_core) {
      auto& dest = nodes[key.first][core];
      dest.insert(dest.end(), cpus.begin(), cpus.end());
    }
  }
  const size_t per_row = (nodes.size() + max_rows - 1) / max_rows;
  auto it = nodes.begin();
  while (it != nodes.end()) {
    const uint64_t first = it->first;
    uint64_t last = first;
    std::map<uint64_t, std::vector<int>> merged;
    for (size_t k = 0; k < per_row && it != nodes.end(); ++k, ++it) {
      last = it->first;
      for (const auto& [core, cpus] : it->second) {
        auto& dest = merged[core];
        dest.insert(dest.end(), cpus.begin(), cpus.end());
      }
    }
    groups.push_back({first == last ? absl::StrCat("n", first)
                                    : absl::StrCat("n", first, "-", last),
                      cores_of(merged)});
  }
  return groups;
}

size_t RowCells::width() const {
  size_t w = cells.size();
  for (bool b : break_before) w += b ? 1 : 0;
  return w;
}

RowCells LayoutCells(const CpuGroup& group, size_t max_chars) {
  RowCells row;
  max_chars = std::max<size_t>(max_chars, 1);
  const size_t n = group.cpu_count();
  bool smt = false;
  for (const auto& core : group.cores) smt = smt || core.size() > 1;
  const size_t with_breaks = n + (smt && !group.cores.empty() ? group.cores.size() - 1 : 0);
  if (with_breaks <= max_chars) {
    for (size_t c = 0; c < group.cores.size(); ++c) {
      for (size_t i = 0; i < group.cores[c].size(); ++i) {
        row.cells.push_back({group.cores[c][i]});
        row.break_before.push_back(smt && c > 0 && i == 0);
      }
    }
    return row;
  }
  std::vector<int> all;
  for (const auto& core : group.cores) all.insert(all.end(), core.begin(), core.end());
  const size_t per_cell = (n + max_chars - 1) / max_chars;
  for (size_t i = 0; i < all.size(); i += per_cell) {
    row.cells.emplace_back(all.begin() + static_cast<long>(i),
                           all.begin() + static_cast<long>(std::min(all.size(), i + per_cell)));
    row.break_before.push_back(false);
  }
  return row;
}

double CellValue(const std::vector<int>& cpus, const std::vector<double>& by_cpu,
                 bool mean) {
  double sum = 0;
  for (int cpu : cpus) {
    if (cpu >= 0 && static_cast<size_t>(cpu) < by_cpu.size()) sum += by_cpu[cpu];
  }
  return mean && !cpus.empty() ? sum / static_cast<double>(cpus.size()) : sum;
}

char HeatChar(double value, double max) {
  if (!(value > 0) || !(max > 0)) return kRamp[0];
  int level = 1 + static_cast<int>(std::floor(value / max * (kRampTop - 1) + 0.5));
  return kRamp[std::clamp(level, 1, kRampTop)];
}

std::string HeatRow(const RowCells& row, const std::vector<double>& cell_values,
                    double max) {
  std::string out;
  for (size_t i = 0; i < row.cells.size(); ++i) {
    if (row.break_before[i]) out += '|';
    out += HeatChar(i < cell_values.size() ? cell_values[i] : 0.0, max);
  }
  return out;
}

std::string Sparkline(const std::vector<double>& values, size_t width) {
  const size_t from = values.size() > width ? values.size() - width : 0;
  double max = 0;
  for (size_t i = from; i < values.size(); ++i) max = std::max(max, values[i]);
  std::string out;
  for (size_t i = from; i < values.size(); ++i) {
    const char c = HeatChar(values[i], max);
    out += c == ' ' ? '_' : c;
  }
  return out;
}

std::string FormatCount(double value) {
  if (!(value > 0)) return "0";
  if (value < 10 && value != std::floor(value)) return absl::StrFormat("%.1f", value);
  if (value < 1000) return absl::StrFormat("%.0f", value);
  if (value < 10e3) return absl::StrFormat("%.1fk", value / 1e3);
  if (value < 1e6) return absl::StrFormat("%.0fk", value / 1e3);
  if (value < 10e6) return absl::StrFormat("%.1fM", value / 1e6);
  if (value < 1e9) return absl::StrFormat("%.0fM", value / 1e6);
  return absl::StrFormat("%.1fG", value / 1e9);
}

std::string FormatDuration(double seconds) {
  if (!(seconds > 0)) return "0s";
  if (seconds < 60) return absl::StrFormat("%.1fs", seconds);
  const uint64_t s = static_cast<uint64_t>(seconds);
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm%02ds", s / 3600, s / 60 % 60, s % 60);
}

std::optional<nlohmann::json> SettingChangeForKey(const Settings& settings,
                                                  int key) {
  auto next = [](const char* field, uint32_t current, uint32_t count,
                 std::string_view (*name)(uint32_t)) -> nlohmann::json {
    return {{field, std::string(name((current + 1) % count))}};
  };
  switch (key) {
    case 'p': return next("policy", settings.policy, LOEHLE_NR_POLICIES, PolicyName);
    case 's':
      return next("sched_idle", settings.sched_idle, LOEHLE_NR_SI_MODES,
                  SchedIdleModeName);
    case 'g':
      return next("sched_idle_scope", settings.sched_idle_scope,
                  LOEHLE_NR_SCOPES, SchedIdleScopeName);
    case 'm': return next("smt", settings.smt, LOEHLE_NR_SMT_MODES, SmtModeName);
    default: return std::nullopt;
  }
}

void DashboardModel::Update(StatsSnapshot stats, ProcStat proc) {
  rates_ = ComputeRates(stats_ ? &*stats_ : nullptr, stats);
  busy_ = BusyFractions(proc_, proc);
  proc_ = std::move(proc);
  stats_ = std::move(stats);
  if (rates_.seconds > 0) {
    fail_history_.push_back(rates_.Rate("claim_failures"));
    if (fail_history_.size() > kHistory) fail_history_.erase(fail_history_.begin());
  }
}

void DashboardModel::Reset() {
  fail_history_.clear();
  fork_baseline_.clear();
  fork_baseline_generation_ = stats_ ? stats_->generation : 0;
  if (const GenerationSnapshot* gen = stats_ ? stats_->Current() : nullptr) {
    fork_baseline_ = gen->stats.fork_picks;
  }
  message_ = "view reset";
}

std::vector<std::string> DashboardModel::Render(size_t width, size_t height) const {
  width = std::max<size_t>(width, 20);
  if (!stats_) return {"waiting for the first stats reply..."};
  std::vector<std::string> lines = HeaderLines(width);
  const std::vector<std::string> bottom = FooterLines(width);
  // The per-CPU view gets what is left.
  const size_t fixed = lines.size() + bottom.size() + 1;
  const size_t rows = height > fixed ? height - fixed : 1;
  for (std::string& line : CpuLines(width, rows)) lines.push_back(std::move(line));
  for (const std::string& line : bottom) lines.push_back(line);
  if (lines.size() > height) lines.resize(height);
  return lines;
}

std::vector<std::string> DashboardModel::HeaderLines(size_t width) const {
  std::vector<std::string> top;
  const StatsSnapshot& s = *stats_;
  const Settings& settings = s.settings;
  const Rates& r = rates_;

  // The kernel release last: it is the longest field, the one to lose.
  top.push_back(Fit(absl::StrFormat("scx_loehle top  up %s  sched_ext %s (%s)  kernel %s",
                                    FormatDuration(s.uptime_s), s.state, s.ops, s.kernel),
                    width));
  top.push_back(Fit(absl::StrFormat(
                        "gen %d  policy %s  sched-idle %s (%s)  smt %s  slice %dus%s",
                        s.generation, PolicyName(settings.policy),
                        SchedIdleModeName(settings.sched_idle),
                        SchedIdleScopeName(settings.sched_idle_scope),
                        SmtModeName(settings.smt),
                        settings.slice_us, r.generation_changed ? "  (new)" : ""),
                    width));

  auto rate = [&r](const std::string& name) { return FormatCount(r.Rate(name)); };
  double selects = 0;
  for (uint32_t p = 0; p < LOEHLE_NR_PATHS; ++p) selects += r.Rate(StatName(SelectStat(p)));
  std::vector<std::string> words;
  for (uint32_t p = 0; p < LOEHLE_NR_PATHS; ++p) {
    words.push_back(absl::StrCat(std::string(PathName(p)), " ", rate(StatName(SelectStat(p)))));
  }
  for (std::string& line :
       Wrap(absl::StrCat("select/s ", FormatCount(selects), " = "), words, width, 1)) {
    top.push_back(line);
  }
  words.clear();
  for (uint32_t reason = 0; reason < LOEHLE_NR_REASONS; ++reason) {
    const std::string name = StatName(PickStat(reason));
    if (r.Rate(name) > 0) words.push_back(absl::StrCat(std::string(ReasonName(reason)), " ", rate(name)));
  }
  if (words.empty()) words.push_back(r.seconds > 0 ? "none" : "(rates after the next frame)");
  for (std::string& line : Wrap("pick/s   ", words, width, 2)) top.push_back(line);

  const double attempts = r.Rate("claim_attempts");
  const double failures = r.Rate("claim_failures");
  std::string claims = absl::StrFormat(
      "claims/s %s  fail/s %s (%.2f%%)  retry/s %s  fails ", FormatCount(attempts),
      FormatCount(failures), attempts > 0 ? 100.0 * failures / attempts : 0.0,
      rate("claim_retries"));
  const size_t spark_width = width > claims.size() + 2 ? width - claims.size() - 2 : 0;
  claims += "[" + Sparkline(fail_history_, std::min<size_t>(spark_width, 40)) + "]";
  top.push_back(Fit(claims, width));
  // Drops of every generation: a drop is worth seeing even after a switch.
  top.push_back(Fit(absl::StrFormat(
                        "si-preempt/s %s  pack/s %s  busy-sib/s %s  events/s %s "
                        "(1/%d)  drops/s %s (%s)",
                        rate("sched_idle_preempt"), rate("packing"),
                        rate("busy_sibling_pick"), rate("events"),
                        settings.sample_every, rate("event_drops"),
                        FormatCount(static_cast<double>(s.events.drops_total))),
                    width));
  top.push_back(TieLine(width));
  return top;
}

std::string DashboardModel::TieLine(size_t width) const {
  const GenerationSnapshot* gen = stats_->Current();
  const GenerationStats empty;
  const GenerationStats& counters = gen != nullptr ? gen->stats : empty;
  std::vector<std::string> words;
  uint64_t groups = 0;
  for (uint32_t b = 0; b < LOEHLE_TIE_BUCKETS; ++b) {
    const uint64_t n = counters.Get(TieHistStat(b));
    groups += n;
    if (n > 0) {
      words.push_back(absl::StrCat(TieBucketLabel(b, '-'), ":",
                                   FormatCount(static_cast<double>(n))));
    }
  }
  words.push_back(absl::StrFormat(
      "mean %.2f | fork cv %.3f chi2 %.1f",
      groups > 0 ? static_cast<double>(counters.Get(LOEHLE_STAT_CANDIDATES)) /
                       static_cast<double>(groups)
                 : 0.0,
      gen != nullptr ? gen->derived.fork_spread_cv : 0.0,
      gen != nullptr ? gen->derived.fork_chi_square : 0.0));
  return Wrap("ties     ", words, width, 1).front();
}

// Callback costs and the help line.
std::vector<std::string> DashboardModel::FooterLines(size_t width) const {
  std::vector<std::string> bottom;
  std::vector<std::string> words;
  for (const ProgramRate& p : rates_.programs) {
    if (p.ns_per_call < 0) continue;
    words.push_back(p.ns_per_call < 1000
                        ? absl::StrFormat("%s %.0fns", p.name, p.ns_per_call)
                        : absl::StrFormat("%s %.1fus", p.name, p.ns_per_call / 1000));
  }
  if (words.empty()) words.push_back("-");
  for (std::string& line : Wrap("cost/call ", words, width, 2)) bottom.push_back(line);
  std::string help = "q quit  p policy  s sched-idle  g scope  m smt  r reset";
  if (!message_.empty()) absl::StrAppend(&help, "  | ", message_);
  bottom.push_back(Fit(help, width));
  return bottom;
}

// Fork picks of the current generation per CPU (since the last reset, when
// there was one in this generation).
std::vector<double> DashboardModel::ForkPicksByCpu() const {
  std::vector<double> forks;
  const GenerationSnapshot* gen = stats_->Current();
  if (gen == nullptr) return forks;
  const bool baseline =
      fork_baseline_generation_ == stats_->generation && !fork_baseline_.empty();
  const std::vector<uint64_t>& picks = gen->stats.fork_picks;
  for (size_t cpu = 0; cpu < picks.size(); ++cpu) {
    uint64_t n = picks[cpu];
    if (baseline && cpu < fork_baseline_.size()) {
      n = n > fork_baseline_[cpu] ? n - fork_baseline_[cpu] : 0;
    }
    forks.push_back(static_cast<double>(n));
  }
  return forks;
}

// The "-- per CPU" title and at most `rows` rows of fork and busy heat.
std::vector<std::string> DashboardModel::CpuLines(size_t width, size_t rows) const {
  std::vector<std::string> out;
  const uint32_t generation = stats_->generation;
  const std::vector<CpuGroup> cpu_groups = GroupCpus(stats_->topology, rows);
  const std::vector<double> forks = ForkPicksByCpu();
  const bool have_busy = !busy_.empty();
  const size_t label_width = 7;
  // label, " fork ", heat, " ", total(6); "  busy ", heat, " ", pct(4)
  const size_t overhead = label_width + 6 + 1 + 6 + (have_busy ? 7 + 1 + 4 : 0);
  const size_t heat_width =
      width > overhead + 2 ? (width - overhead) / (have_busy ? 2 : 1) : 1;
  std::vector<RowCells> layouts;
  double fork_max = 0, total_forks = 0;
  std::vector<std::vector<double>> fork_cells, busy_cells;
  for (const CpuGroup& g : cpu_groups) {
    layouts.push_back(LayoutCells(g, heat_width));
    std::vector<double> fc, bc;
    for (const auto& cell : layouts.back().cells) {
      fc.push_back(CellValue(cell, forks, false));
      fork_max = std::max(fork_max, fc.back());
      total_forks += fc.back();
      bc.push_back(CellValue(cell, busy_, true));
    }
    fork_cells.push_back(std::move(fc));
    busy_cells.push_back(std::move(bc));
  }
  out.push_back(Fit(absl::StrFormat(
                        "-- per CPU, gen %d%s: fork picks (%s, max %s/cell)%s ",
                        generation,
                        fork_baseline_generation_ == generation && !fork_baseline_.empty()
                            ? " since reset"
                            : "",
                        FormatCount(total_forks), FormatCount(fork_max),
                        have_busy ? " | busy (/proc/stat)" : "") +
                        std::string(width, '-'),
                    width));
  size_t row_width = 0;
  for (const RowCells& layout : layouts) row_width = std::max(row_width, layout.width());
  for (size_t i = 0; i < cpu_groups.size() && i < rows; ++i) {
    double total = 0, busy_sum = 0;
    size_t cpus = 0;
    for (size_t c = 0; c < layouts[i].cells.size(); ++c) {
      total += fork_cells[i][c];
      busy_sum += busy_cells[i][c] * static_cast<double>(layouts[i].cells[c].size());
      cpus += layouts[i].cells[c].size();
    }
    const std::string fork_heat = HeatRow(layouts[i], fork_cells[i], fork_max);
    const size_t pad = row_width > fork_heat.size() ? row_width - fork_heat.size() : 0;
    std::string line = absl::StrFormat("%-7s fork %s%s %5s", cpu_groups[i].label.substr(0, 7),
                                       fork_heat, std::string(pad, ' '), FormatCount(total));
    if (have_busy) {
      absl::StrAppendFormat(&line, "  busy %s %4.0f%%", HeatRow(layouts[i], busy_cells[i], 1.0),
                            cpus > 0 ? 100.0 * busy_sum / static_cast<double>(cpus) : 0.0);
    }
    out.push_back(Fit(line, width));
  }
  return out;
}

}  // namespace loehle
