// Resolved stacks, free of Python: the frame a sample's word turns into, the tree that stores
// each unique stack once (node = (caller node, frame)), and the trim of the launcher's own
// frames. Used by the resolver thread only; unit-tested in cpp/tests/test_sampling.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

#include "rocprof/info.hpp"
#include "rocprof/json.hpp"

namespace rocprof::sampling {

struct FrameRef {
  uint32_t func_id, file_id;  // interned strings
  int32_t line;
  bool native;
};

// Node ids start at 1; 0 is "no caller" (the outermost frame's parent).
class StackTree {
 public:
  // The node for `f` called from `parent`; *is_new tells the caller to store the node once.
  uint64_t node(uint64_t parent, const FrameRef& f, bool* is_new) {
    const Key key{parent, f.func_id, f.file_id, f.line};
    auto it = nodes_.find(key);
    if (it != nodes_.end()) {
      *is_new = false;
      return it->second;
    }
    const uint64_t id = nodes_.size() + 1;
    nodes_.emplace(key, id);
    *is_new = true;
    return id;
  }
  size_t size() const { return nodes_.size(); }
  void clear() { nodes_.clear(); }

 private:
  struct Key {
    uint64_t parent;
    uint32_t func, file;
    int32_t line;
    bool operator==(const Key& o) const {
      return parent == o.parent && func == o.func && file == o.file && line == o.line;
    }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.parent * 0x9E3779B97F4A7C15ull;
      h ^= (static_cast<uint64_t>(k.func) << 32 | k.file) + 0x7F4A7C159E3779B9ull + (h << 6);
      return h ^ (static_cast<uint64_t>(static_cast<uint32_t>(k.line)) * 0xC2B2AE3D27D4EB4Full);
    }
  };
  std::unordered_map<Key, uint64_t, Hash> nodes_;
};

// The row of a new node: its frame as rocpd stores a sample's frame (call_stack and
// line_info JSON), the same for every sampler.
inline StackInfo stack_node(uint64_t id, uint64_t parent, uint32_t category_id,
                            const std::string& func, const std::string& file, int32_t line,
                            bool native) {
  std::string cs = "{\"function\":" + json_string(func) + ",\"file\":" + json_string(file) +
                   ",\"line\":" + std::to_string(line) + ",\"kind\":\"" +
                   (native ? "native" : "python") + "\"}";
  std::string li = "{\"file\":" + json_string(file) + ",\"line\":" + std::to_string(line) + "}";
  return StackInfo{id, parent, category_id, std::move(cs), std::move(li)};
}

// The launcher (`rocprof run script.py`) runs the script as
//   ... run_target (rocprof/cli/target.py) -> runpy ... -> _run_code (runpy) -> <module> (script)
// Interned ids of those two functions and their files; 0 ids disable the trim.
struct LauncherFrames {
  uint32_t run_target_func = 0, run_target_file = 0;
  uint32_t run_code_func = 0, run_code_file = 0;
  uint32_t module_func = 0;  // "<module>": a module's top level (launcher_time)
};

// Frames innermost first. Returns how many innermost frames to keep: all of them, unless the
// stack runs through the launcher's run_target and then runpy's _run_code, in which case the
// frames outside the first Python frame _run_code calls (the script's <module>) are cut, so
// the script's samples start at its own module level. Native frames in between are cut too.
// The index of the launcher's run_target frame, searched outermost first; n when the stack
// does not run through it (or the trim is off).
inline size_t run_target_at(const FrameRef* frames, size_t n, const LauncherFrames& l) {
  if (l.run_target_func == 0) return n;
  for (size_t i = n; i > 0; --i) {
    const FrameRef& f = frames[i - 1];
    if (!f.native && f.func_id == l.run_target_func && f.file_id == l.run_target_file) return i - 1;
  }
  return n;
}

inline size_t launcher_keep(const FrameRef* frames, size_t n, const LauncherFrames& l) {
  size_t i = run_target_at(frames, n, l);
  if (i == n) return n;
  while (i > 0) {  // inward: runpy's _run_code
    const FrameRef& f = frames[--i];
    if (f.native || f.func_id != l.run_code_func || f.file_id != l.run_code_file) continue;
    while (i > 0)  // the first Python frame it runs
      if (!frames[--i].native) return i + 1;
    return n;  // inside _run_code before the script's frame exists: launcher time, kept
  }
  return n;
}

// Whether a stack that launcher_keep left whole is the launcher's own time: it runs through
// run_target and runs none of the program's code, as while the launcher reads the script,
// sets up __main__ or calls the standard library. The program's code there is a module that
// runpy imports (`-m pkg.mod` runs pkg/__init__.py first): a `<module>` frame inward of a
// runpy frame, in a file not of the launcher's side (`own(file_id)`: rocprof's package, runpy,
// the import system). Such a sample is stored as one frame, not as the launcher's internals
// among the program's functions.
template <class Own>
bool launcher_time(const FrameRef* frames, size_t n, const LauncherFrames& l, Own own) {
  size_t i = run_target_at(frames, n, l);
  if (i == n) return false;
  bool in_runpy = false;
  while (i > 0) {
    const FrameRef& f = frames[--i];
    if (f.native) continue;
    if (f.file_id == l.run_code_file)
      in_runpy = true;
    else if (in_runpy && f.func_id == l.module_func && !own(f.file_id))
      return false;
  }
  return true;
}

}  // namespace rocprof::sampling
