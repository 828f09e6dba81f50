// rocprof._core: session control, the roctx hot path and test hooks (other bindings/*.cpp add
// their parts through bindings/registry.hpp).
//
// Session control goes through pybind11 (rare calls). The roctx functions are on the hot
// path of user code, so they are plain CPython C functions (METH_O / METH_NOARGS): a
// pybind11 dispatch costs more than the whole record. roctx.range objects are immutable
// (a name and its interned id) and cached per name, so `with roctx.range("x"):` allocates
// nothing and works nested, recursively and across threads.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "capture/markers/markers.hpp"
#include "rocprof/record.hpp"
#include "rocprof/version.hpp"
#include "capture/settings.hpp"
#include "session/control.hpp"
#include "session/session.hpp"
#include "storage/sqlite_api.hpp"
#include "bindings/registry.hpp"

namespace py = pybind11;
namespace m = rocprof::markers;
namespace s = rocprof::session;

namespace {

// ---- roctx hot path (CPython C API) -------------------------------------------------

struct RangeObject {
  PyObject_HEAD PyObject* name;  // str
  PyObject* bound_enter;         // this object's __enter__, made once (see EnterDescriptor)
  bool cached;                   // held by the per-name cache, so lives for the process
  uint8_t recent;                // how many of the recent-name slots hold it
  uint32_t name_id;  // interned on first use inside a session; strings live for the process
};

PyTypeObject* g_range_type = nullptr;
PyObject* g_range_cache = nullptr;  // str → RangeObject
PyObject* g_decorate = nullptr;     // Python callable(range, function) → wrapper
constexpr Py_ssize_t kRangeCacheLimit = 8192;

bool utf8(PyObject* str, std::string_view* out) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(str, &n);
  if (p == nullptr) return false;
  *out = std::string_view(p, static_cast<size_t>(n));
  return true;
}

PyObject* range_enter(PyObject* self, PyObject*) {
  if (s::current() != nullptr) {
    auto* r = reinterpret_cast<RangeObject*>(self);
    if (r->name_id == 0) {
      std::string_view v;
      if (!utf8(r->name, &v)) return nullptr;
      r->name_id = m::intern(v);
    }
    m::push_id(r->name_id);
  }
  Py_INCREF(self);
  return self;
}

PyObject* range_exit(PyObject*, PyObject* const*, Py_ssize_t) {
  if (s::current() != nullptr) m::pop();
  Py_RETURN_NONE;  // never swallows the exception
}

PyObject* range_call(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (g_decorate == nullptr || kwargs != nullptr || PyTuple_GET_SIZE(args) != 1) {
    PyErr_SetString(PyExc_TypeError, "a roctx.range used as a decorator takes one function");
    return nullptr;
  }
  return PyObject_CallFunctionObjArgs(g_decorate, self, PyTuple_GET_ITEM(args, 0), nullptr);
}

void range_dealloc(PyObject* self) {
  Py_XDECREF(reinterpret_cast<RangeObject*>(self)->name);
  Py_XDECREF(reinterpret_cast<RangeObject*>(self)->bound_enter);
  PyTypeObject* tp = Py_TYPE(self);
  tp->tp_free(self);
  Py_DECREF(tp);
}

PyObject* range_repr(PyObject* self) {
  return PyUnicode_FromFormat("roctx.range(%R)", reinterpret_cast<RangeObject*>(self)->name);
}

PyObject* range_get_name(PyObject* self, void*) {
  PyObject* n = reinterpret_cast<RangeObject*>(self)->name;
  Py_INCREF(n);
  return n;
}

// `with` looks __enter__/__exit__ up on the type and binds them to the object: two method
// objects allocated and freed per `with`, a third of the statement's cost when no profiler
// runs. __exit__ needs no object (it pops the calling thread's stack), so the type holds it as
// a plain builtin function, which is never bound. __enter__ needs its range, so it is a
// descriptor that hands out a bound method made once per Range and kept on it.
PyMethodDef kEnterDef = {"__enter__", range_enter, METH_NOARGS, "Push the range on this thread."};
PyMethodDef kExitDef = {"__exit__",
                        reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(range_exit)),
                        METH_FASTCALL, "Pop the range."};

