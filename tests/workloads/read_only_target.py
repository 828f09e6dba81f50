"""A plain Python program for `rocprof attach --method read-only` (never started by rocprof):
busy() spins on its BUSY line until SIGUSR1 (or argv's `exit_after=SECONDS`); with `threads`,
worker() spins on its WORKER line on a second thread too. Prints "ready" once spinning and
"stopped" at the end, then exits with status 3. Standard library only, so that any Python on
the machine can run it."""
import signal
import sys
import threading

running = True


def stop(*_):
    global running
    running = False


def busy():
    n = 0
    while running: n += 1  # noqa: E701  BUSY
    return n


def worker():
    n = 0
    while running: n += 1  # noqa: E701  WORKER
    return n


signal.signal(signal.SIGUSR1, stop)
for arg in sys.argv[1:]:
    if arg.startswith("exit_after="):
        signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, float(arg.split("=", 1)[1]))
if "threads" in sys.argv[1:]:
    thread = threading.Thread(target=worker, name="spinner")
    thread.start()
print("ready", flush=True)
busy()
if "threads" in sys.argv[1:]:
    thread.join()
print("stopped", flush=True)
sys.exit(3)
