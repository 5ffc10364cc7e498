#include "loader/sim/experiment.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "loader/core/settings.h"

namespace loehle::sim {
namespace {

absl::string_view Abs(std::string_view text) {
  return absl::string_view(text.data(), text.size());
}

double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

void AddPath(const PathStats& from, PathStats* to) {
  to->selects += from.selects;
  to->scans += from.scans;
  to->idle_picks += from.idle_picks;
  to->stale_picks += from.stale_picks;
  to->claim_attempts += from.claim_attempts;
  to->claim_failures += from.claim_failures;
  to->gave_up += from.gave_up;
  to->examined += from.examined;
  to->tie_groups += from.tie_groups;
  to->tie_candidates += from.tie_candidates;
  to->sched_idle_picks += from.sched_idle_picks;
  to->sched_idle_refused += from.sched_idle_refused;
  to->packing += from.packing;
  to->select_ns += from.select_ns;
}

nlohmann::json PathJson(const PathStats& p) {
  return {{"selects", p.selects},
          {"scans", p.scans},
          {"idle_picks", p.idle_picks},
          {"stale_picks", p.stale_picks},
          {"claim_attempts", p.claim_attempts},
          {"claim_failures", p.claim_failures},
          {"gave_up", p.gave_up},
          {"examined", p.examined},
          {"tie_groups", p.tie_groups},
          {"tie_candidates", p.tie_candidates},
          {"sched_idle_picks", p.sched_idle_picks},
          {"sched_idle_refused", p.sched_idle_refused},
          {"packing", p.packing},
          {"select_ns", p.select_ns},
          {"stale_pick_percent", StalePickPercent(p)},
          {"claim_failure_percent", ClaimFailurePercent(p)}};
}

// The runs of one configuration, over its repetitions (seeds).
struct Pooled {
  const RunSpec* spec = nullptr;
  PathStats fork, wakeup;
  std::vector<uint64_t> fork_picks;
  uint64_t ops = 0, simulated_ns = 0, done_ns = 0, runs = 0, unfinished = 0;
  uint64_t run_ns = 0, corun_ns = 0, smt_moves = 0;
  LatencyHistogram wake_latency;
};

using ConfigKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t>;

std::vector<Pooled> Pool(const std::vector<RunResult>& runs) {
  std::vector<Pooled> pooled;
  std::map<ConfigKey, size_t> index;
  for (const RunResult& r : runs) {
    const ConfigKey key{r.spec.machine.policy, r.spec.machine.sched_idle, r.spec.machine.smt,
                        r.spec.workload.size, r.spec.workload.fork_max};
    auto [it, fresh] = index.emplace(key, pooled.size());
    if (fresh) {
      pooled.emplace_back();
      pooled.back().spec = &r.spec;
      pooled.back().fork_picks.assign(r.stats.fork_picks.size(), 0);
    }
    Pooled& p = pooled[it->second];
    AddPath(r.stats.fork, &p.fork);
    AddPath(r.stats.wakeup, &p.wakeup);
    for (size_t i = 0; i < r.stats.fork_picks.size(); ++i) p.fork_picks[i] += r.stats.fork_picks[i];
    p.ops += r.outcome.ops;
    p.simulated_ns += r.simulated_ns;
    p.done_ns += r.outcome.done_ns;
    if (r.spec.workload.kind == "schedidle" && !r.outcome.done_ns) ++p.unfinished;
    p.run_ns += r.stats.run_ns;
    p.corun_ns += r.stats.corun_ns;
    p.smt_moves += r.stats.smt_moves;
    p.wake_latency.Merge(r.stats.wake_latency);
    ++p.runs;
  }
  return pooled;
}

// "-" where there was nothing to divide by.
std::string PercentOr(uint64_t part, uint64_t whole) {
  return whole ? absl::StrFormat("%.3f", Percent(part, whole)) : "-";
}

double PerSecond(uint64_t count, uint64_t ns) {
  return ns ? static_cast<double>(count) * 1e9 / static_cast<double>(ns) : 0.0;
}

std::string ConfigName(const RunSpec& s) {
  return absl::StrCat(Abs(PolicyName(s.machine.policy)), "/",
                      Abs(SchedIdleModeName(s.machine.sched_idle)), "/",
                      Abs(SmtModeName(s.machine.smt)));
}

std::string ForkTable(const std::vector<Pooled>& pooled) {
  std::string out =
      "| policy | creators | fork-max | forks/s | stale picks % | claim failures % | "
      "mean tie group | CPUs examined per select | fork-pick CV |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const Pooled& p : pooled) {
    absl::StrAppendFormat(&out, "| %s | %u | %u | %.0f | %s | %s | %.1f | %.1f | %.3f |\n",
                          Abs(PolicyName(p.spec->machine.policy)), p.spec->workload.size,
                          p.spec->workload.fork_max, PerSecond(p.ops, p.simulated_ns),
                          PercentOr(p.fork.stale_picks, p.fork.idle_picks),
                          PercentOr(p.fork.claim_failures, p.fork.claim_attempts),
                          MeanTieGroup(p.fork), ExaminedPerSelect(p.fork),
                          ForkSpreadCv(p.fork_picks));
  }
  // Ratios to the first policy of each size and mode pair.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, const Pooled*> base;
  std::string ratios;
  for (const Pooled& p : pooled) {
    const auto key = std::make_tuple(p.spec->workload.size, p.spec->workload.fork_max,
                                     p.spec->machine.sched_idle, p.spec->machine.smt);
    auto [it, fresh] = base.emplace(key, &p);
    if (fresh) continue;
    const double b = StalePickPercent(it->second->fork);
    const double c = ClaimFailurePercent(it->second->fork);
    absl::StrAppendFormat(&ratios, "| %s / %s | %u | %s | %s |\n",
                          Abs(PolicyName(p.spec->machine.policy)),
                          Abs(PolicyName(it->second->spec->machine.policy)), std::get<0>(key),
                          b > 0 ? absl::StrFormat("%.2fx", StalePickPercent(p.fork) / b) : "-",
                          c > 0 ? absl::StrFormat("%.2fx", ClaimFailurePercent(p.fork) / c) : "-");
  }
  if (!ratios.empty()) {
    absl::StrAppend(&out, "\n| ratio | creators | stale picks | claim failures |\n|---|---|---|---|\n",
                    ratios);
  }
  return out;
}

std::string SchedIdleTable(const std::vector<Pooled>& pooled) {
  std::string out =
      "| sched-idle | policy | workers | completion s | vs first mode | packing | "
      "sched-idle picks |\n|---|---|---|---|---|---|---|\n";
  // Against the first sched-idle mode of the same policy, SMT mode and size.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, double> base;
  for (const Pooled& p : pooled) {
    const double done_s = p.unfinished ? NAN : static_cast<double>(p.done_ns) / p.runs / 1e9;
    auto [it, fresh] = base.emplace(
        std::make_tuple(p.spec->machine.policy, p.spec->machine.smt, p.spec->workload.size),
        done_s);
    absl::StrAppendFormat(&out, "| %s | %s | %u | %s | %s | %u | %u |\n",
                          Abs(SchedIdleModeName(p.spec->machine.sched_idle)),
                          Abs(PolicyName(p.spec->machine.policy)), p.spec->workload.size,
                          p.unfinished ? "(not done)" : absl::StrFormat("%.3f", done_s),
                          fresh || std::isnan(done_s) || std::isnan(it->second)
                              ? "-"
                              : absl::StrFormat("%+.2f%%", 100 * (done_s / it->second - 1)),
                          p.fork.packing + p.wakeup.packing,
                          p.fork.sched_idle_picks + p.wakeup.sched_idle_picks);
  }
  return out;
}

std::string SmtTable(const std::vector<Pooled>& pooled) {
  std::string out =
      "| smt | policy | tasks | sibling co-run share % | smt moves | bursts/s |\n"
      "|---|---|---|---|---|---|\n";
  for (const Pooled& p : pooled) {
    absl::StrAppendFormat(&out, "| %s | %s | %u | %.2f | %u | %.0f |\n",
                          Abs(SmtModeName(p.spec->machine.smt)),
                          Abs(PolicyName(p.spec->machine.policy)), p.spec->workload.size,
                          Percent(p.corun_ns, p.run_ns), p.smt_moves,
                          PerSecond(p.ops, p.simulated_ns));
  }
  return out;
}

std::string WakeupTable(const std::vector<Pooled>& pooled) {
  std::string out =
      "| configuration | message threads | worker runs/s | wakeup p50 us | wakeup p99 us | "
      "claim failures % |\n|---|---|---|---|---|---|\n";
  for (const Pooled& p : pooled) {
    absl::StrAppendFormat(&out, "| %s | %u | %.0f | %.1f | %.1f | %.3f |\n", ConfigName(*p.spec),
                          p.spec->workload.size, PerSecond(p.ops, p.simulated_ns),
                          static_cast<double>(p.wake_latency.Quantile(0.5)) / 1e3,
                          static_cast<double>(p.wake_latency.Quantile(0.99)) / 1e3,
                          ClaimFailurePercent(p.wakeup));
  }
  return out;
}

}  // namespace