PyObject* enter_descr_get(PyObject* descr, PyObject* obj, PyObject*) {
  if (obj == nullptr || !PyObject_TypeCheck(obj, g_range_type)) {
    Py_INCREF(descr);
    return descr;
  }
  auto* r = reinterpret_cast<RangeObject*>(obj);
  // Keeping the bound method on the Range makes a cycle (Range ↔ method) that nothing
  // collects, so only Ranges that a cache holds keep one (the per-name cache's live for the
  // process; a recent-name slot breaks the cycle when it lets go); others get a fresh one per
  // use, as any method would.
  if (!r->cached && r->recent == 0) return PyCFunction_New(&kEnterDef, obj);
  if (r->bound_enter == nullptr) {
    r->bound_enter = PyCFunction_New(&kEnterDef, obj);
    if (r->bound_enter == nullptr) return nullptr;
  }
  Py_INCREF(r->bound_enter);
  return r->bound_enter;
}

// `Range.__enter__(r)`: what contextlib.ExitStack, AsyncExitStack and other code that drives
// context managers generically call (they look the method up on the type, unbound).
PyObject* enter_descr_call(PyObject*, PyObject* args, PyObject* kwargs) {
  if (kwargs != nullptr || PyTuple_GET_SIZE(args) != 1 ||
      !PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), g_range_type)) {
    PyErr_SetString(PyExc_TypeError, "Range.__enter__ takes one roctx.range");
    return nullptr;
  }
  return range_enter(PyTuple_GET_ITEM(args, 0), nullptr);
}

PyType_Slot kEnterDescrSlots[] = {{Py_tp_descr_get, reinterpret_cast<void*>(enter_descr_get)},
                                  {Py_tp_call, reinterpret_cast<void*>(enter_descr_call)},
                                  {Py_tp_doc, const_cast<char*>("Push the range on this thread.")},
                                  {0, nullptr}};
PyType_Spec kEnterDescrSpec = {"rocprof._core.EnterDescriptor", sizeof(PyObject), 0,
                               Py_TPFLAGS_DEFAULT, kEnterDescrSlots};

// Installs __enter__ (descriptor) and __exit__ (unbound builtin) on the Range type.
bool install_context_methods(PyTypeObject* type) {
  PyObject* descr_type = PyType_FromSpec(&kEnterDescrSpec);
  if (descr_type == nullptr) return false;
  PyObject* descr = PyType_GenericAlloc(reinterpret_cast<PyTypeObject*>(descr_type), 0);
  Py_DECREF(descr_type);
  PyObject* exit_fn = PyCFunction_New(&kExitDef, nullptr);
  const bool ok =
      descr != nullptr && exit_fn != nullptr &&
      PyObject_SetAttrString(reinterpret_cast<PyObject*>(type), "__enter__", descr) == 0 &&
      PyObject_SetAttrString(reinterpret_cast<PyObject*>(type), "__exit__", exit_fn) == 0;
  Py_XDECREF(descr);
  Py_XDECREF(exit_fn);
  return ok;
}

PyObject* py_range(PyObject*, PyObject* arg);
PyObject* g_range_fn = nullptr;  // roctx.range itself (rocprof._core.range)

// A Range is immutable and found by its name: a copy, a deep copy or an unpickled one is
// roctx.range(name) (in this process the very same cached object).
PyObject* range_reduce(PyObject* self, PyObject*) {
  return Py_BuildValue("(O(O))", g_range_fn, reinterpret_cast<RangeObject*>(self)->name);
}

// roctx.Range(message) is roctx.range(message): a Range without its name cannot exist.
PyObject* range_new(PyTypeObject*, PyObject* args, PyObject* kwargs) {
  if ((kwargs != nullptr && PyDict_GET_SIZE(kwargs) != 0) || PyTuple_GET_SIZE(args) != 1) {
    PyErr_SetString(PyExc_TypeError, "roctx.Range() takes one message string");
    return nullptr;
  }
  return py_range(nullptr, PyTuple_GET_ITEM(args, 0));
}

