"""Starts a Python child with subprocess and one with multiprocessing 'spawn'."""
import multiprocessing as mp
import subprocess
import sys

import roctx


def spawned(q):
    import roctx as r
    with r.range("spawned-work"):
        pass
    q.put(1)


if __name__ == "__main__":
    with roctx.range("parent-work"):
        subprocess.run([sys.executable, "-c",
                        "import roctx\nwith roctx.range('subprocess-work'):\n    pass\n"], check=True)
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        p = ctx.Process(target=spawned, args=(q,))
        p.start()
        q.get(timeout=60)
        p.join()
    print("done", p.exitcode)
