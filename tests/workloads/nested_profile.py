"""Calls rocprof.profile() although `rocprof run` already profiles this process, twice
(once named, once not), and records inside both. Prints the paths it was given."""
import rocprof
import roctx

with rocprof.profile(output_file="phase1") as s:
    with roctx.range("inside-phase1"):
        pass
print("path", s.path, s.joined, flush=True)
with rocprof.profile():
    roctx.mark("inside-anonymous")
with roctx.range("after"):
    pass
