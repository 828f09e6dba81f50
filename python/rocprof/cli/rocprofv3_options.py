"""rocprofv3's own option forms for `rocprof run`: `[BOOL]` values (`--kernel-trace=false`,
`--sys-trace true`), `-f/--output-format` (written at exit by run_report.py, from rocpd's export registry), `-u/--summary-units`,
`--summary-output-file`, `--selected-regions`, and `-i/--input` files (YAML, JSON; each job of
the multi-job form runs the target once)."""

from __future__ import annotations

import os
import sys

from .. import option_table as table
from ..periods import PERIOD_UNITS  # noqa: F401 - the choices of --collection-period-unit
from .errors import UsageError

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
UNITS = {"sec": "s", "msec": "ms", "usec": "us", "nsec": "ns"}  # rocprofv3 → rocpd.summary.stats


def parse_bool(text: str) -> bool:
    if text.lower() in TRUE:
        return True
    if text.lower() in FALSE:
        return False
    raise ValueError(f"expected true or false, not {text!r}")


parse_bool.__name__ = "BOOL"  # argparse names the type in its one-line error


def is_bool(text: str) -> bool:
    return text.lower() in TRUE + FALSE


def add_bool(group, *names: str, help: str) -> None:  # noqa: A002 - argparse's own name
    """A rocprofv3 flag: alone it means true; `=BOOL` or a following BOOL sets it; not given it
    is None, so that a default of true (--marker-trace) stays true."""
    group.add_argument(*names, nargs="?", const=True, default=None, type=parse_bool,
                       metavar="BOOL", help=help)


# ---- -i/--input --------------------------------------------------------------------------

def _load(path: str) -> list[dict]:
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"rocprof run: --input {path!r}: {e.strerror}") from None
    if path.endswith((".yaml", ".yml")):
        import yaml

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise UsageError(f"rocprof run: --input {path!r} is not valid YAML: "
                             f"{str(e).splitlines()[0]}") from None
    elif path.endswith(".json"):
        import json  # only for -i FILE.json: json loads re and enum, which runs do not need

        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"rocprof run: --input {path!r} is not valid JSON: {e}") from None
    elif path.endswith(".txt"):
        # rocprofv3's text form: one job per "pmc: NAME NAME ..." line (# starts a comment).
        jobs = []
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, rest = line.partition(":")
            if not sep or key.strip() != "pmc" or not rest.split():
                raise UsageError(f"rocprof run: --input {path!r} line {n}: expected 'pmc: NAME "
                                 f"[NAME ...]', not {line!r}")
            jobs.append({"pmc": rest.split()})
        if not jobs:
            raise UsageError(f"rocprof run: --input {path!r}: no 'pmc:' line")
        return jobs
    else:
        raise UsageError(f"rocprof run: --input {path!r}: expected a .yaml, .yml or .json file")
    jobs = data.get("jobs") if isinstance(data, dict) and "jobs" in data else [data]
    if not isinstance(jobs, list) or not all(isinstance(j, dict) for j in jobs):
        raise UsageError(f"rocprof run: --input {path!r}: expected a mapping of options or "
                         "{jobs: [mapping, ...]}")
    return jobs


def job_argv(job: dict) -> list[str]:
    """A job's options as command-line tokens (`kernel_trace: true` → `--kernel-trace=true`)."""
    argv: list[str] = []
    for key, value in job.items():
        flag = table.input_flag(key)
        if isinstance(value, bool):
            argv.append(f"{flag}={'true' if value else 'false'}")
        elif isinstance(value, list):
            argv += [flag, *map(str, value)]
        elif value is not None:
            argv += [flag, str(value)]
    return argv


def run_input_jobs(path: str, own: list[str], target: list[str]) -> int:
    """Each job runs the target once, as `rocprof run JOB-OPTIONS OWN-OPTIONS -- TARGET`
    (options on the command line win over the file's). Returns the first failing job's
    status, else 0."""
    import subprocess

    status = 0
    jobs = _load(path)
    for n, job in enumerate(jobs):
        cmd = [sys.executable, "-m", "rocprof", "run", *job_argv(job), *own, "--", *target]
        if len(jobs) > 1:
            print(f"rocprof: job {n + 1}: {' '.join(job_argv(job))}", file=sys.stderr)
        code = subprocess.run(cmd, env=os.environ.copy()).returncode
        if code != 0 and status == 0:
            status = code
    return status


# ---- -P/--collection-period, --log-level, --preload ------------------------------------------

LOG_LEVELS = table.by_name("--log-level").argparse["choices"]


def parse_period(text: str) -> tuple[float, float, int]:
    """DELAY:DURATION:REPEAT (rocprofv3): wait DELAY, record DURATION, REPEAT times (0: for
    ever). Units are --collection-period-unit's."""
    parts = text.split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        delay, duration, repeat = float(parts[0]), float(parts[1]), int(parts[2])
        if delay < 0 or duration <= 0 or repeat < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"expected DELAY:DURATION:REPEAT (e.g. 1:5:0), not {text!r}") from None
    return delay, duration, repeat


parse_period.__name__ = "DELAY:DURATION:REPEAT"

# The option table's named value types (type="period"): the table sits below the command line.
TYPES = {"period": parse_period}


def shows_notes(level: str) -> bool:
    """Notes (options that cannot apply, GPU backends off) are warnings."""
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index("warning")
