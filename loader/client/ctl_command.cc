#include "loader/client/ctl_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "loader/client/control_client.h"
#include "loader/command_line.h"
#include "loader/net/json_lines.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loader/core/stats.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"

namespace loehle {
namespace {

absl::StatusOr<nlohmann::json> Request(const std::string& socket,
                                       const nlohmann::json& request) {
  return RequestResult(socket, request);
}

std::string DescribeStatus(const SchedulerStatus& status) {
  const Settings& s = status.settings;
  return absl::StrCat(
      "generation ", status.generation, ": policy=", std::string(PolicyName(s.policy)),
      " sched-idle=", std::string(SchedIdleModeName(s.sched_idle)),
      " sched-idle-scope=", std::string(SchedIdleScopeName(s.sched_idle_scope)),
      " smt=", std::string(SmtModeName(s.smt)),
      " slice-us=", s.slice_us, " claim-retries=", s.claim_retries,
      " sample-every=", s.sample_every, " (state ",
      status.state.empty() ? "?" : status.state, ", ops ",
      status.ops.empty() ? "?" : status.ops, "; scx_loehle ",
      status.version.empty() ? "?" : status.version, " git ",
      status.git_commit.empty() ? "?" : status.git_commit, ")");
}

// Sends a `get` or `set` request and prints the state it reports.
absl::Status PrintStatusReply(const std::string& socket,
                              const nlohmann::json& request) {
  absl::StatusOr<nlohmann::json> result = Request(socket, request);
  if (!result.ok()) return result.status();
  absl::StatusOr<SchedulerStatus> status = ParseSchedulerStatus(*result);
  if (!status.ok()) return status.status();
  printf("%s\n", DescribeStatus(*status).c_str());
  return absl::OkStatus();
}

// The reply as sent (for --json: a newer daemon's fields pass through) and
// its parse, which checks it.
struct StatsReply {
  nlohmann::json json;
  StatsSnapshot snapshot;
};

absl::StatusOr<StatsReply> RequestStats(const std::string& socket) {
  absl::StatusOr<nlohmann::json> result = Request(socket, {{"cmd", "stats"}});
  if (!result.ok()) return result.status();
  absl::StatusOr<StatsSnapshot> snapshot = ParseStatsSnapshot(*result);
  if (!snapshot.ok()) return snapshot.status();
  return StatsReply{*std::move(result), *std::move(snapshot)};
}

// `ctl send` speaks to either socket: a control reply has "ok", an
// scx_stats reply (--socket=/var/run/scx/root/stats) has "errno".
absl::Status SentReplyStatus(const nlohmann::json& reply) {
  const auto error = reply.find("errno");
  if (reply.contains("ok") || error == reply.end()) return ReplyStatus(reply);
  if (error->is_number_integer() && error->get<int64_t>() == 0) {
    return absl::OkStatus();
  }
  const nlohmann::json* resp = nullptr;
  if (const auto args = reply.find("args"); args != reply.end() && args->is_object()) {
    if (const auto r = args->find("resp"); r != args->end()) resp = &*r;
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "scheduler refused: errno ", error->dump(),
      resp != nullptr && resp->is_string() ? ": " + resp->get<std::string>() : ""));
}

std::string FormatGeneration(const GenerationSnapshot& gen) {
  const GenerationStats& c = gen.stats;
  const Derived& d = gen.derived;
  std::string out = absl::StrFormat(
      "gen %u %s: select fork %u wakeup %u sync %u\n", gen.generation(),
      SettingsLabel(gen.settings), c.Get(SelectStat(LOEHLE_PATH_FORK)),
      c.Get(SelectStat(LOEHLE_PATH_WAKEUP)), c.Get(SelectStat(LOEHLE_PATH_SYNC)));
  std::vector<std::string> reasons;
  for (uint32_t reason = 0; reason < LOEHLE_NR_REASONS; ++reason) {
    if (const uint64_t n = c.Get(PickStat(reason)); n > 0) {
      reasons.push_back(absl::StrCat(std::string(ReasonName(reason)), " ", n));
    }
  }
  absl::StrAppend(&out, "  picks: ",
                  reasons.empty() ? "none" : absl::StrJoin(reasons, ", "), "\n");
  absl::StrAppendFormat(
      &out,
      "  claims %u, failures %u (%.3f%%), retries %u; sched-idle preempt %u, "
      "sched-idle refused %u, sched-idle no-preempt %u, packing %u, "
      "busy-sibling picks %u\n",
      d.claim_attempts, d.claim_failures, 100.0 * d.claim_failure_rate,
      c.Get(LOEHLE_STAT_CLAIM_RETRIES), c.Get(LOEHLE_STAT_SCHED_IDLE_PREEMPT),
      c.Get(LOEHLE_STAT_SI_REFUSED), c.Get(LOEHLE_STAT_SI_NO_PREEMPT),
      c.Get(LOEHLE_STAT_PACKING), c.Get(LOEHLE_STAT_BUSY_SIBLING_PICK));
  absl::StrAppendFormat(
      &out,
      "  scans skipped %u, sched-idle claims lost %u, cpu releases %u, "
      "smt moves %u, idle dispatches %u, idle turns %u, idle wakes "
      "deferred %u, idle wakes late %u, idle wakes released %u, enqueues on "
      "offline CPUs %u, idle local kicks %u, kthread preemptions %u, "
      "idle overdue %u, offline rehomed %u, remote overdue %u, events %u, "
      "event drops %u\n",
      c.Get(LOEHLE_STAT_SCAN_SKIPPED), c.Get(LOEHLE_STAT_SI_CLAIM_LOST),
      c.Get(LOEHLE_STAT_CPU_RELEASE), c.Get(LOEHLE_STAT_SMT_MOVE),
      c.Get(LOEHLE_STAT_DISPATCH_IDLE), c.Get(LOEHLE_STAT_IDLE_TURN),
      c.Get(LOEHLE_STAT_IDLE_WAKE_DEFERRED), c.Get(LOEHLE_STAT_IDLE_WAKE_LATE),
      c.Get(LOEHLE_STAT_IDLE_WAKE_RELEASED), c.Get(LOEHLE_STAT_KICK_FROM_OFFLINE),
      c.Get(LOEHLE_STAT_IDLE_LOCAL_KICK), c.Get(LOEHLE_STAT_KTHREAD_PREEMPT),
      c.Get(LOEHLE_STAT_IDLE_OVERDUE), c.Get(LOEHLE_STAT_OFFLINE_REHOMED),
      c.Get(LOEHLE_STAT_REMOTE_OVERDUE), c.Get(LOEHLE_STAT_EVENTS), c.Get(LOEHLE_STAT_EVENT_DROPS));
  absl::StrAppendFormat(
      &out, "  fork picks per CPU [%s]: cv %.3f, chi-square %.1f, max %u, min %u\n",
      absl::StrJoin(c.fork_picks, " "), d.fork_spread_cv, d.fork_chi_square,
      d.fork_max, d.fork_min);
  return out;
}

}  // namespace

