#include "loader/net/json_lines.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

constexpr size_t kReadChunk = 64 * 1024;
// Reads per client and Poll, so that one chatty client cannot starve the
// others (or the scheduler's main loop).
constexpr int kMaxReadsPerPoll = 16;
// A reply larger than this is not a reply from scx_loehle.
constexpr size_t kMaxReplyBytes = 64 * 1024 * 1024;

// Owns a file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

std::string ErrnoText(int error) { return std::strerror(error); }

// Never throws: handler results may hold strings that are not UTF-8.
std::string DumpLine(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// For a just-accepted client that is refused: its send buffer is empty, so
// a short reply fits without blocking; if it does not, nothing is lost that
// mattered.
void SendBestEffort(int fd, const nlohmann::json& reply) {
  const std::string line = DumpLine(reply);
  (void)send(fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

absl::StatusOr<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("socket path \"%s\" must have 1 to %d bytes",
                        path, sizeof(address.sun_path) - 1));
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

int Connect(int fd, const sockaddr_un& address) {
  return connect(fd, reinterpret_cast<const sockaddr*>(&address),
                 sizeof(address));
}

// Removes a stale socket at `path`, refuses a live one or a non-socket.
absl::Status ClearPath(const std::string& path, const sockaddr_un& address) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::UnavailableError(
        absl::StrFormat("cannot stat %s: %s", path, ErrnoText(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s exists and is not a socket; not replacing it", path));
  }
  // Non-blocking, so that a live server with a full backlog (EAGAIN) does not
  // hold us up; it counts as live.
  UniqueFd probe(
      socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (probe.get() < 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot create a socket: %s", ErrnoText(errno)));
  }
  if (Connect(probe.get(), address) == 0 || errno == EAGAIN ||
      errno == EINPROGRESS) {
    return absl::FailedPreconditionError(
        absl::StrFormat("another process is already serving %s", path));
  }
  if (errno != ECONNREFUSED) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot check whether %s is in use: %s", path, ErrnoText(errno)));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::UnavailableError(absl::StrFormat(
        "cannot remove stale socket %s: %s", path, ErrnoText(errno)));
  }
  return absl::OkStatus();
}

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

// Waits for `events` on fd until the deadline; false on timeout.
absl::StatusOr<bool> WaitFor(int fd, short events,
                             std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int n = poll(&entry, 1, RemainingMs(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) {
      return absl::UnavailableError(
          absl::StrFormat("poll failed: %s", ErrnoText(errno)));
    }
  }
}

}  // namespace

std::string OneLine(std::string_view message) {
  std::string line(message);
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

absl::StatusOr<std::unique_ptr<JsonLineServer>> JsonLineServer::Listen(
    const std::string& path, std::unique_ptr<JsonLineProtocol> protocol) {
  std::unique_ptr<JsonLineServer> server(new JsonLineServer());
  if (absl::Status added = server->AddListener(path, std::move(protocol));
      !added.ok()) {
    return added;
  }
  return server;
}

absl::Status JsonLineServer::AddListener(
    const std::string& path, std::unique_ptr<JsonLineProtocol> protocol) {
  absl::StatusOr<sockaddr_un> address = SocketAddress(path);
  if (!address.ok()) return address.status();
  if (absl::Status cleared = ClearPath(path, *address); !cleared.ok()) {
    return cleared;
  }

  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot create a socket: %s", ErrnoText(errno)));
  }
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&*address),
           sizeof(*address)) != 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot bind %s: %s", path, ErrnoText(errno)));
  }
  // From here on the file is ours; remove it on every error.
  auto fail = [&](const std::string& what) {
    const int error = errno;
    unlink(path.c_str());
    return absl::UnavailableError(
        absl::StrFormat("cannot %s %s: %s", what, path, ErrnoText(error)));
  };
  // Between bind and chmod the umask decides the mode; peer credentials are
  // checked on every connection anyway.
  if (chmod(path.c_str(), 0600) != 0) return fail("chmod");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return fail("stat");
  if (listen(fd.get(), static_cast<int>(kMaxClients)) != 0) {
    return fail("listen on");
  }
  listeners_.push_back(
      {path, fd.release(), st.st_dev, st.st_ino, std::move(protocol)});
  return absl::OkStatus();
}

