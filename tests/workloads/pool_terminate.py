"""`with multiprocessing.Pool()` as commonly written: its __exit__ calls terminate(), which
SIGTERMs the workers. argv[1] is the start method. Prints the tasks' total."""
import multiprocessing as mp
import sys

import roctx


def task(i):
    with roctx.range("task"):
        return i


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    with ctx.Pool(3) as pool:
        total = sum(pool.map(task, range(180), chunksize=1))
    print("total", total, flush=True)
