#include "remote_frames.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <regex>

namespace rocprof::python {
namespace {

constexpr int kMaxInterpreters = 64;
constexpr int kMaxThreads = 1 << 14;
constexpr int64_t kMaxText = 1 << 14;       // characters of a name or file read
constexpr int64_t kMaxLineTable = 1 << 22;  // bytes

uint64_t u64_at(const std::vector<unsigned char>& b, uint64_t off) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

std::string version_text(uint32_t hex) {
  return std::to_string(hex >> 24) + "." + std::to_string((hex >> 16) & 0xff);
}

// The version in an interpreter file's name (libpython3.10.so, python3.10), 0 if none.
uint32_t version_from_name(const std::string& path) {
  std::smatch m;
  static const std::regex re(R"(python(\d)\.(\d+))");
  if (!std::regex_search(path, m, re)) return 0;
  return static_cast<uint32_t>(std::stoul(m[1]) << 24 | std::stoul(m[2]) << 16);
}

void append_utf8(std::string* out, uint32_t c) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (c >> 6)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (c >> 18)));
    out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace

bool RemoteInterpreter::open(std::string* error, int* err_no) {
  const std::string who = "pid " + std::to_string(proc_.pid());
  std::vector<RemoteProcess::Module> modules;
  if (!proc_.interpreter_modules(&modules)) {
    *err_no = errno;
    *error = who + ": " + (errno == ENOENT ? "no such process" : std::strerror(errno));
    return false;
  }
  const RemoteProcess::Module* mod = nullptr;
  for (const RemoteProcess::Module& m : modules)
    if (uint64_t at = proc_.symbol(m, "_PyRuntime", ".PyRuntime")) {
      runtime_ = at + m.bias;
      mod = &m;
      break;
    }
  if (mod == nullptr) {
    *err_no = ENOENT;
    *error = who + " runs no Python interpreter (no _PyRuntime in its executable or a " +
             "libpython it maps)";
    return false;
  }
  const uint64_t code_type = proc_.symbol(*mod, "PyCode_Type");
  code_type_ = code_type != 0 ? code_type + mod->bias : 0;
  unsigned char head[RP_DEBUG_OFFSETS_BYTES];
  if (!proc_.read(runtime_, head, sizeof head)) {
    *err_no = errno;
    *error = who + ": reading its memory failed: " + std::strerror(errno);
    return false;
  }
  rp_remote_layout from_table{};
  uint32_t version = 0;
  const int table = rp_layout_from_debug_offsets(head, sizeof head, &from_table, &version);
  if (version == 0)
    if (uint64_t at = proc_.symbol(*mod, "Py_Version")) {
      uint64_t v = 0;  // const unsigned long Py_Version (3.11+)
      if (proc_.read_value(at + mod->bias, &v)) version = static_cast<uint32_t>(v) & 0xffff0000u;
    }
  if (version == 0) version = version_from_name(mod->path);
  const uint32_t build = rp_build_version();
  *err_no = 0;
  if (table == 1) {
    layout_ = from_table;  // the target's own statement of its layout, where it makes one
  } else if (version == build && rp_layout_from_headers(&layout_)) {
    // This build's own headers.
  } else if (table == -2) {
    *error = who + " runs a free-threaded Python " + version_text(version) +
             ", whose objects read-only sampling does not read";
    return false;
  } else {
    rp_remote_layout own{};
    const std::string readable =
        rp_layout_from_headers(&own)
            ? "Python " + version_text(build) + " (the version rocprof is installed for) and "
            : "";
    *error = who + " runs Python " + (version ? version_text(version) : "(version unknown)") +
             "; read-only sampling here reads " + readable +
             "Python 3.13 (its _Py_DebugOffsets): run a rocprof installed for that Python, or " +
             "--method ptrace";
    return false;
  }
  if (code_type_ == 0) {
    *error = who + ": no PyCode_Type symbol in " + mod->path;
    return false;
  }
  // One read per thread state and per frame covers every field used.
  layout_.tstate_size = std::max({layout_.tstate_next, layout_.tstate_native_thread_id,
                                  layout_.tstate_current_frame}) +
                        8;
  layout_.frame_size = std::max({layout_.frame_previous, layout_.frame_code,
                                 layout_.frame_instr_ptr, layout_.frame_owner}) +
                       8;
  std::vector<Thread> ts;
  if (!threads(&ts)) {
    *err_no = errno;
    *error = who + ": reading its thread states failed: " + std::strerror(errno);
    return false;
  }
  // Offsets of another patch release that moved a field read garbage: thread ids that are
  // not the process's threads say so before anything is recorded.
  int known = 0;
  for (const Thread& t : ts) {
    struct stat st;
    const std::string task =
        "/proc/" + std::to_string(proc_.pid()) + "/task/" + std::to_string(t.tid);
    if (t.tid != 0 && ::stat(task.c_str(), &st) == 0) ++known;
  }
  if (!ts.empty() && known == 0) {
    *error = who + ": its Python " + version_text(version) + " thread states are not laid " +
             "out as the " + layout_.source + " of Python " + version_text(layout_.version_hex) +
             " say (another build of that version?); try --method ptrace";
    return false;
  }
  return true;
}