PyMethodDef kRangeMethods[] = {
    {"__reduce__", range_reduce, METH_NOARGS, "roctx.range(name): ranges are found by name."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef kRangeGetSet[] = {{"name", range_get_name, nullptr, "the range's message", nullptr},
                              {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kRangeSlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(range_dealloc)},
    {Py_tp_getset, kRangeGetSet},
    {Py_tp_methods, kRangeMethods},
    {Py_tp_new, reinterpret_cast<void*>(range_new)},
    {Py_tp_call, reinterpret_cast<void*>(range_call)},
    {Py_tp_repr, reinterpret_cast<void*>(range_repr)},
    {Py_tp_doc,
     const_cast<char*>("A ROCTx range: `with roctx.range(msg):` or `@roctx.range(msg)`.")},
    {0, nullptr}};

PyType_Spec kRangeSpec = {"rocprof._core.Range", sizeof(RangeObject), 0, Py_TPFLAGS_DEFAULT,
                          kRangeSlots};

PyObject* new_range(PyObject* name) {
  auto* r = PyObject_New(RangeObject, g_range_type);
  if (r == nullptr) return nullptr;
  Py_INCREF(name);
  r->name = name;
  r->bound_enter = nullptr;
  r->cached = false;
  r->recent = 0;
  r->name_id = 0;
  return reinterpret_cast<PyObject*>(r);
}

// In front of the per-name cache: the last few message objects seen, by address. A call
// site's literal is the same str object on every call, so most calls skip hashing and the
// dict probe (a third of `with roctx.range("x")` when no profiler runs). Each slot holds a
// reference to its key, so a cached address is never reused by another object, and one to
// its Range: once the per-name cache is full (a program naming ranges by step), a literal's
// Range still comes from here, made once instead of on every call. The GIL guards it as it
// guards the dict.
struct RecentName {
  PyObject* key;
  PyObject* range;
};
constexpr uintptr_t kRecentNames = 64;
RecentName g_recent[kRecentNames];

inline RecentName& recent_slot(PyObject* key) {
  return g_recent[(reinterpret_cast<uintptr_t>(key) >> 4) & (kRecentNames - 1)];
}

void remember(RecentName& slot, PyObject* key, PyObject* range) {
  Py_INCREF(key);
  Py_XSETREF(slot.key, key);
  Py_INCREF(range);
  reinterpret_cast<RangeObject*>(range)->recent++;
  if (auto* old = reinterpret_cast<RangeObject*>(slot.range)) {
    slot.range = nullptr;
    // The slot let go: an uncached Range's bound __enter__ goes, or the two would keep each
    // other alive.
    if (--old->recent == 0 && !old->cached) Py_CLEAR(old->bound_enter);
    Py_DECREF(reinterpret_cast<PyObject*>(old));
  }
  slot.range = range;
}

PyObject* cached_range(PyObject* name) {
  PyObject* r = PyDict_GetItemWithError(g_range_cache, name);  // borrowed
  if (r != nullptr) {
    Py_INCREF(r);
  } else {
    if (PyErr_Occurred()) return nullptr;
    r = new_range(name);
    if (r == nullptr) return nullptr;
    if (PyDict_GET_SIZE(g_range_cache) < kRangeCacheLimit) {
      if (PyDict_SetItem(g_range_cache, name, r) < 0) {
        Py_DECREF(r);
        return nullptr;
      }
      reinterpret_cast<RangeObject*>(r)->cached = true;
    }
  }
  remember(recent_slot(name), name, r);
  return r;
}

PyObject* py_range(PyObject*, PyObject* arg) {
  const RecentName& hit = recent_slot(arg);
  if (hit.key == arg) {
    Py_INCREF(hit.range);
    return hit.range;
  }
  if (PyUnicode_CheckExact(arg)) return cached_range(arg);
  if (PyUnicode_Check(arg)) return new_range(arg);
  if (PyCallable_Check(arg)) {  // bare @roctx.range: named after the function
    PyObject* name = PyObject_GetAttrString(arg, "__qualname__");
    if (name == nullptr || !PyUnicode_Check(name)) {
      Py_XDECREF(name);
      PyErr_Clear();
      name = PyObject_Str(arg);
      if (name == nullptr) return nullptr;
    }
    PyObject* r = new_range(name);
    Py_DECREF(name);
    if (r == nullptr) return nullptr;
    PyObject* wrapped = PyObject_CallFunctionObjArgs(g_decorate, r, arg, nullptr);
    Py_DECREF(r);
    return wrapped;
  }
  PyErr_Format(PyExc_TypeError, "roctx.range() takes a message string or a function, not %.100s",
               Py_TYPE(arg)->tp_name);
  return nullptr;
}

PyObject* py_push(PyObject*, PyObject* arg) {
  if (s::current() == nullptr) return PyLong_FromLong(-1);
  std::string_view v;
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "roctx.push() takes a message string");
    return nullptr;
  }
  if (!utf8(arg, &v)) return nullptr;
  return PyLong_FromLong(m::push(v));
}

