// The CUPTI backend's launch-site hooks (callsite.hpp) on top of the Python-frames module's
// launch sites (capture/python/launch_sites.hpp). Compiled into rocprof._core, not into
// librocprof_core: the backend only calls through the table that this installs.
#include "capture/cupti/callsite_python.hpp"

#include "capture/cupti/callsite.hpp"
#include "capture/python/launch_sites.hpp"

namespace rocprof::cupti {
namespace {

namespace ls = rocprof::launch_sites;

const CallsiteHooks g_hooks{&ls::capture, &ls::resolve, &ls::start, &ls::stop, &ls::stats};

}  // namespace

void install_python_callsite_hooks(const std::string& library_prefixes) {
  ls::set_library_prefixes(library_prefixes);
  set_callsite_hooks(&g_hooks);
}

}  // namespace rocprof::cupti
