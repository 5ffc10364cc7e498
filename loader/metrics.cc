#include "loader/metrics.h"

#include <arpa/inet.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

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

uint64_t UnsignedOf(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value.get<int64_t>());
  }
  return 0;
}

std::string StringOf(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Families are written in one block each: a scrape is grouped by family,
// whatever order the samples come in.
class Exposition {
 public:
  void Sample(const std::string& family, const char* type, const char* help,
              const Labels& labels, const std::string& value) {
    Family& f = Find(family, type, help);
    absl::StrAppend(&f.samples, family, LabelText(labels), " ", value, "\n");
  }
  void Counter(const std::string& family, const char* help,
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
  Family& Find(const std::string& name, const char* type, const char* help) {
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

std::string FormatMetrics(const nlohmann::json& stats) {
  Exposition x;
  if (!stats.is_object()) return "";
  x.Sample("scx_loehle_info", "gauge",
           "The scheduler daemon; labels say kernel, sched_ext state and ops.",
           {{"kernel", StringOf(stats, "kernel")},
            {"state", StringOf(stats, "state")},
            {"ops", StringOf(stats, "ops")}},
           "1");
  if (stats.contains("uptime_s") && stats["uptime_s"].is_number()) {
    x.Sample("scx_loehle_uptime_seconds", "gauge",
             "Seconds since the daemon started.", {},
             absl::StrFormat("%.3f", stats["uptime_s"].get<double>()));
  }
  if (stats.contains("generation")) {
    x.Sample("scx_loehle_generation", "gauge",
             "The current configuration generation.", {},
             absl::StrCat(UnsignedOf(stats["generation"])));
  }

  // CPU id -> topology labels, for fork_picks.
  std::vector<Labels> cpu_labels;
  if (stats.contains("topology") && stats["topology"].is_object()) {
    for (const nlohmann::json& cpu :
         stats["topology"].value("cpus", nlohmann::json::array())) {
      const uint64_t id = UnsignedOf(cpu.value("cpu", nlohmann::json(0)));
      if (id >= 4096) continue;
      if (cpu_labels.size() <= id) cpu_labels.resize(id + 1);
      cpu_labels[id] = {{"cpu", absl::StrCat(id)},
                        {"node", absl::StrCat(UnsignedOf(cpu.value("node", nlohmann::json(0))))},
                        {"llc", absl::StrCat(UnsignedOf(cpu.value("llc", nlohmann::json(0))))},
                        {"core", absl::StrCat(UnsignedOf(cpu.value("core", nlohmann::json(0))))}};
    }
  }

  for (const nlohmann::json& gen :
       stats.value("generations", nlohmann::json::array())) {
    if (!gen.is_object()) continue;
    const nlohmann::json settings = gen.value("settings", nlohmann::json::object());
    const Labels base = {
        {"generation", absl::StrCat(UnsignedOf(gen.value("generation", nlohmann::json(0))))},
        {"policy", StringOf(settings, "policy")},
        {"sched_idle", StringOf(settings, "sched_idle")},
        {"smt", StringOf(settings, "smt")}};
    auto with = [&base](const char* key, const std::string& value) {
      Labels labels = base;
      labels.emplace_back(key, value);
      return labels;
    };
    const nlohmann::json counters = gen.value("counters", nlohmann::json::object());
    for (const auto& [name, value] : counters.items()) {
      const uint64_t n = UnsignedOf(value);
      if (name.rfind("select_", 0) == 0) {
        x.Counter("scx_loehle_selects_total", "select_cpu calls by path.",
                  with("path", name.substr(7)), n);
      } else if (name.rfind("pick_", 0) == 0) {
        x.Counter("scx_loehle_picks_total", "Picks by reason.",
                  with("reason", name.substr(5)), n);
      } else if (name.rfind("tie_hist_", 0) == 0) {
        x.Counter("scx_loehle_tie_groups_total",
                  "Slow-path tie groups by size bucket.",
                  with("size", name.substr(9)), n);
      } else {
        x.Counter(absl::StrCat("scx_loehle_", name, "_total"),
                  "The counter of the same name (Documentation/stats.md).",
                  base, n);
      }
    }
    const nlohmann::json forks = gen.value("fork_picks", nlohmann::json::array());
    for (size_t cpu = 0; cpu < forks.size(); ++cpu) {
      Labels labels = base;
      if (cpu < cpu_labels.size() && !cpu_labels[cpu].empty()) {
        labels.insert(labels.end(), cpu_labels[cpu].begin(), cpu_labels[cpu].end());
      } else {
        labels.emplace_back("cpu", absl::StrCat(cpu));
      }
      x.Counter("scx_loehle_fork_picks_total", "Fork placements by target CPU.",
                labels, UnsignedOf(forks[cpu]));
    }
  }

  if (stats.contains("events") && stats["events"].is_object()) {
    x.Counter("scx_loehle_events_received_total",
              "Pick events the daemon drained from the BPF ring buffer.", {},
              UnsignedOf(stats["events"].value("received", nlohmann::json(0))));
  }
  for (const nlohmann::json& prog :
       stats.value("programs", nlohmann::json::array())) {
    const Labels labels = {{"callback", StringOf(prog, "name")}};
    x.Counter("scx_loehle_callback_runs_total", "Runs of each BPF program.",
              labels, UnsignedOf(prog.value("run_count", nlohmann::json(0))));
    const uint64_t ns = UnsignedOf(prog.value("run_time_ns", nlohmann::json(0)));
    x.Sample("scx_loehle_callback_run_time_seconds_total", "counter",
             "Time spent in each BPF program.", labels,
             absl::StrFormat("%d.%09d", ns / 1000000000, ns % 1000000000));
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

void MetricsServer::Publish(nlohmann::json stats) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(stats);
  ++serial_;
  wanted_ = false;
  published_.notify_all();
}

std::string MetricsServer::Scrape() {
  nlohmann::json snapshot;
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
