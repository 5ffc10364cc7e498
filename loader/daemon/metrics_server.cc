#include "loader/daemon/metrics_server.h"

#include <arpa/inet.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "loader/core/counters.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "loehle/intf.h"

#if LOEHLE_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace loehle {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string LabelText(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", labels[i].first, "=\"",
                    EscapeLabelValue(labels[i].second), "\"");
  }
  return out + "}";
}

// Families are written in one block each: a scrape is grouped by family,
// whatever order the samples come in.
class Exposition {
 public:
  void Sample(const std::string& family, const char* type, const std::string& help,
              const Labels& labels, const std::string& value) {
    Family& f = Find(family, type, help);
    absl::StrAppend(&f.samples, family, LabelText(labels), " ", value, "\n");
  }
  void Counter(const std::string& family, const std::string& help,
               const Labels& labels, uint64_t value) {
    Sample(family, "counter", help, labels, absl::StrCat(value));
  }
  std::string Text() const {
    std::string out;
    for (const Family& f : families_) {
      absl::StrAppend(&out, "# HELP ", f.name, " ", f.help, "\n# TYPE ",
                      f.name, " ", f.type, "\n", f.samples);
    }
    return out;
  }

 private:
  struct Family {
    std::string name, type, help, samples;
  };
  Family& Find(const std::string& name, const char* type, const std::string& help) {
    for (Family& f : families_) {
      if (f.name == name) return f;
    }
    families_.push_back({name, type, help, ""});
    return families_.back();
  }
  std::vector<Family> families_;
};

bool IsLoopback(const std::string& host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  return false;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

void AddDaemonFamilies(const StatsSnapshot& stats, Exposition& x) {
  x.Sample("scx_loehle_info", "gauge",
           "The scheduler daemon; labels say kernel, sched_ext state and ops.",
           {{"kernel", stats.kernel}, {"state", stats.state}, {"ops", stats.ops}},
           "1");
  x.Sample("scx_loehle_uptime_seconds", "gauge",
           "Seconds since the daemon started.", {},
           absl::StrFormat("%.3f", stats.uptime_s));
  x.Sample("scx_loehle_generation", "gauge",
           "The current configuration generation.", {},
           absl::StrCat(stats.generation));
  x.Counter("scx_loehle_events_received_total",
            "Pick events the daemon drained from the BPF ring buffer.", {},
            stats.events.received);
  for (const ProgramStats& program : stats.programs) {
    const Labels labels = {{"callback", program.name}};
    x.Counter("scx_loehle_callback_runs_total", "Runs of each BPF program.",
              labels, program.run_count);
    const uint64_t ns = program.run_time_ns;
    x.Sample("scx_loehle_callback_run_time_seconds_total", "counter",
             "Time spent in each BPF program.", labels,
             absl::StrFormat("%d.%09d", ns / 1000000000, ns % 1000000000));
  }
}

// The ranged counters become one family each with the range as a label;
// the scalar ones a family of their own, described by their metadata.
void AddCounterFamilies(const GenerationSnapshot& generation, const Labels& base,
                        Exposition& x) {
  auto with = [&base](const char* key, std::string value) {
    Labels labels = base;
    labels.emplace_back(key, std::move(value));
    return labels;
  };
  for (uint32_t path = 0; path < LOEHLE_NR_PATHS; ++path) {
    x.Counter("scx_loehle_selects_total", "select_cpu calls by path.",
              with("path", std::string(PathName(path))),
              generation.stats.Get(SelectStat(path)));
  }
  for (uint32_t reason = 0; reason < LOEHLE_NR_REASONS; ++reason) {
    x.Counter("scx_loehle_picks_total", "Picks by reason.",
              with("reason", std::string(ReasonName(reason))),
              generation.stats.Get(PickStat(reason)));
  }
  for (uint32_t bucket = 0; bucket < LOEHLE_TIE_BUCKETS; ++bucket) {
    x.Counter("scx_loehle_tie_groups_total",
              "Slow-path tie groups by size bucket.",
              with("size", TieBucketLabel(bucket, '_')),
              generation.stats.Get(TieHistStat(bucket)));
  }
  for (uint32_t i = LOEHLE_STAT_CANDIDATES; i < LOEHLE_NR_STATS; ++i) {
    const CounterInfo info = CounterInfoFor(i);
    x.Counter(absl::StrCat("scx_loehle_", info.name, "_total"),
              absl::StrCat(info.description, " (", info.unit, ")."), base,
              generation.stats.Get(i));
  }
}

void AddForkPicks(const GenerationSnapshot& generation, const Labels& base,
                  const TopologyInfo& topology, Exposition& x) {
  const std::vector<uint64_t>& forks = generation.stats.fork_picks;
  for (size_t cpu = 0; cpu < forks.size(); ++cpu) {
    Labels labels = base;
    labels.emplace_back("cpu", absl::StrCat(cpu));
    if (cpu < topology.cpus.size()) {
      const CpuInfo& info = topology.cpus[cpu];
      labels.emplace_back("node", absl::StrCat(info.node));
      labels.emplace_back("llc", absl::StrCat(info.llc));
      labels.emplace_back("core", absl::StrCat(info.core));
    }
    x.Counter("scx_loehle_fork_picks_total", "Fork placements by target CPU.",
              labels, forks[cpu]);
  }
}

}  // namespace

