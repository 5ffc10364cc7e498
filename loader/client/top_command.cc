#include "loader/client/top_command.h"

#include <curses.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "loader/client/control_client.h"
#include "loader/client/dashboard_model.h"
#include "loader/command_line.h"
#include "loader/core/sched_ext_sysfs.h"
#include "loader/core/settings.h"
#include "loader/core/stats_snapshot.h"
#include "nlohmann/json.hpp"

namespace loehle {
namespace {

ProcStat ReadProcStat() {
  std::ifstream in("/proc/stat");
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return ParseProcStat(text.str());
}

absl::Status GoneError(const absl::Status& why) {
  return TopLostStats(why, ReadSchedExtState());
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

// "generation 4: reservoir/wakee-aware/idle-core" from a `set` reply.
std::string DescribeSetReply(const nlohmann::json& reply) {
  absl::StatusOr<SchedulerStatus> status = ParseSchedulerStatus(reply);
  if (!status.ok()) return std::string(status.status().message());
  return absl::StrCat("generation ", status->generation, ": ",
                      SettingsLabel(status->settings));
}

// top polls the current generation only: a full reply grows with every
// generation the daemon has run (52 KB and 14 ms of the daemon's CPU under
// TCG after 41 of them), and top shows only the current one.
absl::StatusOr<StatsSnapshot> FetchStats(const std::string& socket) {
  absl::StatusOr<nlohmann::json> result =
      RequestResult(socket, {{"cmd", "stats"}, {"generations", "current"}});
  if (!result.ok()) return result.status();
  return ParseStatsSnapshot(*result);
}

absl::Status RunPlain(const Command& command) {
  size_t width = 100;
  if (const char* columns = getenv("COLUMNS")) {
    uint32_t n;
    if (absl::SimpleAtoi(columns, &n) && n >= 40 && n <= 1000) width = n;
  }
  const int frames = command.once ? 1 : command.count;
  DashboardModel model;
  absl::StatusOr<StatsSnapshot> first = FetchStats(command.socket_path);
  if (!first.ok()) return first.status();
  model.Update(*std::move(first), ReadProcStat());
  for (int n = 0; frames == 0 || n < frames; ++n) {
    std::this_thread::sleep_for(std::chrono::duration<double>(command.interval_s));
    absl::StatusOr<StatsSnapshot> stats = FetchStats(command.socket_path);
    if (!stats.ok()) return GoneError(stats.status());
    model.Update(*std::move(stats), ReadProcStat());
    if (n > 0) printf("\n");
    for (const std::string& line : model.Render(width, 1000)) printf("%s\n", line.c_str());
    fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TopLostStats(const absl::Status& why, const std::string& state) {
  const std::string now = state.empty() ? "unknown" : state;
  if (absl::IsDeadlineExceeded(why)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the scheduler did not answer in time (", why.message(),
        "); sched_ext state is ", now));
  }
  return absl::UnavailableError(absl::StrCat(
      "the scheduler went away (", why.message(), "); sched_ext state is now ", now));
}

namespace {

using Clock = std::chrono::steady_clock;

// What a key asks for: nothing, a redraw, a fetch now (after a switch), or
// the end.
enum class KeyAction { kNone, kRedraw, kFetchNow, kQuit };

KeyAction HandleKey(int key, const std::string& socket, DashboardModel& model) {
  if (key == 'q' || key == 'Q' || key == 3 /* Ctrl-C */) return KeyAction::kQuit;
  if (key == KEY_RESIZE) return KeyAction::kRedraw;
  if (key == 'r') {
    model.Reset();
    return KeyAction::kRedraw;
  }
  std::optional<nlohmann::json> change =
      SettingChangeForKey(model.stats()->settings, key);
  if (!change) return KeyAction::kNone;
  absl::StatusOr<nlohmann::json> applied =
      RequestResult(socket, {{"cmd", "set"}, {"args", *change}});
  model.set_message(applied.ok() ? DescribeSetReply(*applied)
                                 : std::string(applied.status().message()));
  return KeyAction::kFetchNow;  // show the new generation at once
}

// Frames on `screen` until q, or until the scheduler stops answering (the
// error then says so).
absl::Status RunCurses(const Command& command, CursesScreen& screen,
                       DashboardModel& model) {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(command.interval_s));
  Clock::time_point next = Clock::now() + interval;
  bool dirty = true;
  for (;;) {
    if (Clock::now() >= next) {
      absl::StatusOr<StatsSnapshot> stats = FetchStats(command.socket_path);
      if (!stats.ok()) return GoneError(stats.status());
      model.Update(*std::move(stats), ReadProcStat());
      next += interval;
      if (next < Clock::now()) next = Clock::now() + interval;
      dirty = true;
    }
    if (dirty) {
      screen.Draw(model.Render(static_cast<size_t>(COLS), static_cast<size_t>(LINES)));
      dirty = false;
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    timeout(static_cast<int>(std::clamp<int64_t>(wait.count(), 0, 1000)));
    const int key = getch();
    if (key == ERR) continue;
    switch (HandleKey(key, command.socket_path, model)) {
      case KeyAction::kQuit: return absl::OkStatus();
      case KeyAction::kRedraw: dirty = true; break;
      case KeyAction::kFetchNow: next = Clock::now(); break;
      case KeyAction::kNone: break;
    }
  }
}

}  // namespace

absl::Status RunTop(const Command& command) {
  if (command.once || command.count > 0 || !isatty(STDOUT_FILENO) ||
      !isatty(STDIN_FILENO)) {
    return RunPlain(command);
  }
  DashboardModel model;
  absl::StatusOr<StatsSnapshot> first = FetchStats(command.socket_path);
  if (!first.ok()) return first.status();
  model.Update(*std::move(first), ReadProcStat());
  // The screen is restored before an error is printed.
  absl::Status result;
  {
    std::unique_ptr<CursesScreen> screen = CursesScreen::Open();
    if (screen == nullptr) {
      fprintf(stderr, "scx_loehle top: no usable terminal type (TERM=%s); plain frames\n",
              getenv("TERM") ? getenv("TERM") : "");
      return RunPlain(command);
    }
    result = RunCurses(command, *screen, model);
  }
  return result;
}

}  // namespace loehle
