"""Sampling workload: ~70% of CPU time in hot_a, ~30% in hot_b (by iteration counts measured
with time.thread_time, so the split holds on a loaded machine). Prints the measured split."""
import sys
import time


def spin(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def hot_a(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        spin(2000)


def hot_b(seconds):
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        spin(2000)


def main(total=None):
    total = total if total is not None else (float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
    for _ in range(10):  # interleaved, so a start-up delay cannot skew the split
        hot_a(0.07 * total)
        hot_b(0.03 * total)
    print(f"cpu={time.thread_time():.3f}")


if __name__ == "__main__":
    main()
