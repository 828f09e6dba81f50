// rocprof._torch_observer's Python face (CPython's C API only, so that no pybind11 of ours meets
// the one PyTorch ships). Imported by rocprof.capture.autograd_sites once torch is imported;
// attach() takes rocprof._core._launch_site_api().
#include <Python.h>

#include <thread>

#include "capture/torch/memory.hpp"
#include "capture/torch/observer.hpp"

namespace obs = rocprof::torch_observer;
namespace mem = rocprof::torch_observer::memory;

namespace {

PyObject* attach(PyObject*, PyObject* capsule) {
  auto* api = static_cast<const rp_launch_site_api*>(
      PyCapsule_GetPointer(capsule, ROCPROF_LAUNCH_SITE_API_NAME));
  if (api == nullptr) return nullptr;  // not _core's capsule: TypeError/ValueError set
  if (!obs::attach(api)) {
    PyErr_Format(PyExc_RuntimeError,
                 "rocprof._core's launch-site services are of version %u, this observer "
                 "needs %u: rebuild rocprof",
                 api->version, ROCPROF_LAUNCH_SITE_API_VERSION);
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* detach(PyObject*, PyObject*) {
  obs::detach();
  Py_RETURN_NONE;
}

PyObject* stats(PyObject*, PyObject*) {
  const obs::Stats s = obs::stats();
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:O}", "forward_ops", s.forward_ops, "backward_ops",
                       s.backward_ops, "linked", s.linked, "no_python", s.no_python, "not_found",
                       s.not_found, "on", s.on ? Py_True : Py_False);
}

PyObject* debug_start(PyObject*, PyObject* arg) {
  const Py_ssize_t n = PyLong_AsSsize_t(arg);
  if (n < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "capacity must be >= 0");
    return nullptr;
  }
  obs::debug_start(static_cast<size_t>(n));
  Py_RETURN_NONE;
}

PyObject* debug_stop(PyObject*, PyObject*) {
  const obs::DebugEntry* log = nullptr;
  const size_t n = obs::debug_stop(&log);
  PyObject* out = PyList_New(static_cast<Py_ssize_t>(n));
  if (out == nullptr) return nullptr;
  for (size_t i = 0; i < n; ++i) {
    const obs::DebugEntry& e = log[i];
    PyObject* t = Py_BuildValue("(C,s,L,K)", e.kind, e.name, static_cast<long long>(e.seq),
                                static_cast<unsigned long long>(e.site));
    if (t == nullptr) {
      Py_DECREF(out);
      return nullptr;
    }
    PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), t);
  }
  return out;
}

PyObject* floor_callback(PyObject*, PyObject* arg) {
  const int on = PyObject_IsTrue(arg);
  if (on < 0) return nullptr;
  if (!obs::floor_callback(on != 0)) {
    PyErr_SetString(PyExc_RuntimeError, "PyTorch refused a RecordFunction callback");
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* allocator_init(PyObject*, PyObject*) {
  mem::try_attach();
  Py_RETURN_NONE;
}

PyObject* allocator_status(PyObject*, PyObject*) { return PyUnicode_FromString(mem::status()); }

// The CPU tests' stand-in for the allocator's trace hook (no CUDA here): one synthetic
// TraceEntry through the same on_action the real tracker calls, with the GIL released as
// PyTorch's ops release it, on this thread or on a new native thread (no Python frames, as
// autograd's device threads).
PyObject* standin_trace(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* kw[] = {"action", "device",        "address", "size",
                             "stream", "native_thread", "repeat",  nullptr};
  int action = 0, device = 0, native = 0;
  unsigned long long addr = 0, size = 0, stream = 0, repeat = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iiKK|KpK", const_cast<char**>(kw), &action,
                                   &device, &addr, &size, &stream, &native, &repeat))
    return nullptr;
  auto run = [=] {
    for (unsigned long long i = 0; i < repeat; ++i)
      mem::on_action(action, device, addr, size, stream);
  };
  Py_BEGIN_ALLOW_THREADS;
  if (native)
    std::thread(run).join();
  else
    run();
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

PyMethodDef g_methods[] = {
    {"attach", attach, METH_O,
     "attach(rocprof._core._launch_site_api()): link backward ops to forward ops while launch "
     "sites run"},
    {"detach", detach, METH_NOARGS, "stop following launch sites (the callbacks are removed)"},
    {"stats", stats, METH_NOARGS, "counts of this (or the last) session's ops"},
    {"_debug_start", debug_start, METH_O,
     "internal (tests): log up to N ops with the site a launch inside each would get"},
    {"_debug_stop", debug_stop, METH_NOARGS,
     "internal (tests): stop logging; [(kind 'B'|'F', op name, sequence number, site key)]"},
    {"_floor_callback", floor_callback, METH_O,
     "internal (benchmarks): add (True) or remove an empty RecordFunction callback on every op, "
     "registered as the forward ops' one is: PyTorch's own cost of observing ops"},
    {"_allocator_init", allocator_init, METH_NOARGS,
     "internal: attach the caching-allocator hook if the memory capture wants it and CUDA is "
     "initialised (queued on torch.cuda's lazy init)"},
    {"allocator_status", allocator_status, METH_NOARGS,
     "the caching-allocator hook: 'torch-caching-allocator', or 'none: <why>'"},
    {"_standin_trace", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(standin_trace)),
     METH_VARARGS | METH_KEYWORDS,
     "internal (tests, a stand-in for the allocator's trace hook): _standin_trace(action, device, "
     "address, size, stream=0, native_thread=False, repeat=1), action numbered as torch's "
     "TraceEntry; `repeat` times in a row (a burst)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "_torch_observer",
                        "Backward GPU work named by its forward op (PyTorch RecordFunction).",
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__torch_observer() {
  PyObject* m = PyModule_Create(&g_module);
  if (m == nullptr) return nullptr;
  if (PyModule_AddStringConstant(m, "TORCH_VERSION", ROCPROF_TORCH_VERSION) < 0 ||
      PyModule_AddIntConstant(m, "RING_SLOTS", rocprof::torch_observer::kRingSlots) < 0 ||
      PyModule_AddIntConstant(m, "ALLOCATOR_HOOK", mem::built() ? 1 : 0) < 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
