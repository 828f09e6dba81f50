// Python half of GPU-launch attribution: the call-site hook the CUPTI backend calls on the
// launching thread (capture/cupti/callsite.hpp). It runs only when that thread holds the GIL
// (so the caches below are serialised by the GIL) and returns the interned JSON list of the
// user's innermost frames: {"file","line","function"}, innermost first.
//
// Cost control: frames of library code (site-packages, the standard library, rocprof itself)
// are skipped by a per-code-object verdict cached in a fixed table; the JSON for a given
// (code, instruction offset) chain is built once and cached by hash. Frames are walked
// through the public API (PyEval_GetFrame / PyFrame_GetBack).
#include "bindings/registry.hpp"

#ifdef ROCPROF_HAVE_CUPTI
#include <Python.h>
#include <frameobject.h>

#include <string>

#include "capture/cupti/callsite.hpp"
#include "session/session.hpp"

namespace py = pybind11;

namespace {

constexpr int kMaxUserFrames = 4;
constexpr int kMaxWalk = 64;
constexpr uint32_t kCodeSlots = 4096, kSiteSlots = 8192;

struct CodeVerdict { PyObject* code = nullptr; bool user = false; };
struct SiteEntry { uint64_t key = 0; uint32_t id = 0; };
CodeVerdict g_code[kCodeSlots];
SiteEntry g_sites[kSiteSlots];
std::string* g_skip_prefixes = nullptr;  // '\n'-separated, set from Python
size_t g_skip_count = 0;

bool is_user_code(PyCodeObject* code) {
  PyObject* key = reinterpret_cast<PyObject*>(code);
  CodeVerdict& v = g_code[(reinterpret_cast<uintptr_t>(key) >> 4) % kCodeSlots];
  if (v.code == key) return v.user;
  bool user = true;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  if (file == nullptr) {
    PyErr_Clear();
    user = false;
  } else if (file[0] == '<') {
    user = false;  // <frozen runpy>, <string>
  } else if (g_skip_prefixes != nullptr) {
    const std::string& all = *g_skip_prefixes;
    for (size_t p = 0; p < all.size();) {
      size_t e = all.find('\n', p);
      if (e == std::string::npos) e = all.size();
      if (e > p && std::strncmp(file, all.data() + p, e - p) == 0) { user = false; break; }
      p = e + 1;
    }
  }
  // Code objects are kept alive by the cache (one reference each) so an address is never
  // reused by another code object while its verdict is cached.
  Py_XDECREF(v.code);
  Py_INCREF(key);
  v.code = key;
  v.user = user;
  return user;
}

void append_frame(std::string& out, PyCodeObject* code, int line) {
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* fn = PyUnicode_AsUTF8(code->co_qualname ? code->co_qualname : code->co_name);
  if (!file || !fn) { PyErr_Clear(); return; }
  auto esc = [&](const char* s) {
    out.push_back('"');
    for (; *s; ++s) {
      if (*s == '"' || *s == '\\') { out.push_back('\\'); out.push_back(*s); }
      else if (static_cast<unsigned char>(*s) < 0x20) out.push_back(' ');
      else out.push_back(*s);
    }
    out.push_back('"');
  };
  if (out.size() > 1) out.push_back(',');
  out += "{\"file\":";
  esc(file);
  out += ",\"line\":" + std::to_string(line) + ",\"function\":";
  esc(fn);
  out.push_back('}');
}

uint32_t python_callsite() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return 0;
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  if (f == nullptr) return 0;
  Py_INCREF(f);
  PyFrameObject* user[kMaxUserFrames];
  PyCodeObject* codes[kMaxUserFrames];
  int lasti[kMaxUserFrames];
  int n = 0;
  uint64_t key = 1469598103934665603ull;
  for (int depth = 0; f != nullptr && n < kMaxUserFrames && depth < kMaxWalk; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    if (is_user_code(code)) {
      user[n] = f;
      codes[n] = code;
      lasti[n] = PyFrame_GetLasti(f);
      key = (key ^ reinterpret_cast<uintptr_t>(code)) * 1099511628211ull;
      key = (key ^ static_cast<uint32_t>(lasti[n])) * 1099511628211ull;
      ++n;
      Py_INCREF(f);
    } else {
      Py_DECREF(code);
    }
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference or NULL
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  uint32_t id = 0;
  if (n > 0) {
    SiteEntry& e = g_sites[key % kSiteSlots];
    if (e.key == key && e.id != 0) {
      id = e.id;
    } else {
      std::string json = "[";
      for (int i = 0; i < n; ++i) append_frame(json, codes[i], PyFrame_GetLineNumber(user[i]));
      json.push_back(']');
      id = rocprof::session::strings().intern_cached(json);
      e.key = key;
      e.id = id;
    }
  }
  for (int i = 0; i < n; ++i) {
    Py_DECREF(codes[i]);
    Py_DECREF(user[i]);
  }
  return id;
}

void bind(py::module_& m) {
  m.def("_cupti_set_callsite_prefixes", [](const std::string& prefixes) {
    delete g_skip_prefixes;
    g_skip_prefixes = new std::string(prefixes);
    for (auto& v : g_code) { Py_XDECREF(v.code); v = CodeVerdict{}; }
    for (auto& e : g_sites) e = SiteEntry{};
    rocprof::cupti::set_callsite_hook(&python_callsite);
  }, "internal: library path prefixes whose frames are not call sites; installs the hook");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
#endif  // ROCPROF_HAVE_CUPTI