std::string FormatMetrics(const StatsSnapshot& stats) {
  Exposition x;
  AddDaemonFamilies(stats, x);
  for (const GenerationSnapshot& generation : stats.generations) {
    const Labels base = {
        {"generation", absl::StrCat(generation.generation())},
        {"policy", std::string(PolicyName(generation.settings.policy))},
        {"sched_idle", std::string(SchedIdleModeName(generation.settings.sched_idle))},
        {"smt", std::string(SmtModeName(generation.settings.smt))},
        {"sched_idle_scope",
         std::string(SchedIdleScopeName(generation.settings.sched_idle_scope))}};
    AddCounterFamilies(generation, base, x);
    AddForkPicks(generation, base, stats.topology, x);
  }
  return x.Text();
}

absl::StatusOr<MetricsAddress> ParseMetricsAddress(std::string_view text,
                                                   bool allow_remote) {
  MetricsAddress address;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("]:");
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metrics-addr wants HOST:PORT or [IPV6]:PORT, got \"", std::string(text), "\""));
    }
    address.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 ||
        text.substr(0, colon).find(':') != std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--metrics-addr wants HOST:PORT or [IPV6]:PORT, got \"", std::string(text), "\""));
    }
    address.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  }
  uint32_t number;
  if (address.host.empty() ||
      !absl::SimpleAtoi(absl::string_view(port.data(), port.size()), &number) ||
      number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-addr wants HOST:PORT with a port in 0..65535, got \"", std::string(text), "\""));
  }
  address.port = static_cast<int>(number);
  if (!allow_remote && !IsLoopback(address.host)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--metrics-addr ", address.host,
        " is not a loopback address; the metrics reveal the machine's workload "
        "(pass --metrics-allow-remote to serve them anyway)"));
  }
  return address;
}

#if LOEHLE_HAVE_HTTPLIB
struct MetricsServer::Impl {
  httplib::Server server;
};
#else
struct MetricsServer::Impl {};
#endif

MetricsServer::MetricsServer() : impl_(std::make_unique<Impl>()) {}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    const MetricsAddress& address) {
#if LOEHLE_HAVE_HTTPLIB
  auto self = std::unique_ptr<MetricsServer>(new MetricsServer());
  httplib::Server& server = self->impl_->server;
  // Two workers are plenty for a scraper or two; httplib's default pool has
  // one thread per CPU.
  server.new_task_queue = [] { return new httplib::ThreadPool(2); };
  MetricsServer* raw = self.get();
  server.Get("/metrics", [raw](const httplib::Request&, httplib::Response& res) {
    std::string body = raw->Scrape();
    if (body.empty()) {
      res.status = 503;
      res.set_content("no statistics yet\n", "text/plain; charset=utf-8");
      return;
    }
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  int port = address.port;
  if (port == 0) {
    port = server.bind_to_any_port(address.host);
    if (port < 0) port = -1;
  } else if (!server.bind_to_port(address.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for metrics on ", address.host, ":", address.port));
  }
  self->port_ = port;
  self->thread_ = std::thread([raw] { raw->impl_->server.listen_after_bind(); });
  return self;
#else
  (void)address;
  return absl::UnimplementedError(
      "this scx_loehle was built without cpp-httplib: no --metrics-addr");
#endif
}

MetricsServer::~MetricsServer() {
#if LOEHLE_HAVE_HTTPLIB
  impl_->server.stop();
#endif
  {
    // Release a scrape that waits for a snapshot that will not come.
    std::lock_guard<std::mutex> lock(mu_);
    published_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

bool MetricsServer::SnapshotWanted() {
  std::lock_guard<std::mutex> lock(mu_);
  return wanted_;
}

void MetricsServer::Publish(StatsSnapshot stats) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(stats);
  ++serial_;
  wanted_ = false;
  published_.notify_all();
}

std::string MetricsServer::Scrape() {
  StatsSnapshot snapshot;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const uint64_t seen = serial_;
    wanted_ = true;
    published_.wait_for(lock, kSnapshotWait, [&] { return serial_ != seen; });
    if (serial_ == 0) return "";
    snapshot = snapshot_;
  }
  return FormatMetrics(snapshot);
}

}  // namespace loehle
