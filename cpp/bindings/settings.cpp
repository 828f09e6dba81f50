// The typed capture settings (capture/settings.hpp) as Python classes: the launcher fills
// them from its options (rocprof.backends) and hands them to start_session.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/registry.hpp"
#include "capture/activity.hpp"
#include "capture/settings.hpp"

namespace py = pybind11;

namespace {

template <class T>
void fields_as_kwargs(T& self, const py::kwargs& kw) {
  py::object o = py::cast(&self, py::return_value_policy::reference);
  for (auto item : kw) {
    const std::string key = py::str(item.first);
    if (!py::hasattr(o, key.c_str())) throw py::type_error("unknown setting " + key);
    o.attr(key.c_str()) = item.second;
  }
}

// A backend's activities as Python sees them: a sorted list of names (rocprof._core.Activity's
// member names); set from any iterable of names, refusing one the backend cannot record.
template <class S>
void activities_property(py::class_<S>& cls) {
  cls.def_property(
         "activities",
         [](const S& self) {
           std::vector<std::string> out;
           for (const rocprof::ActivityInfo& info : rocprof::kActivities)
             if (self.activities.has(info.id)) out.emplace_back(info.name);
           return out;
         },
         [](S& self, const py::iterable& names) {
           rocprof::ActivitySet set;
           for (py::handle h : names) {
             const std::string name = py::hasattr(h, "name") ? py::str(h.attr("name")) : py::str(h);
             rocprof::Activity a;
             if (!rocprof::parse_activity(name, &a) || !S::kSupported.has(a))
               throw py::value_error("activity '" + name + "' is not one this backend records");
             set.set(a, true);
           }
           self.activities = set;
         },
         "the activities recorded (names of rocprof._core.Activity)")
      .def_property_readonly_static(
          "SUPPORTED",
          [](const py::object&) {
            std::vector<std::string> out;
            for (const rocprof::ActivityInfo& info : rocprof::kActivities)
              if (S::kSupported.has(info.id)) out.emplace_back(info.name);
            return out;
          },
          "the activities this backend can record");
}

void bind_activities(py::module_& m) {
  py::enum_<rocprof::Activity> e(m, "Activity", "what a session can record (capture/activity.hpp)");
  for (const rocprof::ActivityInfo& info : rocprof::kActivities) e.value(info.name, info.id);
  m.def(
      "activities",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const rocprof::ActivityInfo& info : rocprof::kActivities)
          out.emplace_back(info.name, info.description);
        return out;
      },
      "[(name, description)] of every activity, in the order of rocprof._core.Activity");
}