bool RemoteInterpreter::threads(std::vector<Thread>* out) {
  out->clear();
  uint64_t interp = 0;
  if (!proc_.read_value(runtime_ + layout_.runtime_interpreters_head, &interp)) return false;
  for (int i = 0; interp != 0 && i < kMaxInterpreters; ++i) {
    uint64_t ts = 0;
    if (!proc_.read_value(interp + layout_.interp_threads_head, &ts)) return false;
    for (int j = 0; ts != 0 && j < kMaxThreads; ++j) {
      buf_.resize(layout_.tstate_size);
      if (!proc_.read(ts, buf_.data(), buf_.size())) return false;
      Thread t{static_cast<uint32_t>(u64_at(buf_, layout_.tstate_native_thread_id)), 0};
      const uint64_t current = u64_at(buf_, layout_.tstate_current_frame);
      if (layout_.cframe_current_frame == RP_NO_OFFSET)
        t.frame = current;
      else if (current != 0 && !proc_.read_value(current + layout_.cframe_current_frame, &t.frame))
        return false;
      out->push_back(t);
      ts = u64_at(buf_, layout_.tstate_next);
    }
    if (!proc_.read_value(interp + layout_.interp_next, &interp)) return false;
  }
  return true;
}

int RemoteInterpreter::walk(uint64_t frame, std::vector<RemoteFrame>* out, size_t max) {
  out->clear();
  retired_.clear();
  const uint64_t head_size =
      std::max({layout_.ob_type, layout_.code_filename, layout_.code_qualname,
                layout_.code_linetable, layout_.code_firstlineno}) +
      8;
  std::vector<unsigned char> fb(layout_.frame_size), head(head_size);
  // Bounded: a chain being relinked while it is read could loop.
  for (size_t guard = 0; frame != 0 && out->size() < max && guard < 4 * max; ++guard) {
    if (!proc_.read(frame, fb.data(), fb.size())) return kReadFailed;
    const uint64_t previous = u64_at(fb, layout_.frame_previous);
    const uint64_t code_addr = u64_at(fb, layout_.frame_code);
    const uint64_t instr = u64_at(fb, layout_.frame_instr_ptr);
    const int owner = static_cast<signed char>(fb[layout_.frame_owner]);
    frame = previous;
    if (layout_.owner_cstack >= 0 && owner == layout_.owner_cstack) continue;  // C-stack shim
    if (code_addr == 0 || !proc_.read(code_addr, head.data(), head.size())) return kTorn;
    if (u64_at(head, layout_.ob_type) != code_type_) return kTorn;
    RemoteCode* c = code(code_addr, head.data());
    if (c == nullptr) return kTorn;
    // Code units (2 bytes) from the first instruction; -1 before it (a new frame).
    const int64_t index =
        (static_cast<int64_t>(instr) - static_cast<int64_t>(code_addr + layout_.code_adaptive)) / 2;
    if (index < -1 || index > (int64_t{1} << 30)) return kTorn;
    out->push_back(RemoteFrame{c, line_of(*c, static_cast<int32_t>(index))});
  }
  return kOk;
}

RemoteCode* RemoteInterpreter::code(uint64_t addr, const unsigned char* head) {
  uint64_t qualname, filename, linetable;
  int32_t first;
  std::memcpy(&qualname, head + layout_.code_qualname, 8);
  std::memcpy(&filename, head + layout_.code_filename, 8);
  std::memcpy(&linetable, head + layout_.code_linetable, 8);
  std::memcpy(&first, head + layout_.code_firstlineno, 4);
  auto it = codes_.find(addr);
  if (it != codes_.end() && it->second->qualname_ptr == qualname &&
      it->second->filename_ptr == filename && it->second->linetable_ptr == linetable &&
      it->second->firstlineno == first)
    return it->second.get();
  auto c = std::make_unique<RemoteCode>();
  c->qualname_ptr = qualname;
  c->filename_ptr = filename;
  c->linetable_ptr = linetable;
  c->firstlineno = first;
  if (!read_text(qualname, &c->qualname) || !read_text(filename, &c->filename) ||
      !read_bytes(linetable, &c->linetable)) {
    ++unreadable_codes_;
    return nullptr;
  }
  c->serial = next_serial_++;
  // A code object freed and another allocated at its address: the old entry goes when the
  // walk that holds it is over (frames of this walk point at it).
  if (it != codes_.end()) retired_.push_back(std::move(it->second));
  RemoteCode* raw = c.get();
  codes_[addr] = std::move(c);
  return raw;
}

