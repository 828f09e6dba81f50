// The AMD backend's launch-site hooks (callsite.hpp) over the shared Python launch-sites module.
// Compiled into rocprof._core, not librocprof_core (it reads CPython frames).
#include "capture/hsa/callsite.hpp"
#include "capture/python/launch_sites.hpp"

namespace rocprof::hsa {

namespace ls = rocprof::launch_sites;

void install_python_callsite_hooks(const std::string& library_prefixes) {
  static const CallsiteHooks hooks{&ls::capture, &ls::resolve, &ls::start, &ls::stop, &ls::stats};
  ls::set_library_prefixes(library_prefixes);
  set_callsite_hooks(&hooks);
}

}  // namespace rocprof::hsa
