#include "loader/daemon/control_service.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "loader/net/json_lines_testing.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

using ::loehle::test_support::ServerThread;
using ::loehle::test_support::TempDir;

using ::nlohmann::json;
using ::testing::HasSubstr;

class FakeHandler : public ControlHandler {
 public:
  json HandleGet() override { return json{{"policy", "reservoir"}}; }
  absl::StatusOr<json> HandleSet(const json& args) override {
    if (args.contains("fail")) {
      return absl::InvalidArgumentError("setting \"fail\" is\nbad");
    }
    last_set = args;
    return json{{"applied", args}};
  }
  json HandleStats(StatsScope scope) override {
    return scope == StatsScope::kCurrent ? json{{"stats_calls", ++stats_calls}, {"current_only", true}}
                        : json{{"stats_calls", ++stats_calls}};
  }

  json last_set;
  int stats_calls = 0;
};

// A hand-driven client that pumps the server on the test's thread while it
// waits, so that no thread is needed.
class RawClient {
 public:
  RawClient(const std::string& path, JsonLineServer* server)
      : server_(server),
        fd_(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
  }
  ~RawClient() { Close(); }
  bool connected() const { return connected_; }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }

  void Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n =
          send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else {
        ASSERT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK)
            << std::strerror(errno);
        server_->Poll(5);
      }
    }
  }

  // The next reply line, or nullopt on EOF or after two seconds.
  std::optional<std::string> ReadLine() {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      const size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      char chunk[4096];
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), MSG_DONTWAIT);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
      } else if (n == 0) {
        return std::nullopt;
      } else {
        server_->Poll(5);
      }
    }
    return std::nullopt;
  }

  json Ask(std::string_view line) {
    Send(line);
    std::optional<std::string> reply = ReadLine();
    if (!reply) return json("no reply");
    return json::parse(*reply, nullptr, false);
  }

  // True when the server has closed the connection (after any pending data).
  bool SeesEof() {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      char chunk[4096];
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
      server_->Poll(5);
    }
    return false;
  }

 private:
  JsonLineServer* server_;
  int fd_;
  bool connected_ = false;
  std::string buffer_;
};

json Error(const std::string& message) {
  return json{{"ok", false}, {"error", message}};
}

class ControlServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/control.sock";
    absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
        ListenForControl(path_, &handler_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  TempDir dir_;
  std::string path_;
  FakeHandler handler_;
  std::unique_ptr<JsonLineServer> server_;
};