bool RemoteInterpreter::read_text(uint64_t str, std::string* out) {
  std::vector<unsigned char> h(layout_.unicode_compact_size);
  if (str == 0 || !proc_.read(str, h.data(), h.size())) return false;
  uint32_t state = 0;
  int64_t length = 0;
  std::memcpy(&state, h.data() + layout_.unicode_state, 4);
  std::memcpy(&length, h.data() + layout_.unicode_length, 8);
  const uint32_t kind = (state >> layout_.unicode_kind_shift) & layout_.unicode_kind_mask;
  const bool compact = (state >> layout_.unicode_compact_bit) & 1;
  const bool ascii = (state >> layout_.unicode_ascii_bit) & 1;
  if (!compact || (kind != 1 && kind != 2 && kind != 4) || length < 0) return false;
  length = std::min(length, kMaxText);
  std::vector<unsigned char> data(static_cast<size_t>(length) * kind);
  const uint64_t at = str + (ascii ? layout_.unicode_ascii_size : layout_.unicode_compact_size);
  if (!data.empty() && !proc_.read(at, data.data(), data.size())) return false;
  out->clear();
  for (int64_t i = 0; i < length; ++i) {
    uint32_t c = 0;
    if (kind == 1) {
      c = data[i];
    } else if (kind == 2) {
      uint16_t u;
      std::memcpy(&u, data.data() + 2 * i, 2);
      c = u;
    } else {
      std::memcpy(&c, data.data() + 4 * i, 4);
    }
    append_utf8(out, c);
  }
  return true;
}

bool RemoteInterpreter::read_bytes(uint64_t bytes, std::string* out) {
  int64_t size = 0;
  if (bytes == 0 || !proc_.read_value(bytes + layout_.bytes_size, &size) || size < 0 ||
      size > kMaxLineTable)
    return false;
  out->assign(static_cast<size_t>(size), '\0');
  return size == 0 || proc_.read(bytes + layout_.bytes_sval, out->data(), out->size());
}

// The line of code unit `index`, from the location table (3.11+; CPython's
// Objects/locations.md): entries of one start byte (bit 7 set: code in bits 3-6, units - 1 in
// bits 0-2) and continuation bytes; codes 13 and 14 start with a signed varint line delta,
// 10-12 move the line by code - 10, 15 has no line, the others keep it.
int32_t RemoteInterpreter::line_of(RemoteCode& c, int32_t index) {
  if (index < 0) return c.firstlineno;
  auto hit = c.lines.find(index);
  if (hit != c.lines.end()) return hit->second;
  const auto* t = reinterpret_cast<const unsigned char*>(c.linetable.data());
  const size_t n = c.linetable.size();
  int32_t line = c.firstlineno, found = -1;
  int64_t addr = 0;
  for (size_t p = 0; p < n;) {
    const unsigned char b = t[p];
    if ((b & 0x80) == 0) break;  // not a start byte: malformed
    const int code = (b >> 3) & 15;
    const int units = (b & 7) + 1;
    if (code == 13 || code == 14) {
      uint32_t v = 0;
      unsigned shift = 0;
      size_t q = p + 1;
      for (; q < n && shift < 32; ++q, shift += 6) {
        v |= static_cast<uint32_t>(t[q] & 63) << shift;
        if ((t[q] & 64) == 0) break;
      }
      line += (v & 1) ? -static_cast<int32_t>(v >> 1) : static_cast<int32_t>(v >> 1);
    } else if (code >= 10 && code <= 12) {
      line += code - 10;
    }
    if (index < addr + units) {
      found = code == 15 ? -1 : line;
      break;
    }
    addr += units;
    do ++p;
    while (p < n && (t[p] & 0x80) == 0);
  }
  if (c.lines.size() < 4096) c.lines.emplace(index, found);
  return found;
}

}  // namespace rocprof::python
