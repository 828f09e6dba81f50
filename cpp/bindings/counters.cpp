// Per-kernel hardware counters' catalogue for Python (`rocprof avail`, the launcher's name
// checks): capture/cupti/counters_api.hpp, without vendor types.
#include "bindings/registry.hpp"

#ifdef ROCPROF_HAVE_CUPTI
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "capture/cupti/counters_api.hpp"

namespace py = pybind11;
namespace cc = rocprof::cupti;

namespace {

py::dict as_dict(const cc::CounterDevice& d) {
  py::list metrics;
  for (const cc::CounterMetric& m : d.metrics)
    metrics.append(py::dict(py::arg("name") = m.name, py::arg("type") = m.type,
                            py::arg("description") = m.description, py::arg("block") = m.hw_unit,
                            py::arg("units") = m.dim_unit, py::arg("submetrics") = m.submetrics));
  return py::dict(py::arg("index") = d.index, py::arg("name") = d.name, py::arg("chip") = d.chip,
                  py::arg("metrics") = metrics);
}

void bind(py::module_& m) {
  m.def(
      "counters_devices",
      [](bool submetrics) {
        std::vector<cc::CounterDevice> devices;
        std::string why;
        bool ok;
        {
          py::gil_scoped_release nogil;
          ok = cc::list_devices(submetrics, &devices, &why);
        }
        if (!ok) throw std::runtime_error(why);
        py::list out;
        for (const auto& d : devices) out.append(as_dict(d));
        return out;
      },
      py::arg("submetrics") = false,
      "the counters of every NVIDIA GPU here (initialises CUDA in this process); RuntimeError "
      "with the reason when there is none");
  m.def(
      "counters_chip",
      [](const std::string& chip, bool submetrics) {
        cc::CounterDevice d;
        std::string why;
        if (!cc::list_chip(chip, submetrics, &d, &why)) throw std::runtime_error(why);
        return as_dict(d);
      },
      py::arg("chip"), py::arg("submetrics") = false,
      "the counters CUPTI's tables hold for a chip (GH100, GA100, ...): no GPU needed");
  m.def(
      "counters_chips",
      [] {
        std::vector<std::string> chips;
        std::string why;
        if (!cc::counter_chips(&chips, &why)) throw std::runtime_error(why);
        return chips;
      },
      "chips whose counters this CUPTI knows");
  m.def(
      "counters_check",
      [](const std::string& chip, const std::vector<std::string>& names) {
        std::vector<std::string> problems;
        std::string why;
        if (!cc::check_metrics(chip, names, &problems, &why)) throw std::runtime_error(why);
        return problems;
      },
      py::arg("chip"), py::arg("names"),
      "per name, '' when CUPTI can collect it on the chip, else why not");
  m.def(
      "gpu_metrics_set",
      [](const std::string& chip, const std::string& set) {
        std::vector<cc::PmChoice> chosen;
        std::vector<std::string> left_out;
        std::string why;
        if (!cc::pm_sampling_set(chip, set, &chosen, &left_out, &why))
          throw std::runtime_error(why);
        py::list metrics;
        for (const cc::PmChoice& c : chosen)
          metrics.append(py::dict(py::arg("key") = c.key, py::arg("cupti_name") = c.cupti_name,
                                  py::arg("units") = c.units));
        return py::dict(py::arg("chip") = chip, py::arg("set") = set, py::arg("metrics") = metrics,
                        py::arg("left_out") = left_out);
      },
      py::arg("chip"), py::arg("set") = "default",
      "what --gpu-metrics-set samples on a chip (CUPTI's PM-sampling tables, no GPU): "
      "{chip, set, metrics: [{key, cupti_name, units}], left_out: [line]}");
}

rocprof::bindings::Register g_register(bind);

}  // namespace
#endif  // ROCPROF_HAVE_CUPTI
