"""SIGPROF ownership around in-process sampling sessions. argv: MODE OUTDIR; prints JSON.
- restore: 15 short sessions at 10 kHz with a busy thread; after each, SIGPROF must be back to
  its default disposition (a tick left queued by a deleted timer would then kill us).
- chain: a program SIGPROF handler with an ITIMER_PROF timer is installed first; during the
  session it must keep receiving its signals; afterwards it must still be installed."""
import json
import signal
import sys
import threading
import time

import rocprof


def caught(sig):
    """Whether the process catches `sig` (SigCgt of /proc/self/status: the kernel's view)."""
    with open("/proc/self/status") as f:
        mask = int(next(line for line in f if line.startswith("SigCgt:")).split()[1], 16)
    return bool(mask >> (sig - 1) & 1)


def busy(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        sum(i * i for i in range(200))


def restore(out):
    result = {"before": caught(signal.SIGPROF), "during": [], "after": []}
    for i in range(15):
        with rocprof.profile(output_dir=f"{out}/r{i}", sample=10000):
            t = threading.Thread(target=busy, args=(0.03,))
            t.start()
            busy(0.03)
            result["during"].append(caught(signal.SIGPROF))
            t.join()
        result["after"].append(caught(signal.SIGPROF))
        busy(0.01)  # any tick delivered now would meet SIG_DFL
    return result


def chain(out):
    hits = [0]
    signal.signal(signal.SIGPROF, lambda *a: hits.__setitem__(0, hits[0] + 1))
    signal.setitimer(signal.ITIMER_PROF, 0.005, 0.005)
    with rocprof.profile(output_dir=out, sample=1000):
        busy(0.3)
        during = hits[0]
    busy(0.1)
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    return {"during": during, "after": hits[0] - during, "caught_after": caught(signal.SIGPROF)}


if __name__ == "__main__":
    print(json.dumps({"restore": restore, "chain": chain}[sys.argv[1]](sys.argv[2])))