PyObject* py_pop(PyObject*, PyObject*) { return PyLong_FromLong(m::pop()); }

PyObject* py_mark(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "roctx.mark() takes a message string");
    return nullptr;
  }
  if (s::recording()) {
    std::string_view v;
    if (!utf8(arg, &v)) return nullptr;
    m::mark(v);
  }
  Py_RETURN_NONE;
}

PyObject* py_start(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "roctx.start() takes a message string");
    return nullptr;
  }
  if (!s::recording()) return PyLong_FromLong(0);
  std::string_view v;
  if (!utf8(arg, &v)) return nullptr;
  return PyLong_FromUnsignedLongLong(m::start(v));
}

PyObject* py_stop(PyObject*, PyObject* arg) {
  const unsigned long long id = PyLong_AsUnsignedLongLong(arg);
  if (id == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return nullptr;
  m::stop(id);
  Py_RETURN_NONE;
}

PyObject* py_pause(PyObject*, PyObject* const*, Py_ssize_t) {
  m::pause();
  Py_RETURN_NONE;
}

PyObject* py_resume(PyObject*, PyObject* const*, Py_ssize_t) {
  m::resume();
  Py_RETURN_NONE;
}

PyObject* py_name_thread(PyObject*, PyObject* arg) {
  if (!PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "roctx.name_thread() takes a name string");
    return nullptr;
  }
  std::string_view v;
  if (!utf8(arg, &v)) return nullptr;
  m::name_thread(v);
  Py_RETURN_NONE;
}

// _name_object(target, object, name): roctxNameHipDevice/HipStream/HsaAgent's one path.
PyObject* py_name_object(PyObject*, PyObject* args) {
  unsigned int target = 0;
  unsigned long long object = 0;
  PyObject* name = nullptr;
  if (!PyArg_ParseTuple(args, "IKU", &target, &object, &name)) return nullptr;
  std::string_view v;
  if (!utf8(name, &v)) return nullptr;
  m::name_object(target, object, v);
  Py_RETURN_NONE;
}

PyObject* py_thread_id(PyObject*, PyObject*) { return PyLong_FromUnsignedLong(m::thread_id()); }

PyObject* py_set_decorator(PyObject*, PyObject* fn) {
  Py_XDECREF(g_decorate);
  Py_INCREF(fn);
  g_decorate = fn;
  Py_RETURN_NONE;
}

#define ROCPROF_FASTCALL(f) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f))
PyMethodDef kRoctxMethods[] = {
    {"range", py_range, METH_O, "range(message) -> context manager / decorator"},
    {"push", py_push, METH_O, "push(message) -> depth"},
    {"pop", py_pop, METH_NOARGS, "pop() -> depth"},
    {"mark", py_mark, METH_O, "mark(message)"},
    {"start", py_start, METH_O, "start(message) -> range id"},
    {"stop", py_stop, METH_O, "stop(range_id)"},
    {"pause", ROCPROF_FASTCALL(py_pause), METH_FASTCALL, "pause([tid]): drop records until resume"},
    {"resume", ROCPROF_FASTCALL(py_resume), METH_FASTCALL, "resume([tid])"},
    {"name_thread", py_name_thread, METH_O, "name_thread(name)"},
    {"get_thread_id", py_thread_id, METH_NOARGS, "OS thread id of the caller"},
    {"_name_object", py_name_object, METH_VARARGS,
     "internal: _name_object(target, object, name) (roctx.name_hip_device etc.)"},
    {"_set_decorator", py_set_decorator, METH_O, "internal: the range decorator factory"},
    {nullptr, nullptr, 0, nullptr}};

// ---- session control (pybind11) ----------------------------------------------------