TEST_F(ControlServiceTest, GetSetStatsRoundTrip) {
  ServerThread thread(server_.get());
  absl::StatusOr<json> reply = JsonRequest(path_, json{{"cmd", "get"}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply,
            json::parse(R"({"ok":true,"result":{"policy":"reservoir"}})"));

  reply = JsonRequest(
      path_, json::parse(R"({"cmd":"set","args":{"slice_us":100}})"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(
      *reply,
      json::parse(R"({"ok":true,"result":{"applied":{"slice_us":100}}})"));

  reply = JsonRequest(path_, json{{"cmd", "stats"}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, json::parse(R"({"ok":true,"result":{"stats_calls":1}})"));

  reply = JsonRequest(path_, json{{"cmd", "stats"}, {"generations", "current"}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, json::parse(
                        R"({"ok":true,"result":{"stats_calls":2,"current_only":true}})"));
  reply = JsonRequest(path_, json{{"cmd", "stats"}, {"generations", "all"}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, json::parse(R"({"ok":true,"result":{"stats_calls":3}})"));
  reply = JsonRequest(path_, json{{"cmd", "stats"}, {"generations", 2}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, Error("\"generations\" must be \"all\" or \"current\""));

  reply =
      JsonRequest(path_, json::parse(R"({"cmd":"set","args":{"fail":1}})"));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, Error("setting \"fail\" is bad"));
}

TEST_F(ControlServiceTest, BadRequestsGetErrorsAndTheConnectionCarriesOn) {
  RawClient client(path_, server_.get());
  ASSERT_TRUE(client.connected());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"cmd\":\n", "malformed JSON request"},
      {"not json\n", "malformed JSON request"},
      {"[1,2]\n", "a request must be a JSON object such as {\"cmd\":\"get\"}"},
      {"\"get\"\n",
       "a request must be a JSON object such as {\"cmd\":\"get\"}"},
      {"{}\n", "missing \"cmd\" (expected get, set, stats or events)"},
      {"{\"cmd\":7}\n", "\"cmd\" must be a string (get, set, stats or events)"},
      {"{\"cmd\":\"reboot\"}\n",
       "unknown cmd \"reboot\" (expected get, set, stats or events)"},
      {"{\"cmd\":\"set\"}\n", "\"set\" needs an \"args\" object"},
      {"{\"cmd\":\"set\",\"args\":[1]}\n", "\"set\" needs an \"args\" object"},
      {"{\"cmd\":\"set\",\"args\":{\"fail\":true}}\n",
       "setting \"fail\" is bad"},
  };
  for (const auto& [request, error] : cases) {
    EXPECT_EQ(client.Ask(request), Error(error)) << request;
    EXPECT_EQ(client.Ask("{\"cmd\":\"get\"}\n"),
              json::parse(R"({"ok":true,"result":{"policy":"reservoir"}})"))
        << "after " << request;
  }
  EXPECT_EQ(server_->client_count(), 1u);
}

// Every line is answered, blank ones too: a client never waits for a reply
// that does not come.
TEST_F(ControlServiceTest, BlankLinesGetAnErrorAndPipelinedRequestsAnswered) {
  RawClient client(path_, server_.get());
  client.Send("\n  \r\n{\"cmd\":\"stats\"}\r\n{\"cmd\":\"stats\"}\n{\"cmd\":");
  EXPECT_EQ(client.ReadLine(), R"({"error":"empty request line","ok":false})");
  EXPECT_EQ(client.ReadLine(), R"({"error":"empty request line","ok":false})");
  EXPECT_EQ(client.ReadLine(), R"({"ok":true,"result":{"stats_calls":1}})");
  EXPECT_EQ(client.ReadLine(), R"({"ok":true,"result":{"stats_calls":2}})");
  client.Send("\"set\",\"args\":{\"smt\":\"off\"}}\n");
  EXPECT_EQ(client.ReadLine(),
            R"({"ok":true,"result":{"applied":{"smt":"off"}}})");
  EXPECT_EQ(handler_.last_set, json::parse(R"({"smt":"off"})"));
}

TEST_F(ControlServiceTest, OversizedLineGetsOneErrorAndIsDiscarded) {
  RawClient client(path_, server_.get());
  // Arriving in pieces, without a newline for a while.
  client.Send(std::string(JsonLineServer::kMaxRequestLine, 'x'));
  client.Send(std::string(1000, 'y'));
  EXPECT_EQ(client.ReadLine(),
            R"({"error":"request line longer than 65536 bytes","ok":false})");
  client.Send(std::string(100000, 'z') + "\n{\"cmd\":\"get\"}\n");
  EXPECT_EQ(client.ReadLine(),
            R"({"ok":true,"result":{"policy":"reservoir"}})");

  // A complete oversized line in one piece; exactly the limit is fine.
  const std::string padded_get =
      "{\"cmd\":\"get\"}" +
      std::string(JsonLineServer::kMaxRequestLine - 13, ' ');
  ASSERT_EQ(padded_get.size(), JsonLineServer::kMaxRequestLine);
  client.Send(padded_get + "\n" + padded_get + " \n{\"cmd\":\"stats\"}\n");
  EXPECT_EQ(client.ReadLine(),
            R"({"ok":true,"result":{"policy":"reservoir"}})");
  EXPECT_EQ(client.ReadLine(),
            R"({"error":"request line longer than 65536 bytes","ok":false})");
  EXPECT_EQ(client.ReadLine(), R"({"ok":true,"result":{"stats_calls":1}})");
}

TEST_F(ControlServiceTest, HalfClosedClientStillGetsItsReply) {
  RawClient client(path_, server_.get());
  client.Send("{\"cmd\":\"stats\"}\n{\"cmd\":\"get\"}");  // no final newline
  client.ShutdownWrite();
  EXPECT_EQ(client.ReadLine(), R"({"ok":true,"result":{"stats_calls":1}})");
  EXPECT_EQ(client.ReadLine(),
            R"({"ok":true,"result":{"policy":"reservoir"}})");
  EXPECT_TRUE(client.SeesEof());
  server_->Poll(0);
  EXPECT_EQ(server_->client_count(), 0u);
}

// The daemon's event ring asks to be read through wake_fd: Poll returns at
// once instead of waiting out its timeout (60 s here; the test would time
// out instead of failing slowly if the fd were ignored).
TEST_F(ControlServiceTest, WakeFdEndsThePollEarly) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  const auto start = std::chrono::steady_clock::now();
  const int wake[] = {-1, fds[0]};
  server_->Poll(60000, wake);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  close(fds[0]);
  close(fds[1]);
}

TEST_F(ControlServiceTest, DisconnectedClientsAreCleanedUp) {
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 5; ++i) {
    clients.push_back(std::make_unique<RawClient>(path_, server_.get()));
    ASSERT_TRUE(clients.back()->connected());
  }
  for (int i = 0; i < 20 && server_->client_count() < 5; ++i) server_->Poll(5);
  EXPECT_EQ(server_->client_count(), 5u);
  // One leaves with a request in flight: the reply has nowhere to go, which
  // must not raise SIGPIPE.
  clients[0]->Send("{\"cmd\":\"get\"}\n");
  clients[0]->Close();
  clients[1]->Close();
  for (int i = 0; i < 20 && server_->client_count() > 3; ++i) server_->Poll(5);
  EXPECT_EQ(server_->client_count(), 3u);
  EXPECT_EQ(clients[2]->Ask("{\"cmd\":\"stats\"}\n")["ok"], true);
}

TEST_F(ControlServiceTest, ClientsBeyondTheLimitAreTurnedAway) {
  std::vector<std::unique_ptr<RawClient>> clients;
  for (size_t i = 0; i < JsonLineServer::kMaxClients; ++i) {
    clients.push_back(std::make_unique<RawClient>(path_, server_.get()));
    ASSERT_TRUE(clients.back()->connected());
    server_->Poll(0);
  }
  EXPECT_EQ(server_->client_count(), JsonLineServer::kMaxClients);
  RawClient extra(path_, server_.get());
  ASSERT_TRUE(extra.connected());
  EXPECT_EQ(
      extra.ReadLine(),
      R"json({"error":"too many busy clients (at most 32)","ok":false})json");
  EXPECT_TRUE(extra.SeesEof());
  EXPECT_EQ(server_->client_count(), JsonLineServer::kMaxClients);
  EXPECT_EQ(clients.back()->Ask("{\"cmd\":\"get\"}\n")["ok"], true);
}

// A burst of connect-and-drop (socket_abuse's 1000) can fill every slot
// with peers that have hung up before the server read their EOFs; a new
// client is not turned away for them: they are settled first.
TEST_F(ControlServiceTest, HungUpClientsDoNotHoldSlots) {
  constexpr size_t kLive = JsonLineServer::kMaxClients / 2;
  std::vector<std::unique_ptr<RawClient>> live, dropped;
  for (size_t i = 0; i < kLive; ++i) {
    live.push_back(std::make_unique<RawClient>(path_, server_.get()));
    ASSERT_TRUE(live.back()->connected());
    server_->Poll(0);
  }
  ASSERT_EQ(server_->client_count(), kLive);
  // The other half connect, send half a line and hang up before the server
  // accepts them; the CLI's connection comes right behind them, in the
  // same accept batch.
  for (size_t i = kLive; i < JsonLineServer::kMaxClients; ++i) {
    dropped.push_back(std::make_unique<RawClient>(path_, server_.get()));
    ASSERT_TRUE(dropped.back()->connected());
    dropped.back()->Send("{\"cmd\":\"ge");
    dropped.back()->Close();
  }
  RawClient cli(path_, server_.get());
  ASSERT_TRUE(cli.connected());
  EXPECT_EQ(cli.Ask("{\"cmd\":\"get\"}\n")["ok"], true);
  EXPECT_EQ(server_->client_count(), kLive + 1);
}

// 32 idle connections do not lock the CLI out: once they have been idle a
// moment, a new client takes the slot of the one idle longest.
TEST_F(ControlServiceTest, IdleClientsMakeRoomForANewOne) {
  std::vector<std::unique_ptr<RawClient>> clients;
  for (size_t i = 0; i < JsonLineServer::kMaxClients; ++i) {
    clients.push_back(std::make_unique<RawClient>(path_, server_.get()));
    server_->Poll(0);
  }
  ASSERT_EQ(server_->client_count(), JsonLineServer::kMaxClients);
  // clients[0] stays busy; the others go idle.
  std::this_thread::sleep_for(JsonLineServer::kEvictableAfter / 2);
  EXPECT_EQ(clients[0]->Ask("{\"cmd\":\"get\"}\n")["ok"], true);
  std::this_thread::sleep_for(JsonLineServer::kEvictableAfter / 2 +
                              std::chrono::milliseconds(100));
  RawClient cli(path_, server_.get());
  EXPECT_EQ(cli.Ask("{\"cmd\":\"get\"}\n")["ok"], true);
  EXPECT_EQ(server_->client_count(), JsonLineServer::kMaxClients);
  // The idlest was clients[1]: told why, then closed.
  EXPECT_EQ(clients[1]->ReadLine(),
            R"({"error":"closed: idle, and a new client needed the slot","ok":false})");
  EXPECT_TRUE(clients[1]->SeesEof());
  EXPECT_EQ(clients[0]->Ask("{\"cmd\":\"get\"}\n")["ok"], true);
}

TEST_F(ControlServiceTest, ClientsIdleForTheTimeoutAreClosed) {
  server_->set_idle_timeout(std::chrono::milliseconds(100));
  RawClient idle(path_, server_.get());
  RawClient busy(path_, server_.get());
  for (int i = 0; i < 20 && server_->client_count() < 2; ++i) server_->Poll(5);
  ASSERT_EQ(server_->client_count(), 2u);
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    EXPECT_EQ(busy.Ask("{\"cmd\":\"get\"}\n")["ok"], true);
  }
  EXPECT_EQ(idle.ReadLine(), R"({"error":"closed: idle for too long","ok":false})");
  EXPECT_TRUE(idle.SeesEof());
  EXPECT_EQ(server_->client_count(), 1u);
}

// Sends `bytes` one at a time 60 ms apart (never idle for long), then
// waits: with a 400 ms line deadline the server must close the client with
// the deadline's reason.
void ExpectCutOffAfterTrickling(RawClient& client, const std::string& bytes,
                                JsonLineServer* server) {
  for (const char c : bytes) {
    client.Send(std::string(1, c));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    server->Poll(1);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(client.ReadLine(),
            R"({"error":"closed: a request line took longer than 400 ms","ok":false})");
  EXPECT_TRUE(client.SeesEof());
}

// A client trickling a request a byte at a time (well inside the idle
// timeout between bytes) is closed once its line is older than the
// deadline; a client that finishes its lines in time is not.
TEST_F(ControlServiceTest, ALineMustCompleteWithinTheDeadline) {
  server_->set_line_deadline(std::chrono::milliseconds(400));
  RawClient trickle(path_, server_.get());
  RawClient prompt(path_, server_.get());
  for (int i = 0; i < 20 && server_->client_count() < 2; ++i) server_->Poll(5);
  ASSERT_EQ(server_->client_count(), 2u);
  ExpectCutOffAfterTrickling(trickle, "{\"cm", server_.get());
  // Complete lines, even many in a row, never trip it.
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_EQ(prompt.Ask("{\"cmd\":\"get\"}\n")["ok"], true);
  }
  EXPECT_EQ(server_->client_count(), 1u);
}

// An oversized line being discarded is still one line: trickling its tail
// does not hold the slot past the deadline either.
TEST_F(ControlServiceTest, AnOversizedLineMustEndWithinTheDeadlineToo) {
  server_->set_line_deadline(std::chrono::milliseconds(400));
  RawClient trickle(path_, server_.get());
  trickle.Send(std::string(JsonLineServer::kMaxRequestLine + 10, 'x'));
  EXPECT_EQ(trickle.ReadLine(),
            R"({"error":"request line longer than 65536 bytes","ok":false})");
  ExpectCutOffAfterTrickling(trickle, "xxxx", server_.get());
}

TEST_F(ControlServiceTest, SocketModeIs0600) {
  struct stat st;
  ASSERT_EQ(lstat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(ControlServiceTest, LiveSocketIsRefused) {
  FakeHandler other;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> second =
      ListenForControl(path_, &other);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "another process is already serving " + path_);
  // The refusal left the live socket alone.
  RawClient client(path_, server_.get());
  EXPECT_EQ(client.Ask("{\"cmd\":\"get\"}\n")["ok"], true);
}

TEST_F(ControlServiceTest, DestructorRemovesTheSocket) {
  server_.reset();
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(ControlServiceTest, DestructorLeavesAReplacementAlone) {
  // Somebody removed our socket and another server took the path.
  ASSERT_EQ(unlink(path_.c_str()), 0);
  FakeHandler other;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> second =
      ListenForControl(path_, &other);
  ASSERT_TRUE(second.ok()) << second.status();
  server_.reset();
  EXPECT_TRUE(std::filesystem::exists(path_));
}

TEST_F(ControlServiceTest, PeersOtherThanRootOrOwnerAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another uid";
  constexpr uid_t kNobody = 65534;
  // Let the other uid reach the socket so that the credential check, not the
  // file mode, is what refuses it.
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod(path_.c_str(), 0666), 0);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    std::string result = "setuid failed";
    if (setresgid(kNobody, kNobody, kNobody) == 0 &&
        setresuid(kNobody, kNobody, kNobody) == 0) {
      absl::StatusOr<json> reply =
          JsonRequest(path_, json{{"cmd", "get"}}, 2000);
      result =
          reply.ok() ? reply->dump() : std::string(reply.status().message());
    }
    (void)!write(pipe_fds[1], result.data(), result.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  int status = 0;
  for (int i = 0; i < 400 && waitpid(child, &status, WNOHANG) == 0; ++i) {
    server_->Poll(5);
  }
  std::string result;
  char buffer[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
    result.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  EXPECT_EQ(json::parse(result, nullptr, false),
            Error("permission denied: uid 65534 is neither root nor the "
                  "scheduler's owner"))
      << result;
  EXPECT_EQ(server_->client_count(), 0u);
}

TEST(ControlListenTest, StaleSocketIsReplaced) {
  TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  {
    // A socket file nobody listens on, as a crashed scheduler leaves behind.
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
              0);
    close(fd);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  FakeHandler handler;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
      ListenForControl(path, &handler);
  ASSERT_TRUE(server.ok()) << server.status();
  ServerThread thread(server->get());
  absl::StatusOr<json> reply = JsonRequest(path, json{{"cmd", "get"}});
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ((*reply)["ok"], true);
}

TEST(ControlListenTest, RegularFileIsNotReplaced) {
  TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  std::ofstream(path) << "precious";
  FakeHandler handler;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
      ListenForControl(path, &handler);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(server.status().message(), HasSubstr("is not a socket"));
  std::ifstream in(path);
  std::string contents;
  in >> contents;
  EXPECT_EQ(contents, "precious");
}

TEST(ControlListenTest, MissingParentDirectoryAndLongPath) {
  FakeHandler handler;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
      ListenForControl("/nonexistent-loehle-dir/control.sock", &handler);
  EXPECT_EQ(server.status().message(),
            "cannot bind /nonexistent-loehle-dir/control.sock: No such file or "
            "directory");
  server = ListenForControl("/tmp/" + std::string(200, 'a'), &handler);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ControlRequestTest, MissingSocketSaysWhatToCheck) {
  TempDir dir;
  const std::string path = dir.path() + "/absent.sock";
  absl::StatusOr<json> reply = JsonRequest(path, json{{"cmd", "get"}});
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(reply.status().message(),
            "cannot connect to " + path +
                ": No such file or directory (is scx_loehle running?)");
}

TEST(ControlRequestTest, TimesOutWhenNobodyAnswers) {
  TempDir dir;
  const std::string path = dir.path() + "/control.sock";
  FakeHandler handler;
  absl::StatusOr<std::unique_ptr<JsonLineServer>> server =
      ListenForControl(path, &handler);
  ASSERT_TRUE(server.ok()) << server.status();
  // Nobody calls Poll: the connection sits in the backlog.
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<json> reply = JsonRequest(path, json{{"cmd", "get"}}, 200);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(reply.status().message(),
            "no reply from " + path + " within 200 ms");
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

}  // namespace
}  // namespace loehle
