#include "loader/dashboard.h"

#include <curses.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "loader/cli.h"
#include "loader/ctl.h"
#include "loader/options.h"
#include "loader/scheduler.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

constexpr char kRamp[] = " .:-=+*#%@";  // 0 = none, 9 = the most
constexpr int kRampTop = 9;

uint64_t U64(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  if (it == object.end()) return 0;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  if (it->is_number_integer() && it->get<int64_t>() > 0) {
    return static_cast<uint64_t>(it->get<int64_t>());
  }
  return 0;
}

double Num(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string Str(const nlohmann::json& object, const char* key,
                const std::string& fallback = "?") {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

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

const nlohmann::json* FindGeneration(const nlohmann::json& stats,
                                     uint32_t generation) {
  if (!stats.is_object()) return nullptr;
  auto gens = stats.find("generations");
  if (gens == stats.end() || !gens->is_array()) return nullptr;
  for (const nlohmann::json& gen : *gens) {
    if (U64(gen, "generation") == generation) return &gen;
  }
  return nullptr;
}

Rates ComputeRates(const nlohmann::json& before, const nlohmann::json& now) {
  Rates rates;
  rates.generation = static_cast<uint32_t>(U64(now, "generation"));
  if (before.is_null() || !before.is_object()) return rates;
  rates.seconds = Num(now, "uptime_s") - Num(before, "uptime_s");
  if (!(rates.seconds > 0)) {
    rates.seconds = 0;
    return rates;
  }
  const nlohmann::json* cur = FindGeneration(now, rates.generation);
  const nlohmann::json* old = FindGeneration(before, rates.generation);
  rates.generation_changed = old == nullptr;
  if (cur != nullptr && cur->contains("counters")) {
    const nlohmann::json& counters = (*cur)["counters"];
    const nlohmann::json empty = nlohmann::json::object();
    const nlohmann::json& base =
        old != nullptr && old->contains("counters") ? (*old)["counters"] : empty;
    for (const auto& [name, value] : counters.items()) {
      const uint64_t n = U64(counters, name.c_str());
      const uint64_t b = U64(base, name.c_str());
      rates.per_s[name] = n > b ? static_cast<double>(n - b) / rates.seconds : 0.0;
    }
  }
  const uint64_t received_now = now.contains("events") ? U64(now["events"], "received") : 0;
  const uint64_t received_before =
      before.contains("events") ? U64(before["events"], "received") : 0;
  if (received_now > received_before) {
    rates.events_received_per_s =
        static_cast<double>(received_now - received_before) / rates.seconds;
  }
  std::map<std::string, std::pair<uint64_t, uint64_t>> earlier;
  for (const nlohmann::json& p : before.value("programs", nlohmann::json::array())) {
    earlier[Str(p, "name")] = {U64(p, "run_count"), U64(p, "run_time_ns")};
  }
  for (const nlohmann::json& p : now.value("programs", nlohmann::json::array())) {
    ProgramRate rate;
    rate.name = Str(p, "name");
    uint64_t count = U64(p, "run_count"), time = U64(p, "run_time_ns");
    auto it = earlier.find(rate.name);
    const uint64_t count0 = it != earlier.end() ? it->second.first : 0;
    const uint64_t time0 = it != earlier.end() ? it->second.second : 0;
    if (count > count0) {
      rate.calls_per_s = static_cast<double>(count - count0) / rates.seconds;
      rate.ns_per_call = time > time0 ? static_cast<double>(time - time0) /
                                            static_cast<double>(count - count0)
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

std::vector<CpuGroup> GroupCpus(const nlohmann::json& topology, size_t max_rows) {
  max_rows = std::max<size_t>(max_rows, 1);
  // (node, llc) -> core -> cpus
  std::map<std::pair<uint64_t, uint64_t>, std::map<uint64_t, std::vector<int>>> llcs;
  for (const nlohmann::json& cpu : topology.value("cpus", nlohmann::json::array())) {
    if (!cpu.value("online", true)) continue;
    llcs[{U64(cpu, "node"), U64(cpu, "llc")}][U64(cpu, "core")].push_back(
        static_cast<int>(U64(cpu, "cpu")));
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

std::optional<nlohmann::json> SettingChangeForKey(const nlohmann::json& settings,
                                                  int key) {
  auto next = [&](const char* field, uint32_t count,
                  std::string_view (*name)(uint32_t)) -> nlohmann::json {
    const std::string current = Str(settings, field, "");
    uint32_t index = 0;
    for (uint32_t i = 0; i < count; ++i) {
      if (name(i) == current) index = i;
    }
    return {{field, std::string(name((index + 1) % count))}};
  };
  switch (key) {
    case 'p': return next("policy", LOEHLE_NR_POLICIES, PolicyName);
    case 's': return next("sched_idle", LOEHLE_NR_SI_MODES, SchedIdleModeName);
    case 'm': return next("smt", LOEHLE_NR_SMT_MODES, SmtModeName);
    default: return std::nullopt;
  }
}

void DashboardModel::Update(nlohmann::json stats, ProcStat proc) {
  rates_ = ComputeRates(stats_, stats);
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
  fork_baseline_generation_ = static_cast<uint32_t>(U64(stats_, "generation"));
  if (const nlohmann::json* gen = FindGeneration(stats_, fork_baseline_generation_)) {
    for (const nlohmann::json& n : gen->value("fork_picks", nlohmann::json::array())) {
      fork_baseline_.push_back(n.is_number_unsigned() ? n.get<uint64_t>() : 0);
    }
  }
  message_ = "view reset";
}

std::vector<std::string> DashboardModel::Render(size_t width, size_t height) const {
  width = std::max<size_t>(width, 20);
  std::vector<std::string> top, bottom;
  const nlohmann::json& s = stats_;
  if (s.is_null()) return {"waiting for the first stats reply..."};
  const nlohmann::json settings = s.value("settings", nlohmann::json::object());
  const Rates& r = rates_;
  const uint32_t generation = static_cast<uint32_t>(U64(s, "generation"));

  // The kernel release last: it is the longest field, the one to lose.
  top.push_back(Fit(absl::StrFormat("scx_loehle top  up %s  sched_ext %s (%s)  kernel %s",
                                    FormatDuration(Num(s, "uptime_s")), Str(s, "state"),
                                    Str(s, "ops"), Str(s, "kernel")),
                    width));
  top.push_back(Fit(absl::StrFormat(
                        "gen %d  policy %s  sched-idle %s  smt %s  slice %dus%s",
                        generation, Str(settings, "policy"), Str(settings, "sched_idle"),
                        Str(settings, "smt"), U64(settings, "slice_us"),
                        r.generation_changed ? "  (new)" : ""),
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
  const uint64_t total_drops =
      s.contains("events") ? U64(s["events"], "drops_total") : 0;
  top.push_back(Fit(absl::StrFormat(
                        "si-preempt/s %s  pack/s %s  busy-sib/s %s  events/s %s "
                        "(1/%d)  drops/s %s (%s)",
                        rate("sched_idle_preempt"), rate("packing"),
                        rate("busy_sibling_pick"), rate("events"),
                        U64(settings, "sample_every"), rate("event_drops"),
                        FormatCount(static_cast<double>(total_drops))),
                    width));

  const nlohmann::json* gen = FindGeneration(s, generation);
  const nlohmann::json counters =
      gen != nullptr ? gen->value("counters", nlohmann::json::object()) : nlohmann::json::object();
  words.clear();
  uint64_t groups = 0;
  for (uint32_t b = 0; b < LOEHLE_TIE_BUCKETS; ++b) {
    const std::string name = StatName(TieHistStat(b));
    const uint64_t n = U64(counters, name.c_str());
    groups += n;
    if (n > 0) {
      std::string size = name.substr(9);
      std::replace(size.begin(), size.end(), '_', '-');
      words.push_back(absl::StrCat(size, ":", FormatCount(static_cast<double>(n))));
    }
  }
  const nlohmann::json derived =
      gen != nullptr ? gen->value("derived", nlohmann::json::object()) : nlohmann::json::object();
  words.push_back(absl::StrFormat(
      "mean %.2f | fork cv %.3f chi2 %.1f",
      groups > 0 ? static_cast<double>(U64(counters, "candidates")) / static_cast<double>(groups) : 0.0,
      Num(derived, "fork_spread_cv"), Num(derived, "fork_chi_square")));
  for (std::string& line : Wrap("ties     ", words, width, 1)) top.push_back(line);

  // Bottom: callback costs and the help line.
  words.clear();
  for (const ProgramRate& p : r.programs) {
    if (p.ns_per_call < 0) continue;
    words.push_back(p.ns_per_call < 1000
                        ? absl::StrFormat("%s %.0fns", p.name, p.ns_per_call)
                        : absl::StrFormat("%s %.1fus", p.name, p.ns_per_call / 1000));
  }
  if (words.empty()) words.push_back("-");
  for (std::string& line : Wrap("cost/call ", words, width, 2)) bottom.push_back(line);
  std::string help = "q quit  p policy  s sched-idle  m smt  r reset";
  if (!message_.empty()) absl::StrAppend(&help, "  | ", message_);
  bottom.push_back(Fit(help, width));

  // The per-CPU view gets what is left.
  const size_t fixed = top.size() + bottom.size() + 1;
  const size_t rows = height > fixed ? height - fixed : 1;
  std::vector<CpuGroup> cpu_groups =
      GroupCpus(s.value("topology", nlohmann::json::object()), rows);

  std::vector<double> forks;
  if (gen != nullptr) {
    const nlohmann::json picks = gen->value("fork_picks", nlohmann::json::array());
    const bool baseline = fork_baseline_generation_ == generation && !fork_baseline_.empty();
    for (size_t cpu = 0; cpu < picks.size(); ++cpu) {
      uint64_t n = picks[cpu].is_number_unsigned() ? picks[cpu].get<uint64_t>() : 0;
      if (baseline && cpu < fork_baseline_.size()) {
        n = n > fork_baseline_[cpu] ? n - fork_baseline_[cpu] : 0;
      }
      forks.push_back(static_cast<double>(n));
    }
  }
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
  top.push_back(Fit(absl::StrFormat(
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
    top.push_back(Fit(line, width));
  }
  for (std::string& line : bottom) top.push_back(std::move(line));
  if (top.size() > height) top.resize(height);
  return top;
}

namespace {

ProcStat ReadProcStat() {
  std::ifstream in("/proc/stat");
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return ParseProcStat(text.str());
}

absl::Status GoneError(const absl::Status& why) {
  const std::string state = ReadSchedExtState();
  return absl::UnavailableError(absl::StrCat(
      "the scheduler went away (", why.message(), "); sched_ext state is now ",
      state.empty() ? "unknown" : state));
}

// Owns the ncurses screen: the terminal is restored on every way out.
class CursesScreen {
 public:
  // newterm() rather than initscr(), which exits the process when TERM is
  // unknown (e.g. tmux-256color on a machine without its terminfo entry);
  // then a plain terminal type is tried. Null when none works.
  static std::unique_ptr<CursesScreen> Open() {
    const char* term = getenv("TERM");
    for (const char* type : {term, "screen", "xterm", "vt100", "linux"}) {
      if (type == nullptr || *type == '\0') continue;
      if (SCREEN* screen = newterm(type, stdout, stdin)) {
        set_term(screen);
        return std::unique_ptr<CursesScreen>(new CursesScreen(screen));
      }
    }
    return nullptr;
  }
  ~CursesScreen() {
    endwin();
    delscreen(screen_);
  }
  CursesScreen(const CursesScreen&) = delete;
  CursesScreen& operator=(const CursesScreen&) = delete;

  void Draw(const std::vector<std::string>& lines) {
    erase();
    for (size_t i = 0; i < lines.size() && static_cast<int>(i) < LINES; ++i) {
      const bool strong = i < 2 || lines[i].rfind("--", 0) == 0;
      if (strong) attron(A_BOLD);
      mvaddnstr(static_cast<int>(i), 0, lines[i].c_str(), COLS);
      if (strong) attroff(A_BOLD);
    }
    refresh();
  }

 private:
  explicit CursesScreen(SCREEN* screen) : screen_(screen) {
    raw();  // Ctrl-C arrives as a key: the screen is restored before exit
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
  }
  SCREEN* screen_;
};

// top polls the current generation only: a full reply grows with every
// generation the daemon has run (52 KB and 14 ms of the daemon's CPU under
// TCG after 41 of them), and top shows only the current one.
nlohmann::json TopRequest() {
  return {{"cmd", "stats"}, {"generations", "current"}};
}

absl::Status RunPlain(const Command& command) {
  size_t width = 100;
  if (const char* columns = getenv("COLUMNS")) {
    uint32_t n;
    if (absl::SimpleAtoi(columns, &n) && n >= 40 && n <= 1000) width = n;
  }
  const int frames = command.once ? 1 : command.count;
  DashboardModel model;
  absl::StatusOr<nlohmann::json> first =
      RequestResult(command.socket_path, TopRequest());
  if (!first.ok()) return first.status();
  model.Update(*std::move(first), ReadProcStat());
  for (int n = 0; frames == 0 || n < frames; ++n) {
    std::this_thread::sleep_for(std::chrono::duration<double>(command.interval_s));
    absl::StatusOr<nlohmann::json> stats =
        RequestResult(command.socket_path, TopRequest());
    if (!stats.ok()) return GoneError(stats.status());
    model.Update(*std::move(stats), ReadProcStat());
    if (n > 0) printf("\n");
    for (const std::string& line : model.Render(width, 1000)) printf("%s\n", line.c_str());
    fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTop(const Command& command) {
  if (command.once || command.count > 0 || !isatty(STDOUT_FILENO) ||
      !isatty(STDIN_FILENO)) {
    return RunPlain(command);
  }
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(command.interval_s));
  DashboardModel model;
  absl::StatusOr<nlohmann::json> first =
      RequestResult(command.socket_path, TopRequest());
  if (!first.ok()) return first.status();
  model.Update(*std::move(first), ReadProcStat());

  absl::Status gone;
  {
    std::unique_ptr<CursesScreen> screen_owner = CursesScreen::Open();
    if (screen_owner == nullptr) {
      fprintf(stderr, "scx_loehle top: no usable terminal type (TERM=%s); plain frames\n",
              getenv("TERM") ? getenv("TERM") : "");
      return RunPlain(command);
    }
    CursesScreen& screen = *screen_owner;
    Clock::time_point next = Clock::now() + interval;
    bool dirty = true;
    for (;;) {
      if (Clock::now() >= next) {
        absl::StatusOr<nlohmann::json> stats =
            RequestResult(command.socket_path, TopRequest());
        if (!stats.ok()) {
          gone = GoneError(stats.status());
          break;
        }
        model.Update(*std::move(stats), ReadProcStat());
        next += interval;
        if (next < Clock::now()) next = Clock::now() + interval;
        dirty = true;
      }
      if (dirty) {
        screen.Draw(model.Render(static_cast<size_t>(COLS), static_cast<size_t>(LINES)));
        dirty = false;
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
          next - Clock::now());
      timeout(static_cast<int>(std::clamp<int64_t>(wait.count(), 0, 1000)));
      const int key = getch();
      if (key == ERR) continue;
      if (key == 'q' || key == 'Q' || key == 3 /* Ctrl-C */) break;
      if (key == KEY_RESIZE) {
        dirty = true;
      } else if (key == 'r') {
        model.Reset();
        dirty = true;
      } else if (std::optional<nlohmann::json> change = SettingChangeForKey(
                     model.stats().value("settings", nlohmann::json::object()), key)) {
        absl::StatusOr<nlohmann::json> applied =
            RequestResult(command.socket_path, {{"cmd", "set"}, {"args", *change}});
        if (applied.ok()) {
          const nlohmann::json st = applied->value("settings", nlohmann::json::object());
          model.set_message(absl::StrFormat(
              "generation %d: %s/%s/%s", U64(*applied, "generation"), Str(st, "policy"),
              Str(st, "sched_idle"), Str(st, "smt")));
        } else {
          model.set_message(std::string(applied.status().message()));
        }
        next = Clock::now();  // show the new generation at once
      }
    }
  }
  return gone;
}

}  // namespace loehle