JsonLineServer::~JsonLineServer() {
  for (const std::unique_ptr<Client>& client : clients_) close(client->fd);
  for (const Listener& listener : listeners_) {
    close(listener.fd);
    struct stat st;
    if (lstat(listener.path.c_str(), &st) == 0 && st.st_dev == listener.dev &&
        st.st_ino == listener.ino) {
      unlink(listener.path.c_str());
    }
  }
}

void JsonLineServer::Poll(int timeout_ms, absl::Span<const int> wake_fds) {
  // Listeners first, then clients, then the wake fds: fds[first_client + i]
  // belongs to clients_[i].
  const size_t first_client = listeners_.size();
  std::vector<pollfd> fds;
  fds.reserve(first_client + clients_.size() + wake_fds.size());
  for (const Listener& listener : listeners_) {
    fds.push_back({listener.fd, POLLIN, 0});
  }
  for (const std::unique_ptr<Client>& client : clients_) {
    short events = client->closing ? 0 : POLLIN;
    if (!client->output.empty()) events |= POLLOUT;
    fds.push_back({client->fd, events, 0});
  }
  for (int fd : wake_fds) {
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
  }
  // On a timeout (or EINTR) nothing is ready, but deadlines still pass:
  // CloseIdleClients below runs either way.
  const bool ready = poll(fds.data(), fds.size(), timeout_ms) > 0;
  for (size_t i = 0; ready && i < clients_.size(); ++i) {
    Client& client = *clients_[i];
    const short revents = fds[first_client + i].revents;
    if (revents & POLLNVAL) {
      client.failed = true;
      continue;
    }
    if (!client.closing && (revents & (POLLIN | POLLHUP | POLLERR))) {
      ReadFrom(client);
    } else if (revents & (POLLOUT | POLLHUP | POLLERR)) {
      Flush(client);  // a dead peer shows up as a failed send
    }
  }
  CloseIdleClients();
  EraseFinishedClients();
  // Accepting comes last so that the indices above still matched.
  for (size_t i = 0; i < listeners_.size(); ++i) {
    if (fds[i].revents & POLLIN) AcceptClients(listeners_[i]);
  }
}

void JsonLineServer::AcceptClients(Listener& listener) {
  for (;;) {
    UniqueFd fd(
        accept4(listener.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.get() < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN: nobody else waiting; EMFILE and the like: later
    }
    ucred credentials{};
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &credentials, &length) !=
        0) {
      continue;  // cannot tell who it is: refuse
    }
    if (credentials.uid != 0 && credentials.uid != geteuid()) {
      SendBestEffort(fd.get(),
                     listener.protocol->ErrorReply(absl::StrFormat(
                         "permission denied: uid %d is neither root nor the "
                         "scheduler's owner",
                         credentials.uid)));
      continue;
    }
    if (clients_.size() >= kMaxClients) SettleHungUpClients();
    if (clients_.size() >= kMaxClients && !EvictIdlestClient()) {
      SendBestEffort(fd.get(),
                     listener.protocol->ErrorReply(absl::StrFormat(
                         "too many busy clients (at most %d)", kMaxClients)));
      continue;
    }
    auto client = std::make_unique<Client>();
    client->fd = fd.release();
    client->protocol = listener.protocol.get();
    client->last_activity = std::chrono::steady_clock::now();
    clients_.push_back(std::move(client));
  }
}

void JsonLineServer::EraseFinishedClients() {
  std::erase_if(clients_, [](const std::unique_ptr<Client>& client) {
    const bool done =
        client->failed || (client->closing && client->output.empty());
    if (done) close(client->fd);
    return done;
  });
}

// At the limit, before turning a new client away: peers that already hung
// up (a burst of connect-and-drop fills every slot within one accept
// batch, their EOFs not read yet) are read now, answered if they sent a
// whole line, and their slots freed.
void JsonLineServer::SettleHungUpClients() {
  for (const std::unique_ptr<Client>& client : clients_) {
    if (client->closing || client->failed) continue;
    pollfd p{client->fd, POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
      ReadFrom(*client);
    }
  }
  EraseFinishedClients();
}

bool JsonLineServer::EvictIdlestClient() {
  const auto now = std::chrono::steady_clock::now();
  Client* idlest = nullptr;
  for (const std::unique_ptr<Client>& client : clients_) {
    if (!client->output.empty()) continue;  // still owed a reply
    if (idlest == nullptr || client->last_activity < idlest->last_activity) {
      idlest = client.get();
    }
  }
  if (idlest == nullptr || now - idlest->last_activity < kEvictableAfter) {
    return false;
  }
  SendBestEffort(idlest->fd, idlest->protocol->ErrorReply(
                                 "closed: idle, and a new client needed the slot"));
  close(idlest->fd);
  std::erase_if(clients_, [idlest](const std::unique_ptr<Client>& client) {
    return client.get() == idlest;
  });
  return true;
}

