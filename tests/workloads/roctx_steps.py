"""A long ROCTx-only loop (tests/integration/test_bounded_run.py): N steps, each a range NAME
(`step` by default; `{i}` in it is the step's number) around a nested range "work"; the steps
listed in --slow sleep 200 ms, every step --sleep-ms; --outer NAME wraps the whole loop in one
range NAME. Prints "ready" after the first 1,000 steps."""

import argparse
import contextlib
import time

import roctx


def main():
    p = argparse.ArgumentParser()
    p.add_argument("steps", type=int)
    p.add_argument("--slow", default="")
    p.add_argument("--name", default="step")
    p.add_argument("--outer", default="")
    p.add_argument("--sleep-ms", type=float, default=0)
    a = p.parse_args()
    slow = {int(s) for s in a.slow.split(",") if s}
    with roctx.range(a.outer) if a.outer else contextlib.nullcontext():
        for i in range(a.steps):
            with roctx.range(a.name.format(i=i)):
                with roctx.range("work"):
                    if i in slow:
                        time.sleep(0.2)
                    if a.sleep_ms:
                        time.sleep(a.sleep_ms / 1e3)
            if i == 1000:
                print("ready", flush=True)


if __name__ == "__main__":
    main()
