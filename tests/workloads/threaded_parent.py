"""A parent whose threads keep running while it starts a Python child with subprocess; the
child runs CODE (argv[1]) under `python -c`."""
import subprocess
import sys
import threading

stop = False


def spin():
    while not stop:
        sum(range(1000))


threads = [threading.Thread(target=spin) for _ in range(2)]
for t in threads:
    t.start()
try:
    subprocess.run([sys.executable, "-c", sys.argv[1]], check=True)
finally:
    stop = True
    for t in threads:
        t.join()
