// Fatal-signal handling of the session (signals.cpp says how): SIGTERM, SIGHUP and an
// unhandled SIGINT flush and close the database, then take their usual course.
#pragma once
#include <signal.h>

namespace rocprof::session::signals {

// Holds the fatal signals back on this thread while a session starts or stops: arriving
// half-way, the handler would wait for a session lock this very thread holds. They are
// delivered, and handled as usual, as the guard ends.
class Deferred {
 public:
  Deferred();
  ~Deferred();
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;

 private:
  sigset_t old_;
};

// Once per process, at the first session start; fork children re-arm themselves.
void install();

}  // namespace rocprof::session::signals