double StalePickPercent(const PathStats& p) { return Percent(p.stale_picks, p.idle_picks); }
double ClaimFailurePercent(const PathStats& p) {
  return Percent(p.claim_failures, p.claim_attempts);
}
double MeanTieGroup(const PathStats& p) {
  return p.tie_groups ? static_cast<double>(p.tie_candidates) / p.tie_groups : 0.0;
}
double ExaminedPerSelect(const PathStats& p) {
  return p.selects ? static_cast<double>(p.examined) / p.selects : 0.0;
}
double ForkSpreadCv(const std::vector<uint64_t>& picks) {
  if (picks.empty()) return 0;
  double sum = 0, sq = 0;
  for (uint64_t n : picks) {
    sum += static_cast<double>(n);
    sq += static_cast<double>(n) * static_cast<double>(n);
  }
  const double mean = sum / picks.size();
  if (mean == 0) return 0;
  return std::sqrt(std::max(0.0, sq / picks.size() - mean * mean)) / mean;
}
double CorunShare(const MachineStats& s) { return Percent(s.corun_ns, s.run_ns); }

absl::StatusOr<RunResult> RunOnce(const SimTopology& topology, const RunSpec& spec) {
  absl::StatusOr<std::unique_ptr<DrivenWorkload>> workload =
      MakeWorkload(spec.workload, topology);
  if (!workload.ok()) return workload.status();
  const auto start = std::chrono::steady_clock::now();
  Machine machine(topology, spec.machine);
  machine.Run(**workload, spec.sim_ns);
  RunResult result;
  result.spec = spec;
  result.stats = machine.stats();
  result.outcome = (*workload)->outcome();
  result.simulated_ns = machine.now();
  result.decisions = machine.decisions();
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

absl::StatusOr<std::vector<RunResult>> RunSweep(const SimTopology& topology,
                                                const std::vector<RunSpec>& specs,
                                                unsigned jobs, const Progress& progress) {
  // A bad workload is refused before any thread starts.
  for (const RunSpec& spec : specs) {
    absl::StatusOr<std::unique_ptr<DrivenWorkload>> check = MakeWorkload(spec.workload, topology);
    if (!check.ok()) return check.status();
  }
  if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<size_t>(1, specs.size())));
  std::vector<RunResult> results(specs.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  size_t done = 0;
  uint64_t decisions = 0;
  double wall = 0;
  std::vector<std::thread> threads;
  for (unsigned j = 0; j < jobs; ++j) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < specs.size(); i = next++) {
        absl::StatusOr<RunResult> r = RunOnce(topology, specs[i]);
        std::lock_guard<std::mutex> lock(mu);
        if (r.ok()) {
          decisions += r->decisions;
          wall += r->wall_s;
          results[i] = std::move(*r);
        }
        ++done;
        cv.notify_one();
      }
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    size_t shown = 0;
    while (shown < specs.size()) {
      cv.wait(lock, [&] { return done > shown; });
      shown = done;
      if (progress) progress(shown, specs.size(), decisions, wall);
    }
  }
  for (std::thread& t : threads) t.join();
  return results;
}