s::Config make_config(const std::string& output_template, const std::vector<std::string>& argv,
                      bool strict, const std::string& options_json,
                      const std::map<std::string, std::string>& metadata, uint32_t ring_capacity,
                      uint32_t flush_ms, uint32_t commit_ms, bool null_sink, bool follow_fork,
                      const rocprof::CaptureSettings& settings, uint64_t buffer_budget_mb,
                      bool guid_per_row) {
  s::Config cfg;
  cfg.guid_per_row = guid_per_row;
  cfg.output_template = output_template;
  cfg.argv = argv;
  cfg.strict = strict;
  cfg.options_json = options_json;
  cfg.metadata.assign(metadata.begin(), metadata.end());
  if (ring_capacity < 16 || ring_capacity > (1u << 24))
    throw std::invalid_argument("ring_capacity must be between 16 and 16777216 records");
  if (flush_ms < 1 || commit_ms < 1)
    throw std::invalid_argument("flush_ms and commit_ms must be at least 1");
  uint32_t cap = 16;
  while (cap < ring_capacity) cap <<= 1;
  cfg.collector.ring_capacity = cap;
  if (buffer_budget_mb < 1 || buffer_budget_mb > (1ull << 20))
    throw std::invalid_argument("buffer_budget_mb must be between 1 and 1048576 MiB");
  cfg.collector.buffer_budget_bytes = buffer_budget_mb << 20;
  cfg.collector.flush_interval_ms = flush_ms;
  cfg.collector.commit_interval_ms = commit_ms;
  cfg.null_sink = null_sink;
  cfg.follow_fork = follow_fork;
  cfg.settings = settings;
  return cfg;
}

std::string start_session(const std::string& output_template, const std::vector<std::string>& argv,
                          bool strict, const std::string& options_json,
                          const std::map<std::string, std::string>& metadata,
                          uint32_t ring_capacity, uint32_t flush_ms, uint32_t commit_ms,
                          bool null_sink, bool follow_fork,
                          const rocprof::CaptureSettings& settings, uint64_t buffer_budget_mb,
                          bool guid_per_row, bool open_on_drain_thread) {
  s::Config cfg =
      make_config(output_template, argv, strict, options_json, metadata, ring_capacity, flush_ms,
                  commit_ms, null_sink, follow_fork, settings, buffer_budget_mb, guid_per_row);
  cfg.collector.open_on_drain_thread = open_on_drain_thread;
  std::string error;
  bool ok;
  {
    py::gil_scoped_release nogil;
    ok = s::start(cfg, &error);
  }
  if (!ok) throw std::runtime_error(error);
  return s::current_path();
}

// --on-demand: the session's configuration is kept for windows that `rocprof ctl` starts
// (session/control.hpp); nothing records until then. Returns the control socket's path.
std::string arm_on_demand(const std::string& output_template, const std::vector<std::string>& argv,
                          bool strict, const std::string& options_json,
                          const std::map<std::string, std::string>& metadata,
                          uint32_t ring_capacity, uint32_t flush_ms, uint32_t commit_ms,
                          bool follow_fork, const rocprof::CaptureSettings& settings,
                          uint64_t buffer_budget_mb, bool guid_per_row) {
  const s::Config cfg =
      make_config(output_template, argv, strict, options_json, metadata, ring_capacity, flush_ms,
                  commit_ms, false, follow_fork, settings, buffer_budget_mb, guid_per_row);
  std::string why;
  if (!rocprof::capture::validate(cfg.settings, &why)) throw std::invalid_argument(why);
  std::string error;
  if (!s::control::arm(cfg, &error)) throw std::runtime_error(error);
  return s::control::socket_path();
}

}  // namespace

