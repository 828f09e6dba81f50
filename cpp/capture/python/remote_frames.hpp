// The Python threads and frames of another process, read from outside (`rocprof attach PID
// --method read-only`, as py-spy --pid --nonblocking): _PyRuntime is found through the ELF
// symbols of the libpython or executable it maps, the structures are followed with the
// offsets of remote_layout.h, and each frame's code object gives its qualified name, file
// and line (co_linetable at the frame's instruction). The target is never stopped, so a walk
// may meet a frame that is being pushed or popped: such a walk is refused (every object is
// type-checked), never guessed.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "capture/python/remote_layout.h"
#include "capture/python/remote_process.hpp"

namespace rocprof::python {

// A code object as read: its names, and its line table for line lookups.
struct RemoteCode {
  uint64_t serial = 0;  // unique among the codes one RemoteInterpreter read
  std::string qualname, filename;
  int32_t firstlineno = 0;
  std::string linetable;
  uint64_t qualname_ptr = 0, filename_ptr = 0, linetable_ptr = 0;
  std::unordered_map<int32_t, int32_t> lines;  // instruction index -> line
};

struct RemoteFrame {
  const RemoteCode* code;  // valid until the next walk
  int32_t line;
};

class RemoteInterpreter {
 public:
  explicit RemoteInterpreter(uint32_t pid) : proc_(pid) {}

  // Finds the interpreter and the layout of its structures. False with a one-line *error and
  // *err_no (an errno; EPERM/EACCES: reading the process was refused).
  bool open(std::string* error, int* err_no);
  uint32_t version_hex() const { return layout_.version_hex; }
  const char* layout_source() const { return layout_.source; }

  struct Thread {
    uint32_t tid;
    uint64_t frame;  // its innermost _PyInterpreterFrame (0: none)
  };
  // Every thread state of every interpreter. False with errno set when a read failed (the
  // process ended: ESRCH; a list changing under the read: EFAULT).
  bool threads(std::vector<Thread>* out);

  enum Walk { kOk = 0, kReadFailed = -1, kTorn = -2 };
  // The frames from `frame` outwards, innermost first, at most `max`: kOk, or why not.
  int walk(uint64_t frame, std::vector<RemoteFrame>* out, size_t max);

  // Code objects whose name, file or line table could not be read (counted, not sampled).
  uint64_t unreadable_codes() const { return unreadable_codes_; }

 private:
  RemoteCode* code(uint64_t addr, const unsigned char* head);
  bool read_text(uint64_t str, std::string* out);
  bool read_bytes(uint64_t bytes, std::string* out);
  static int32_t line_of(RemoteCode& c, int32_t index);

  RemoteProcess proc_;
  rp_remote_layout layout_{};
  uint64_t runtime_ = 0, code_type_ = 0;
  std::unordered_map<uint64_t, std::unique_ptr<RemoteCode>> codes_;
  std::vector<std::unique_ptr<RemoteCode>> retired_;  // replaced during the current walk
  uint64_t next_serial_ = 1, unreadable_codes_ = 0;
  std::vector<unsigned char> buf_;
};

}  // namespace rocprof::python