void bind(py::module_& m) {
  bind_activities(m);
  using rocprof::CaptureSettings, rocprof::CuptiSettings, rocprof::SamplingSettings;
  using rocprof::KernelNameSettings;
  py::class_<KernelNameSettings>(m, "KernelNameSettings",
                                 "how every GPU backend names and picks its kernels")
      .def(py::init([](const py::kwargs& kw) {
        KernelNameSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readwrite("truncate", &KernelNameSettings::truncate)
      .def_readwrite("mangled", &KernelNameSettings::mangled)
      .def_readwrite("include", &KernelNameSettings::include)
      .def_readwrite("exclude", &KernelNameSettings::exclude);
  py::class_<CuptiSettings> cupti(m, "CuptiSettings", "NVIDIA GPU tracing: what CUPTI records");
  activities_property(cupti);
  cupti
      .def(py::init([](const py::kwargs& kw) {
        CuptiSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readwrite("enabled", &CuptiSettings::enabled)
      .def_readwrite("launch_sites", &CuptiSettings::launch_sites)
      .def_readwrite("region", &CuptiSettings::region)
      .def_readwrite("callbacks", &CuptiSettings::callbacks)
      .def_readwrite("timestamp", &CuptiSettings::timestamp)
      .def_readwrite("process", &CuptiSettings::process)
      .def_readwrite("runtime_queries", &CuptiSettings::runtime_queries)
      .def_readwrite("graph_trace", &CuptiSettings::graph_trace)
      .def_readwrite("flush_ms", &CuptiSettings::flush_ms)
      .def_readwrite("buffer_mb", &CuptiSettings::buffer_mb)
      .def_readwrite("library_candidates", &CuptiSettings::library_candidates);
  py::class_<SamplingSettings>(m, "SamplingSettings", "call-stack sampling")
      .def(py::init([](const py::kwargs& kw) {
        SamplingSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readonly_static("DEFAULT_HZ", &SamplingSettings::kDefaultHz)
      .def_readwrite("hz", &SamplingSettings::hz)
      .def_readwrite("wall", &SamplingSettings::wall)
      .def_readwrite("native", &SamplingSettings::native)
      .def_readwrite("method", &SamplingSettings::method)
      .def_readwrite("launcher_file", &SamplingSettings::launcher_file)
      .def_readwrite("runpy_file", &SamplingSettings::runpy_file);
  py::class_<rocprof::MetricsSettings>(m, "MetricsSettings",
                                       "device and host metrics over time (--process-freq)")
      .def(py::init([](const py::kwargs& kw) {
        rocprof::MetricsSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readonly_static("DEFAULT_HZ", &rocprof::MetricsSettings::kDefaultHz)
      .def_readonly_static("MAX_HZ", &rocprof::MetricsSettings::kMaxHz)
      .def_readonly_static("ENERGY_HZ", &rocprof::MetricsSettings::kEnergyHz)
      .def_readwrite("hz", &rocprof::MetricsSettings::hz)
      .def_readwrite("energy_hz", &rocprof::MetricsSettings::energy_hz)
      .def_readwrite("gpus", &rocprof::MetricsSettings::gpus)
      .def_readwrite("cpus", &rocprof::MetricsSettings::cpus);
  py::class_<rocprof::BoundedSettings>(m, "BoundedSettings", "bounded runs (--max-size, --keep)")
      .def(py::init<>())
      .def_readwrite("max_size", &rocprof::BoundedSettings::max_size)
      .def_readwrite("keep", &rocprof::BoundedSettings::keep);
  py::class_<rocprof::MarkersSettings>(m, "MarkersSettings", "ROCTx")
      .def(py::init<>())
      .def_readwrite("start_paused", &rocprof::MarkersSettings::start_paused)
      .def_readwrite("kernel_rename", &rocprof::MarkersSettings::kernel_rename)
      .def_readwrite("redact_text", &rocprof::MarkersSettings::redact_text);
  using rocprof::HsaSettings;  // AMD
  py::class_<HsaSettings> hsa(m, "HsaSettings", "AMD GPU tracing: HSA tools interface and HIP");
  activities_property(hsa);
  hsa.def(py::init([](const py::kwargs& kw) {
       HsaSettings s;
       fields_as_kwargs(s, kw);
       return s;
     }))
      .def_readwrite("enabled", &HsaSettings::enabled)
      .def_readwrite("launch_sites", &HsaSettings::launch_sites)
      .def_readwrite("region", &HsaSettings::region);
  py::class_<rocprof::CounterSettings>(m, "CounterSettings",
                                       "per-kernel hardware counters (serialises kernels)")
      .def(py::init([](const py::kwargs& kw) {
        rocprof::CounterSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readonly_static("MAX_METRICS", &rocprof::CounterSettings::kMaxMetrics)
      .def_readwrite("metrics", &rocprof::CounterSettings::metrics)
      .def_readwrite("origin", &rocprof::CounterSettings::origin)
      .def_readwrite("kernel_include", &rocprof::CounterSettings::kernel_include)
      .def_readwrite("kernel_exclude", &rocprof::CounterSettings::kernel_exclude);
  using rocprof::PcSamplingSettings;
  py::class_<PcSamplingSettings>(m, "PcSamplingSettings",
                                 "PC sampling: samples per instruction and stall reason")
      .def(py::init([](const py::kwargs& kw) {
        PcSamplingSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readwrite("enabled", &PcSamplingSettings::enabled)
      .def_readwrite("method", &PcSamplingSettings::method)
      .def_readwrite("unit", &PcSamplingSettings::unit)
      .def_readwrite("interval", &PcSamplingSettings::interval)
      .def_readwrite("poll_ms", &PcSamplingSettings::poll_ms);
  using rocprof::GpuMetricsSettings;
  py::class_<GpuMetricsSettings>(m, "GpuMetricsSettings",
                                 "GPU hardware metrics over time (PM sampling)")
      .def(py::init([](const py::kwargs& kw) {
        GpuMetricsSettings s;
        fields_as_kwargs(s, kw);
        return s;
      }))
      .def_readonly_static("DEFAULT_HZ", &GpuMetricsSettings::kDefaultHz)
      .def_readonly_static("MAX_HZ", &GpuMetricsSettings::kMaxHz)
      .def_readwrite("hz", &GpuMetricsSettings::hz)
      .def_readwrite("set", &GpuMetricsSettings::set)
      .def_readwrite("decode_ms", &GpuMetricsSettings::decode_ms)
      .def_readwrite("buffer_mb", &GpuMetricsSettings::buffer_mb);
  py::class_<rocprof::TorchMemorySettings>(
      m, "TorchMemorySettings", "PyTorch's caching allocator actions (--memory-allocation-trace)")
      .def(py::init<>())
      .def_readwrite("enabled", &rocprof::TorchMemorySettings::enabled);
  py::class_<CaptureSettings>(m, "CaptureSettings", "every backend's settings")
      .def(py::init<>())
      .def_readwrite("kernel_names", &CaptureSettings::kernel_names)
      .def_readwrite("cupti", &CaptureSettings::cupti)
      .def_readwrite("sampling", &CaptureSettings::sampling)
      .def_readwrite("markers", &CaptureSettings::markers)
      .def_readwrite("counters", &CaptureSettings::counters)
      .def_readwrite("hsa", &CaptureSettings::hsa)
      .def_readwrite("metrics", &CaptureSettings::metrics)
      .def_readwrite("pc_sampling", &CaptureSettings::pc_sampling)
      .def_readwrite("bounded", &CaptureSettings::bounded)
      .def_readwrite("torch_memory", &CaptureSettings::torch_memory)
      .def_readwrite("gpu_metrics", &CaptureSettings::gpu_metrics)
      .def(
          "validate",
          [](const CaptureSettings& s) {
            std::string error;
            if (!rocprof::capture::validate(s, &error)) throw py::value_error(error);
          },
          "raise ValueError (one line naming the option) when a setting is invalid")
      .def("to_text", &rocprof::capture::to_text,
           "the text form native programs read (ROCPROF_AUTOSTART_OPTIONS)")
      .def_static("from_text", [](const std::string& text) {
        CaptureSettings s;
        std::string error;
        if (!rocprof::capture::parse_text(text, '\n', "", &s, &error)) throw py::value_error(error);
        return s;
      });
}

rocprof::bindings::Register g_register(bind);

}  // namespace