void JsonLineServer::CloseIdleClients() {
  const auto now = std::chrono::steady_clock::now();
  for (const std::unique_ptr<Client>& client : clients_) {
    if (client->output.empty() && now - client->last_activity >= idle_timeout_) {
      SendBestEffort(client->fd,
                     client->protocol->ErrorReply("closed: idle for too long"));
      client->failed = true;
    } else if ((!client->input.empty() || client->discarding) &&
               now - client->line_started >= line_deadline_) {
      SendBestEffort(client->fd,
                     client->protocol->ErrorReply(absl::StrFormat(
                         "closed: a request line took longer than %d ms",
                         static_cast<int>(line_deadline_.count()))));
      client->failed = true;
    }
  }
}

void JsonLineServer::ReadFrom(Client& client) {
  client.last_activity = std::chrono::steady_clock::now();
  char buffer[kReadChunk];
  for (int reads = 0; reads < kMaxReadsPerPoll && !client.failed; ++reads) {
    const ssize_t n = recv(client.fd, buffer, sizeof(buffer), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) client.failed = true;
      break;
    }
    if (n == 0) {
      // The peer may have only shut down its sending side and still wait for
      // replies (socat, nc -N): answer what it sent, then close.
      ConsumeLines(client, /*at_eof=*/true);
      client.closing = true;
      break;
    }
    // An oversized line being discarded keeps its start: it is still one
    // line, and must end within the deadline too.
    if (client.input.empty() && !client.discarding) {
      client.line_started = client.last_activity;
    }
    client.input.append(buffer, static_cast<size_t>(n));
    ConsumeLines(client, /*at_eof=*/false);
  }
  Flush(client);
}

void JsonLineServer::ConsumeLines(Client& client, bool at_eof) {
  size_t start = 0;
  while (!client.failed) {
    const size_t newline = client.input.find('\n', start);
    if (newline == std::string::npos) break;
    if (client.discarding) {
      client.discarding = false;  // the oversized line ends here
    } else if (newline - start > kMaxRequestLine) {
      Reply(client, client.protocol->ErrorReply(absl::StrFormat(
                        "request line longer than %d bytes", kMaxRequestLine)));
    } else {
      const std::string_view line(client.input.data() + start, newline - start);
      Reply(client, Answer(client, std::string(line)));
    }
    start = newline + 1;
  }
  client.input.erase(0, start);
  // What is left began with this read.
  if (start > 0 && !client.discarding) client.line_started = client.last_activity;

  if (client.discarding) {
    client.input.clear();
  } else if (client.input.size() > kMaxRequestLine) {
    // Answer at once rather than buffering an unbounded line; the rest of it
    // is dropped up to its newline.
    Reply(client, client.protocol->ErrorReply(absl::StrFormat(
                      "request line longer than %d bytes", kMaxRequestLine)));
    client.input.clear();
    client.discarding = true;
  } else if (at_eof && !client.input.empty()) {
    // A last request without its newline.
    Reply(client, Answer(client, client.input));
    client.input.clear();
  }
}

nlohmann::json JsonLineServer::Answer(Client& client, const std::string& line) {
  // Every line gets its reply, so that a client never waits for one that
  // does not come.
  if (IsBlank(line)) return client.protocol->ErrorReply("empty request line");
  const nlohmann::json request =
      nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) {
    return client.protocol->ErrorReply("malformed JSON request");
  }
  return client.protocol->Answer(request);
}

void JsonLineServer::Reply(Client& client, const nlohmann::json& reply) {
  client.output += DumpLine(reply);
  if (client.output.size() > kMaxPendingOutput) client.failed = true;
}

void JsonLineServer::Flush(Client& client) {
  size_t written = 0;
  while (written < client.output.size() && !client.failed) {
    const ssize_t n =
        send(client.fd, client.output.data() + written,
             client.output.size() - written, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) client.failed = true;
      break;
    }
    written += static_cast<size_t>(n);
  }
  client.output.erase(0, written);
}

