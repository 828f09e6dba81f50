"""The one fault guard of Python frame walks (cpp/capture/python/guard.*), for each of its users.
argv: MODE USERS OUTDIR; USERS is sampler, launch_sites or both. Prints JSON.
- walk: with the users started, walks from deliberately bad frame pointers (SIGSEGV, SIGBUS;
  on this thread with the GIL released as a GPU launch does, and inside a signal handler as a
  sampler tick does) come back as caught faults, and real walks still work afterwards.
- chain / chain_after_stop: faulthandler is installed before the users start; a fault outside
  any walk (while they run, or after they stopped) must still reach it: it prints its
  'Fatal Python error' and the process dies of SIGSEGV."""
import ctypes
import faulthandler
import json
import sys
import time

import rocprof
from rocprof import _core


def start(users, out):
    stops = []
    if users in ("launch_sites", "both"):
        from rocprof.capture import cupti

        _core._cupti_set_callsite_prefixes("\n".join(cupti.library_prefixes()))
        _core._launch_sites_start()
        stops.append(_core._launch_sites_stop)
    if users in ("sampler", "both"):
        session = rocprof.profile(output_dir=out, sample=1000)
        session.start()
        stops.append(session.stop)
    return stops


def site():
    return _core._launch_site_here()[2]


def walk(users, out):
    stops = start(users, out)
    got = {"installed": _core._pyframes_guard_installed(), "fault_code": _core._PYFRAMES_WALK_FAULT}
    got["walks"] = {f"{kind}/{'signal' if sig else 'thread'}": _core._pyframes_walk_bad(kind, sig)
                    for kind in ("segv", "bus") for sig in (False, True)}
    t0 = time.thread_time()
    while time.thread_time() - t0 < 0.2:  # sampled, with the guard having caught faults
        sum(i * i for i in range(200))
    if users != "sampler":
        got["site"] = site()
    got["installed_per_stop"] = []
    for stop in stops:
        stop()
        got["installed_per_stop"].append(_core._pyframes_guard_installed())
    return got


def chain(users, out, after_stop):
    faulthandler.enable()  # a SIGSEGV/SIGBUS handler installed before ours
    stops = start(users, out)
    print(json.dumps({"installed": _core._pyframes_guard_installed()}), flush=True)
    if after_stop:
        for stop in stops:
            stop()
        print(json.dumps({"installed": _core._pyframes_guard_installed()}), flush=True)
    ctypes.string_at(0)  # a fault outside any frame walk
    print("survived", flush=True)


if __name__ == "__main__":
    mode, users, out = sys.argv[1:4]
    if mode == "walk":
        print(json.dumps(walk(users, out)))
    else:
        chain(users, out, after_stop=mode == "chain_after_stop")