std::string FormatStatsReport(const StatsSnapshot& stats) {
  std::string out = absl::StrFormat(
      "kernel %s, sched_ext %s (%s), up %.1f s, generation %u, events %u\n",
      stats.kernel, stats.state, stats.ops, stats.uptime_s, stats.generation,
      stats.events.received);
  for (const GenerationSnapshot& gen : stats.generations) {
    absl::StrAppend(&out, FormatGeneration(gen));
  }
  return out;
}

absl::Status RunCtl(const Command& command) {
  switch (command.kind) {
    case Command::Kind::kCtlGet:
      return PrintStatusReply(command.socket_path, {{"cmd", "get"}});
    case Command::Kind::kCtlSet:
      return PrintStatusReply(command.socket_path,
                              {{"cmd", "set"}, {"args", command.changes}});
    case Command::Kind::kCtlSend: {
      absl::StatusOr<nlohmann::json> reply =
          JsonLineRequest(command.socket_path, command.raw_request);
      if (!reply.ok()) return reply.status();
      printf("%s\n", reply->dump().c_str());
      return SentReplyStatus(*reply);
    }
    case Command::Kind::kCtlStats: {
      absl::StatusOr<StatsReply> stats = RequestStats(command.socket_path);
      if (!stats.ok()) return stats.status();
      if (command.json) {
        printf("%s\n", stats->json.dump().c_str());
      } else {
        printf("%s", FormatStatsReport(stats->snapshot).c_str());
      }
      return absl::OkStatus();
    }
    case Command::Kind::kStatsStream: {
      for (int n = 0; command.count == 0 || n < command.count; ++n) {
        if (n > 0) {
          std::this_thread::sleep_for(std::chrono::duration<double>(command.interval_s));
        }
        absl::StatusOr<StatsReply> stats = RequestStats(command.socket_path);
        if (!stats.ok()) return stats.status();
        if (command.json) {
          printf("%s\n", stats->json.dump().c_str());
        } else {
          printf("%s%s", n > 0 ? "\n" : "", FormatStatsReport(stats->snapshot).c_str());
        }
        fflush(stdout);
      }
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("not a client command");
  }
}

}  // namespace loehle