absl::StatusOr<nlohmann::json> JsonRequest(const std::string& path,
                                           const nlohmann::json& request,
                                           int timeout_ms) {
  return JsonLineRequest(path, DumpLine(request), timeout_ms);
}

namespace {

using Deadline = std::chrono::steady_clock::time_point;

// A blocking-connect, then non-blocking, socket to `path`.
absl::StatusOr<int> ConnectTo(const std::string& path, int timeout_ms) {
  absl::StatusOr<sockaddr_un> address = SocketAddress(path);
  if (!address.ok()) return address.status();
  UniqueFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot create a socket: %s", ErrnoText(errno)));
  }
  // Connecting blocks only while the server's backlog is full; bound that.
  timeval limit{};
  limit.tv_sec = timeout_ms / 1000;
  limit.tv_usec = (timeout_ms % 1000) * 1000;
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  if (Connect(fd.get(), *address) != 0) {
    const int error = errno;
    const bool not_running = error == ENOENT || error == ECONNREFUSED;
    return absl::UnavailableError(
        absl::StrFormat("cannot connect to %s: %s%s", path, ErrnoText(error),
                        not_running ? " (is scx_loehle running?)" : ""));
  }
  if (fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) | O_NONBLOCK) != 0) {
    return absl::UnavailableError(
        absl::StrFormat("cannot configure socket: %s", ErrnoText(errno)));
  }
  return fd.release();
}

// Sends all of `line`. A server that refuses us (permission, too many
// clients) replies and closes at once, possibly before our request is out;
// its reply then explains more than our EPIPE does, so a failed send is
// returned in *send_error and the caller still reads. The status is for
// what ends the request at once (a timeout, a failed poll).
absl::Status SendLine(int fd, const std::string& path, const std::string& line,
                      Deadline deadline, int timeout_ms, absl::Status* send_error) {
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *send_error = absl::UnavailableError(
          absl::StrFormat("cannot send to %s: %s", path, ErrnoText(errno)));
      return absl::OkStatus();
    }
    absl::StatusOr<bool> ready = WaitFor(fd, POLLOUT, deadline);
    if (!ready.ok()) return ready.status();
    if (!*ready) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "%s did not take the request within %d ms", path, timeout_ms));
    }
  }
  return absl::OkStatus();
}

// The first line the server sends, without its newline.
absl::StatusOr<std::string> ReadLine(int fd, const std::string& path,
                                     Deadline deadline, int timeout_ms,
                                     const absl::Status& send_error) {
  std::string reply;
  for (;;) {
    const size_t newline = reply.find('\n');
    if (newline != std::string::npos) {
      reply.resize(newline);
      return reply;
    }
    if (reply.size() > kMaxReplyBytes) {
      return absl::DataLossError(absl::StrFormat("reply from %s is too long", path));
    }
    char buffer[kReadChunk];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      reply.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) {
      if (!send_error.ok()) return send_error;
      return absl::UnavailableError(
          absl::StrFormat("%s closed the connection without a reply", path));
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      if (!send_error.ok()) return send_error;
      return absl::UnavailableError(
          absl::StrFormat("cannot read from %s: %s", path, ErrnoText(errno)));
    }
    absl::StatusOr<bool> ready = WaitFor(fd, POLLIN, deadline);
    if (!ready.ok()) return ready.status();
    if (!*ready) {
      return absl::DeadlineExceededError(
          absl::StrFormat("no reply from %s within %d ms", path, timeout_ms));
    }
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> JsonLineRequest(const std::string& path,
                                               std::string line,
                                               int timeout_ms) {
  if (line.empty() || line.back() != '\n') line.push_back('\n');
  const Deadline deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(std::max(timeout_ms, 0));
  absl::StatusOr<int> connected = ConnectTo(path, timeout_ms);
  if (!connected.ok()) return connected.status();
  UniqueFd fd(*connected);
  absl::Status send_error;
  if (absl::Status sent = SendLine(fd.get(), path, line, deadline, timeout_ms,
                                   &send_error);
      !sent.ok()) {
    return sent;
  }
  absl::StatusOr<std::string> reply =
      ReadLine(fd.get(), path, deadline, timeout_ms, send_error);
  if (!reply.ok()) return reply.status();
  nlohmann::json parsed =
      nlohmann::json::parse(*reply, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::DataLossError(absl::StrFormat("malformed reply from %s", path));
  }
  return parsed;
}

}  // namespace loehle
