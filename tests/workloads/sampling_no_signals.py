"""Sampling workload: CPU-bound Python on the main thread and on short threads that start and
end during the session, then whether the process catches SIGPROF (its mask in /proc)."""
import signal
import sys
import threading
import time


def spin(seconds):
    t0 = time.thread_time()
    x = 0
    while time.thread_time() - t0 < seconds:
        x += sum(range(300))


def short_worker(seconds):
    spin(seconds)


def sigprof_caught():
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith("SigCgt:"))
    return (int(line.split()[1], 16) >> (signal.SIGPROF - 1)) & 1


def reader_blocks_faults():
    """Whether the sampler's reader thread (if any) blocks SIGSEGV: a fault of its guarded
    walks would then kill the process instead of reaching the guard."""
    import os

    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().strip() != "rocprof-reader":
                    continue
            with open(f"/proc/self/task/{tid}/status") as f:
                line = next(x for x in f if x.startswith("SigBlk:"))
        except OSError:
            continue
        return (int(line.split()[1], 16) >> (signal.SIGSEGV - 1)) & 1
    return None


def main():
    seconds, threads = float(sys.argv[1]), int(sys.argv[2])
    spin(seconds)
    caught = sigprof_caught()  # while sampled
    blocks = reader_blocks_faults()
    for _ in range(threads):  # one at a time: each ends (its state freed) before the next
        t = threading.Thread(target=short_worker, args=(seconds / threads,))
        t.start()
        t.join()
    print(f"sigprof caught {caught}")
    print(f"reader blocks segv {blocks}")


if __name__ == "__main__":
    main()
