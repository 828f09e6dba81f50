"""Leaves ranges open at exit: a push never popped, a start never stopped."""
import roctx

with roctx.range("closed"):
    pass
roctx.push("outer-open")
roctx.push("inner-open")
roctx.start("started-open")
print("leaving", flush=True)
