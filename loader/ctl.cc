#include "loader/ctl.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "loader/control.h"
#include "loader/options.h"

namespace loehle {
absl::StatusOr<nlohmann::json> RequestResult(const std::string& socket,
                                             const nlohmann::json& request) {
  absl::StatusOr<nlohmann::json> reply = ControlRequest(socket, request);
  if (!reply.ok()) return reply.status();
  if (!reply->is_object() || !reply->value("ok", false)) {
    std::string error = reply->is_object()
                            ? reply->value("error", std::string("malformed reply"))
                            : std::string("malformed reply");
    return absl::FailedPreconditionError(absl::StrCat("scheduler refused: ", error));
  }
  return reply->contains("result") ? (*reply)["result"] : nlohmann::json::object();
}

namespace {

absl::StatusOr<nlohmann::json> Request(const std::string& socket,
                                       const nlohmann::json& request) {
  return RequestResult(socket, request);
}

std::string DescribeGet(const nlohmann::json& result) {
  const nlohmann::json& s = result["settings"];
  return absl::StrCat(
      "generation ", result.value("generation", 0u), ": policy=",
      s.value("policy", ""), " sched-idle=", s.value("sched_idle", ""),
      " smt=", s.value("smt", ""), " slice-us=", s.value("slice_us", 0u),
      " claim-retries=", s.value("claim_retries", 0u),
      " sample-every=", s.value("sample_every", 0u), " (state ",
      result.value("state", "?"), ", ops ", result.value("ops", "?"), ")");
}

uint64_t Counter(const nlohmann::json& counters, const std::string& name) {
  auto it = counters.find(name);
  return it != counters.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

}  // namespace

std::string FormatStatsReport(const nlohmann::json& stats) {
  std::string out = absl::StrFormat(
      "kernel %s, sched_ext %s (%s), up %.1f s, generation %u, events %u\n",
      stats.value("kernel", "?"), stats.value("state", "?"),
      stats.value("ops", "?"), stats.value("uptime_s", 0.0),
      stats.value("generation", 0u),
      stats.contains("events") ? stats["events"].value("received", 0u) : 0u);
  for (const nlohmann::json& gen : stats.value("generations", nlohmann::json::array())) {
    const nlohmann::json& s = gen["settings"];
    const nlohmann::json& c = gen["counters"];
    const nlohmann::json& d = gen["derived"];
    absl::StrAppendFormat(
        &out, "gen %u %s/%s/%s: select fork %u wakeup %u sync %u\n",
        gen.value("generation", 0u), s.value("policy", ""),
        s.value("sched_idle", ""), s.value("smt", ""),
        Counter(c, "select_fork"), Counter(c, "select_wakeup"),
        Counter(c, "select_sync"));
    std::vector<std::string> reasons;
    for (const auto& [name, value] : c.items()) {
      if (name.rfind("pick_", 0) == 0 && value.get<uint64_t>() > 0) {
        reasons.push_back(absl::StrCat(name.substr(5), " ", value.get<uint64_t>()));
      }
    }
    absl::StrAppend(&out, "  picks: ",
                    reasons.empty() ? "none" : absl::StrJoin(reasons, ", "), "\n");
    absl::StrAppendFormat(
        &out,
        "  claims %u, failures %u (%.3f%%), retries %u; sched-idle preempt %u, "
        "packing %u, busy-sibling picks %u\n",
        Counter(c, "claim_attempts"), Counter(c, "claim_failures"),
        100.0 * d.value("claim_failure_rate", 0.0), Counter(c, "claim_retries"),
        Counter(c, "sched_idle_preempt"), Counter(c, "packing"),
        Counter(c, "busy_sibling_pick"));
    absl::StrAppendFormat(
        &out,
        "  scans skipped %u, sched-idle claims lost %u, cpu releases %u, "
        "smt moves %u, idle dispatches %u, idle turns %u, events %u, "
        "event drops %u\n",
        Counter(c, "scan_skipped"), Counter(c, "si_claim_lost"),
        Counter(c, "cpu_release"), Counter(c, "smt_move"),
        Counter(c, "dispatch_idle"), Counter(c, "idle_turn"),
        Counter(c, "events"), Counter(c, "event_drops"));
    std::vector<std::string> picks;
    for (const nlohmann::json& n : gen.value("fork_picks", nlohmann::json::array())) {
      picks.push_back(absl::StrCat(n.get<uint64_t>()));
    }
    absl::StrAppendFormat(
        &out, "  fork picks per CPU [%s]: cv %.3f, chi-square %.1f, max %u, min %u\n",
        absl::StrJoin(picks, " "), d.value("fork_spread_cv", 0.0),
        d.value("fork_chi_square", 0.0), d.value("fork_max", 0u),
        d.value("fork_min", 0u));
  }
  return out;
}

absl::Status RunCtl(const Command& command) {
  switch (command.kind) {
    case Command::Kind::kCtlGet: {
      absl::StatusOr<nlohmann::json> r = Request(command.socket_path, {{"cmd", "get"}});
      if (!r.ok()) return r.status();
      printf("%s\n", DescribeGet(*r).c_str());
      return absl::OkStatus();
    }
    case Command::Kind::kCtlSet: {
      absl::StatusOr<nlohmann::json> r = Request(
          command.socket_path, {{"cmd", "set"}, {"args", command.changes}});
      if (!r.ok()) return r.status();
      printf("%s\n", DescribeGet(*r).c_str());
      return absl::OkStatus();
    }
    case Command::Kind::kCtlSend: {
      absl::StatusOr<nlohmann::json> reply =
          ControlRequestLine(command.socket_path, command.raw_request);
      if (!reply.ok()) return reply.status();
      printf("%s\n", reply->dump().c_str());
      if (!reply->is_object() || !reply->value("ok", false)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "scheduler refused: ",
            reply->is_object() ? reply->value("error", std::string("?")) : "?"));
      }
      return absl::OkStatus();
    }
    case Command::Kind::kCtlStats: {
      absl::StatusOr<nlohmann::json> r = Request(command.socket_path, {{"cmd", "stats"}});
      if (!r.ok()) return r.status();
      if (command.json) {
        printf("%s\n", r->dump().c_str());
      } else {
        printf("%s", FormatStatsReport(*r).c_str());
      }
      return absl::OkStatus();
    }
    case Command::Kind::kStatsStream: {
      for (int n = 0; command.count == 0 || n < command.count; ++n) {
        if (n > 0) {
          std::this_thread::sleep_for(std::chrono::duration<double>(command.interval_s));
        }
        absl::StatusOr<nlohmann::json> r =
            Request(command.socket_path, {{"cmd", "stats"}});
        if (!r.ok()) return r.status();
        printf("%s\n", r->dump().c_str());
        fflush(stdout);
      }
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("not a client command");
  }
}

}  // namespace loehle
