// On-demand capture (`rocprof run --on-demand`, `rocprof ctl`): the process starts with the
// core loaded and nothing recording; a small thread of ours serves a Unix socket through which
// the same user starts and stops windows. Each window is a session of its own (session.hpp:
// start/stop, every backend subscribing at its start and unsubscribing at its end), written to
// its own database, NAME_w<k>_results.db.
//
//   socket   <folder of this process's database>/.rocprof-ctl/<pid>.sock: the folder 0700, the
//            socket 0600, and the peer's uid (SO_PEERCRED) checked on every connection: only
//            the same user or root is served
//   protocol one request per connection, lines ending with an empty line:
//              "start <duration_ms>" then "<settings key>=<value>" lines (capture/settings.hpp,
//                 added to the run's settings for this window)
//                 -> "started <k> <start_ns> <path>", and with a duration, when the window
//                    ends and its database is complete, "stopped <k> <end_ns> <path>"
//              "stop"   -> "stopped <k> <end_ns> <path>" once the database is complete
//              "status" -> "status <pid> idle <windows>" | "status <pid> recording <k> <path>"
//            errors: "error <one line>"
//   clients  served by one thread that waits on none of them: each has 1 s from its
//            connection to deliver its request, and at most 32 wait at once (a new one closes
//            the oldest), so slow or idle clients cost neither `rocprof ctl` nor the program
// The window's end (its database drained, committed, closed) runs on this thread, never on
// the program's.
#pragma once
#include <string>

#include "session.hpp"

namespace rocprof::session::control {

inline constexpr const char* kFolder = ".rocprof-ctl";

// Arms this process: saves `config` (the run's: output template, settings) for the windows
// and starts the control thread. False with *error when the socket cannot be made safely.
bool arm(const Config& config, std::string* error);
// Ends any window (its database completed), stops the thread and removes the socket.
void disarm();
bool armed();
std::string socket_path();

// `tmpl` (…_results.db) with "_w<k>" before the suffix.
std::string window_template(const std::string& tmpl, unsigned k);

// Whether a peer of `uid` may control a process running as `self`: the same user, or root.
bool peer_allowed(unsigned uid, unsigned self);

}  // namespace rocprof::session::control
