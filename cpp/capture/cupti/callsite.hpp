// The seam between the CUPTI backend and the Python bindings, free of vendor headers.
// The bindings (cpp/bindings/cupti.cpp) install a hook that, on the thread launching GPU
// work, returns the interned JSON call stack of the user's Python frames (0: none / no GIL).
// It runs inside a CUPTI API callback: it must not block and must be cheap (it caches).
#pragma once
#include <cstdint>

namespace rocprof::cupti {

using CallsiteHook = uint32_t (*)();
void set_callsite_hook(CallsiteHook hook) noexcept;

}  // namespace rocprof::cupti