nlohmann::json ResultsJson(const SimTopology& topology, const std::vector<RunResult>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const RunResult& r : runs) {
    const RunSpec& s = r.spec;
    out.push_back({
        {"topology", topology.name},
        {"workload", s.workload.kind},
        {"size", s.workload.size},
        {"fork_max", s.workload.fork_max},
        {"idle_hogs", s.workload.idle_hogs},
        {"policy", std::string(PolicyName(s.machine.policy))},
        {"sched_idle", std::string(SchedIdleModeName(s.machine.sched_idle))},
        {"smt", std::string(SmtModeName(s.machine.smt))},
        {"claim_retries", s.machine.claim_retries},
        {"scan_ns_per_cpu", s.machine.cost.scan_ns_per_cpu},
        {"seed", s.machine.seed},
        {"simulated_ns", r.simulated_ns},
        {"ops", r.outcome.ops},
        {"done_ns", r.outcome.done_ns},
        {"decisions", r.decisions},
        {"fork", PathJson(r.stats.fork)},
        {"wakeup", PathJson(r.stats.wakeup)},
        {"fork_pick_cv", ForkSpreadCv(r.stats.fork_picks)},
        {"fork_picks", r.stats.fork_picks},
        {"preemptions", r.stats.preemptions},
        {"smt_moves", r.stats.smt_moves},
        {"corun_share_percent", CorunShare(r.stats)},
        {"idle_work_run_ns", r.stats.idle_work_run_ns},
        {"wake_latency_p50_ns", r.stats.wake_latency.Quantile(0.5)},
        {"wake_latency_p99_ns", r.stats.wake_latency.Quantile(0.99)},
    });
  }
  return out;
}

std::string ResultsMarkdown(const SimTopology& topology, const std::vector<RunResult>& runs) {
  if (runs.empty()) return "";
  const std::vector<Pooled> pooled = Pool(runs);
  const RunSpec& first = runs.front().spec;
  std::string out = absl::StrFormat(
      "%s, workload %s, %u repetition(s) pooled, %.3f simulated s each, scan %u ns/CPU\n\n",
      DescribeSimTopology(topology), first.workload.kind, pooled.front().runs,
      static_cast<double>(first.sim_ns) / 1e9, first.machine.cost.scan_ns_per_cpu);
  const std::string& kind = first.workload.kind;
  if (kind == "fork") return out + ForkTable(pooled);
  if (kind == "schedidle") return out + SchedIdleTable(pooled);
  if (kind == "smt") return out + SmtTable(pooled);
  return out + WakeupTable(pooled);
}

}  // namespace loehle::sim
