// JSON lines over UNIX stream sockets: a non-blocking server for the
// daemon's sockets and a one-shot request for their clients.
//
// A client sends one JSON value per line and gets one JSON object per line
// back. The server knows nothing of what the lines mean: a JsonLineProtocol
// answers them (daemon/control_service.h for /run/scx_loehle.sock,
// daemon/scx_stats_service.h for the scx_stats socket). Lines that are not
// JSON, blank or longer than kMaxRequestLine get the protocol's error reply
// and the connection carries on: every line is answered. Only root and the
// server's own effective uid may connect (SO_PEERCRED); anyone else gets one
// error reply and is disconnected.
//
// Limits per server: kMaxClients connections; a client that has sent
// nothing for idle_timeout() (and is owed no reply) is closed; when all
// slots are taken, a new client takes the slot of the one idle longest if
// that one has been idle for kEvictableAfter, so that idle connections
// never lock the CLI out. A client that lets kMaxPendingOutput of replies
// pile up unread is dropped; a request line is at most kMaxRequestLine and
// must be complete within line_deadline() of its first byte, so that a
// client trickling a byte a second cannot hold a slot for ever.

#ifndef LOEHLE_LOADER_NET_JSON_LINES_H_
#define LOEHLE_LOADER_NET_JSON_LINES_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"

namespace loehle {

// Replies are one line each; a status message may hold a newline.
std::string OneLine(std::string_view message);

// What a socket speaks: the server frames lines and checks peers, the
// protocol turns each request into its reply. Called from Poll's thread.
class JsonLineProtocol {
 public:
  virtual ~JsonLineProtocol() = default;
  // The reply to one request line that parsed as JSON (of any type).
  virtual nlohmann::json Answer(const nlohmann::json& request) = 0;
  // The reply that carries an error found before Answer could run (a line
  // that is not JSON or is too long, a refused peer); `message` is one line.
  virtual nlohmann::json ErrorReply(const std::string& message) = 0;
};

class JsonLineServer {
 public:
  // Longest request line accepted, excluding its newline.
  static constexpr size_t kMaxRequestLine = 64 * 1024;
  // Per server, over all its sockets.
  static constexpr size_t kMaxClients = 32;
  // A client that lets this much reply data pile up unread is dropped.
  static constexpr size_t kMaxPendingOutput = 1024 * 1024;
  // A full server turns away a new client unless one has been idle this long.
  static constexpr std::chrono::milliseconds kEvictableAfter{1000};
  static constexpr std::chrono::milliseconds kDefaultIdleTimeout{60000};
  static constexpr std::chrono::milliseconds kDefaultLineDeadline{10000};

  // Creates a UNIX stream socket at `path` with mode 0600 and listens on it
  // with `protocol`. A stale socket file (nothing accepts on it) is
  // replaced; a live one gives FailedPrecondition "another process is
  // already serving <path>"; a file that is not a socket is left alone
  // (FailedPrecondition). The parent directory must exist.
  static absl::StatusOr<std::unique_ptr<JsonLineServer>> Listen(
      const std::string& path, std::unique_ptr<JsonLineProtocol> protocol);
  // One more socket served by the same Poll, with the same rules.
  absl::Status AddListener(const std::string& path,
                           std::unique_ptr<JsonLineProtocol> protocol);

  JsonLineServer(const JsonLineServer&) = delete;
  JsonLineServer& operator=(const JsonLineServer&) = delete;
  // Closes every descriptor and removes the socket files, unless one has
  // been replaced by somebody else's in the meantime.
  ~JsonLineServer();

  // Waits up to timeout_ms (0: just look; negative: forever) for activity,
  // then accepts new clients, reads what they sent, answers every complete
  // line and writes what it can. All sockets are non-blocking, so a slow or
  // stuck client never holds Poll up beyond timeout_ms. Returns early when a
  // signal interrupts the wait, or when one of `wake_fds` becomes readable
  // (the daemon's event ring and signalfd); negative fds are ignored. Not
  // thread-safe: call it from one thread.
  void Poll(int timeout_ms, absl::Span<const int> wake_fds = {});

  // The first socket's path.
  const std::string& path() const { return listeners_.front().path; }
  size_t client_count() const { return clients_.size(); }
  std::chrono::milliseconds idle_timeout() const { return idle_timeout_; }
  void set_idle_timeout(std::chrono::milliseconds timeout) { idle_timeout_ = timeout; }
  std::chrono::milliseconds line_deadline() const { return line_deadline_; }
  void set_line_deadline(std::chrono::milliseconds deadline) { line_deadline_ = deadline; }

 private:
  struct Listener {
    std::string path;
    int fd = -1;
    dev_t dev = 0;  // identity of the socket file we created, so that the
    ino_t ino = 0;  // destructor never removes another server's socket
    std::unique_ptr<JsonLineProtocol> protocol;
  };
  struct Client {
    int fd = -1;
    JsonLineProtocol* protocol = nullptr;  // its listener's
    std::string input;        // bytes after the last complete line
    std::string output;       // reply bytes not yet written
    bool discarding = false;  // inside an oversized line
    bool closing = false;     // close once output is written
    bool failed = false;      // close now
    std::chrono::steady_clock::time_point last_activity;  // accepted or read
    std::chrono::steady_clock::time_point line_started;   // of `input`
  };

  JsonLineServer() = default;

  void AcceptClients(Listener& listener);
  // Closes the client idle longest, if idle kEvictableAfter; false if none.
  bool EvictIdlestClient();
  void SettleHungUpClients();
  void EraseFinishedClients();
  // Closes clients idle for idle_timeout() and those whose partial line is
  // older than line_deadline().
  void CloseIdleClients();
  void ReadFrom(Client& client);
  void ConsumeLines(Client& client, bool at_eof);
  void Reply(Client& client, const nlohmann::json& reply);
  void Flush(Client& client);
  nlohmann::json Answer(Client& client, const std::string& line);

  std::vector<Listener> listeners_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::chrono::milliseconds idle_timeout_ = kDefaultIdleTimeout;
  std::chrono::milliseconds line_deadline_ = kDefaultLineDeadline;
};

// Connects to the server at `path`, sends `request` as one line and returns
// the parsed reply line (a JSON object). Fails with Unavailable "cannot
// connect to <path>: No such file or directory (is scx_loehle running?)"
// and the like, DeadlineExceeded when no full reply arrives within
// timeout_ms, DataLoss when the reply is not a JSON object.
absl::StatusOr<nlohmann::json> JsonRequest(const std::string& path,
                                           const nlohmann::json& request,
                                           int timeout_ms = 3000);

// The same with the request line as given, not necessarily valid JSON (a
// newline is added when missing): `scx_loehle ctl send` and tests of how a
// server answers malformed requests.
absl::StatusOr<nlohmann::json> JsonLineRequest(const std::string& path,
                                               std::string line,
                                               int timeout_ms = 3000);

}  // namespace loehle

#endif  // LOEHLE_LOADER_NET_JSON_LINES_H_
