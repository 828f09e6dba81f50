"""The end of a `rocprof run`: every database its processes wrote, said from what is on disk,
then the reports asked for (--stats, -S per process and in total, -f).

Each process of a run lists its database in the run manifest (ROCPROF_MANIFEST) as the native
core creates it. ROCPROF_LAUNCHER_PID names the process that reports at the end: the launcher,
or an image it exec()ed (same pid). A launcher killed by SIGTERM/SIGHUP reports from the core's
signal path; os._exit and exec* from the session's wrappers (session.py).
"""

from __future__ import annotations

import os
import sys

from . import _core, paths

MANIFEST_VAR = "ROCPROF_MANIFEST"
LAUNCHER_VAR = "ROCPROF_LAUNCHER_PID"


def say(text: str, to_stdout: bool = False) -> None:
    """One line on stderr (or stdout) that can never fail the run: with fd 1 or 2 closed
    (`>&-`) Python's stream is None or its write raises EBADF, and the run's exit status must
    stay the program's."""
    stream = sys.stdout if to_stdout else sys.stderr
    if stream is None:
        return
    try:
        print(text, file=stream, flush=True)
    except (OSError, ValueError):
        pass


def begin() -> str:
    """This process launches a run: a fresh manifest, named in the environment its processes
    inherit."""
    manifest = _new_manifest()
    os.environ[MANIFEST_VAR] = manifest
    os.environ[LAUNCHER_VAR] = str(os.getpid())
    paths.mark_launch()
    return manifest


def _new_manifest() -> str:
    """An empty file of our own in the temporary folder, as tempfile.mkstemp makes one (that
    module, with the random and shutil modules it loads, costs each run a few milliseconds)."""
    folders = [os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")]
    error: OSError | None = None
    for folder in [*filter(None, folders), "/tmp", "/var/tmp", "/usr/tmp", os.getcwd()]:
        for _ in range(100):
            path = os.path.join(folder, f"rocprof-run-{os.urandom(6).hex()}.manifest")
            try:
                os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
                return path
            except FileExistsError:
                continue
            except OSError as e:  # not a usable folder: the next one, as tempfile does
                error = e
                break
    raise error or FileExistsError("no free name for the run manifest")


def is_launcher() -> bool:
    return _core.is_run_launcher()  # MANIFEST_VAR set, LAUNCHER_VAR this process's pid


def outcomes() -> list[tuple[str, bool, str]]:
    """(database, readable, line) for each database of the run so far."""
    manifest = os.environ.get(MANIFEST_VAR)
    if not manifest or not os.path.exists(manifest):
        return []
    return [tuple(o) for o in _core.run_outcomes(manifest)]


def say_outcomes() -> list[str]:
    """Print each database's line; returns the readable ones."""
    readable = []
    for path, ok, line in outcomes():
        say(line)
        if ok:
            readable.append(path)
    return readable


def finish(options=None) -> None:
    """The launcher's last words: each database, the reports `options` ask for, and the
    manifest removed (nothing reads it after this)."""
    if not is_launcher():
        return
    try:
        databases = say_outcomes()
        if options is not None and databases and wants_reports(options):
            write_reports(databases, options)
    finally:
        try:
            os.unlink(os.environ.pop(MANIFEST_VAR))
        except (KeyError, OSError):
            pass


def _failed(what: str, e: BaseException) -> None:
    if isinstance(e, OSError) and e.filename:
        cause = e.strerror or str(e)
        if e.errno == 36:  # ENAMETOOLONG
            cause += f" ({len(os.path.basename(str(e.filename)))}-byte name; at most 255)"
        say(f"rocprof: {what} stopped: cannot write {e.filename}: {cause}")
    else:
        say(f"rocprof: {what} failed: {type(e).__name__}: {e}")


def _big_enough(databases: list[str], minimum_kb: int) -> list[str]:
    if not minimum_kb:
        return databases
    kept = []
    for path in databases:
        size_kb = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)) // 1024
        if size_kb > minimum_kb:
            kept.append(path)
        else:
            say(f"rocprof: {path} holds {size_kb} KB, not more than --minimum-output-data "
                f"{minimum_kb} KB: no --stats/-S/-f outputs for it (the database is kept)")
    return kept


def wants_reports(options) -> bool:
    """Whether the run asked for outputs beyond the database: only then are the analysis
    modules (rocpd) imported, at exit."""
    return bool(options.stats or options.summary or options.output_formats)


def write_reports(databases: list[str], options) -> None:
    """--stats and -f per database, -S per process then in total. Each output on its own: one
    that fails says which file and why, and the others are still written."""
    databases = _big_enough(databases, options.minimum_output_data_kb)
    if not databases:
        return
    for path in databases:
        if options.stats:
            from rocpd.summary import stats

            try:
                for written in stats.write_stats_csv(path, paths.prefix_of(path)):
                    say(f"rocprof: stats written to {written}")
            except Exception as e:  # noqa: BLE001 - one output's failure must not hide the rest
                _failed(f"--stats of {path}", e)
        for fmt in dict.fromkeys(options.output_formats):
            try:
                for written in write_format(path, fmt):
                    say(f"rocprof: written {written}")
            except Exception as e:  # noqa: BLE001
                _failed(f"-f {fmt} of {path}", e)
    if options.summary:
        _summary(databases, options)


# --summary-output-file names that are the streams, not files (rocprofv3's).
SUMMARY_STREAMS = ("stdout", "stderr")


def _summary(databases: list[str], options) -> None:
    from rocpd.summary import run as run_summary

    try:
        text = run_summary.text(databases, units=options.summary_units)
    except Exception as e:  # noqa: BLE001 - a summary failure must not hide the exit code
        _failed("-S", e)
        return
    stream = (options.summary_output_file or "stdout").lower()
    if stream in SUMMARY_STREAMS:
        say(text, to_stdout=stream == "stdout")
        return
    from rocpd.io.output_file import write_text

    try:
        write_text(options.summary_output_file, text + "\n")
        say(f"rocprof: summary written to {options.summary_output_file}")
    except OSError as e:
        _failed("-S", e)


# `-f rocpd`: the database itself, which is always written.
DATABASE_FORMAT = "rocpd"


def output_formats() -> dict[str, str]:
    """`rocprof run -f` names (rocprofv3's) → what each is, from the export registry."""
    from rocpd.export import formats

    # File sets named by a prefix first, then single files, then archives (rocprofv3's order:
    # csv, json, pftrace, otf2), and the database itself last.
    kinds = ("prefix", "file", "folder")
    named = sorted((f for f in formats() if f.rocprofv3),
                   key=lambda f: (kinds.index(f.target), f.rocprofv3))
    return {**{f.rocprofv3: f.label for f in named}, DATABASE_FORMAT: "the database itself"}


def write_format(database: str, fmt: str) -> list[str]:
    """-f FMT: `database` also written as FMT beside it, named as rocprofv3 names them
    (NAME_kernel_trace.csv ..., NAME_results.json/.pftrace/.otf2)."""
    from rocpd.export import formats

    if fmt == DATABASE_FORMAT:
        return []
    prefix = paths.prefix_of(database)
    chosen = next(f for f in formats() if f.rocprofv3 == fmt)
    import rocpd  # the analysis package: at exit, and only for -f

    with rocpd.connect(database) as db:
        return chosen.write_named(db, os.path.dirname(prefix), os.path.basename(prefix))