PYBIND11_MODULE(_core, mod) {
  mod.doc() = "rocprof native core: sessions, records, the rocpd writer";
  mod.attr("__version__") = rocprof::kVersion;
  mod.attr("RECORD_FORMAT_VERSION") = rocprof::kRecordFormatVersion;

  g_range_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kRangeSpec));
  if (g_range_type == nullptr || !install_context_methods(g_range_type))
    throw py::error_already_set();
  g_range_cache = PyDict_New();
  mod.attr("Range") = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(g_range_type));
  if (PyModule_AddFunctions(mod.ptr(), kRoctxMethods) < 0) throw py::error_already_set();
  g_range_fn = PyObject_GetAttrString(mod.ptr(), "range");
  if (g_range_fn == nullptr) throw py::error_already_set();
  // Backends with Python-facing functions (and the settings classes, which start_session's
  // default argument needs) add them from their own bindings/<name>.cpp, first.
  for (rocprof::bindings::BindFn fn : rocprof::bindings::registered()) fn(mod);

  mod.def("start_session", &start_session, py::arg("output_template"),
          py::arg("argv") = std::vector<std::string>{}, py::arg("strict") = false,
          py::arg("options_json") = "{}",
          py::arg("metadata") = std::map<std::string, std::string>{},
          py::arg("ring_capacity") = 1u << 14, py::arg("flush_ms") = 20, py::arg("commit_ms") = 250,
          py::arg("null_sink") = false, py::arg("follow_fork") = true,
          py::arg("settings") = rocprof::CaptureSettings{}, py::arg("buffer_budget_mb") = 2048,
          py::arg("guid_per_row") = false, py::arg("open_on_drain_thread") = false,
          "Start the process's session; returns the database path. open_on_drain_thread: the file "
          "is claimed here and its schema written by the drain thread (a failure there is said on "
          "stderr, not raised).");
  mod.def(
      "load_sqlite_of",
      [](const std::string& module) {
        std::string error;
        if (!rocprof::sql::load_sqlite_of(module, &error)) throw std::runtime_error(error);
      },
      py::arg("module"),
      "Map Python's _sqlite3 extension (its file) without running it: the writer then binds to "
      "the SQLite library Python's sqlite3 uses.");
  mod.def("arm_on_demand", &arm_on_demand, py::arg("output_template"),
          py::arg("argv") = std::vector<std::string>{}, py::arg("strict") = false,
          py::arg("options_json") = "{}",
          py::arg("metadata") = std::map<std::string, std::string>{},
          py::arg("ring_capacity") = 1u << 14, py::arg("flush_ms") = 20, py::arg("commit_ms") = 250,
          py::arg("follow_fork") = true, py::arg("settings") = rocprof::CaptureSettings{},
          py::arg("buffer_budget_mb") = 2048, py::arg("guid_per_row") = false,
          "Arm on-demand capture (rocprof ctl starts windows); returns the control socket.");
  mod.def("disarm_on_demand", &s::control::disarm, py::call_guard<py::gil_scoped_release>(),
          "End the running window (its database completed) and close the control socket.");
  mod.def("on_demand_socket", &s::control::socket_path,
          "The control socket of this process ('' when not armed).");
  mod.def(
      "buffer_stats",
      [] {
        rocprof::Collector* c = s::current();
        py::dict d;
        if (c != nullptr) {
          d["budget_bytes"] = c->pool().budget_bytes();
          d["resident_bytes"] = c->pool().resident_bytes();
          d["peak_bytes"] = c->pool().peak_bytes();
          d["chunk_bytes"] = c->pool().chunk_bytes();
        }
        return d;
      },
      "Record buffer memory of the running session (empty when none).");
  mod.def(
      "stop_session", [] { s::stop(); }, py::call_guard<py::gil_scoped_release>(),
      "Drain, commit and close the database.");
  mod.def("flush", &s::flush, py::call_guard<py::gil_scoped_release>(),
          "Wait until everything recorded so far is committed.");
  mod.def("active", [] { return s::current() != nullptr; });
  mod.def("paused", [] { return m::paused(); });
  mod.def("path", &s::current_path);
  mod.def("dropped", [] {
    rocprof::Collector* c = s::current();
    return c ? c->dropped_total() : 0;
  });
  mod.def("records_written", [] {
    rocprof::Collector* c = s::current();
    return c ? c->records_written() : 0;
  });
  mod.def(
      "backends",
      [](const std::string& only) {
        py::list out;
        for (const auto& b : s::backend_statuses(only))
          out.append(py::make_tuple(b.name, b.compiled, b.live, b.reason));
        return out;
      },
      py::arg("name") = "");
  // Benchmark and test-only functions live in rocprof._core_testing (bindings/testing/). The
  // parts a shipped _core keeps for tests and fixtures are bound on first use (PEP 562).
  mod.def(
      "__getattr__",
      [self = py::handle(mod)](const std::string& name) -> py::object {
        for (auto& part : rocprof::bindings::deferred()) {
          if (part.bound) continue;
          for (const std::string& n : part.names) {
            if (n != name) continue;
            auto core =
                py::reinterpret_borrow<py::module_>(self);  // lives as long as this function
            part.bound = true;
            part.fn(core);
            return core.attr(name.c_str());
          }
        }
        throw py::attribute_error("module 'rocprof._core' has no attribute '" + name + "'");
      },
      py::arg("name"));
}
