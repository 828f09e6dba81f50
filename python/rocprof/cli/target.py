"""Running the profiled program in this process, the way `python script.py` would."""

from __future__ import annotations

import os
import runpy
import sys
import traceback

from ..options import Options
from ..session import Session


def _exit_code(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message") prints the message, exits 1
    return 1


def _print_user_traceback(exc: BaseException) -> None:
    """The traceback plain Python would print: frames of the launcher and runpy left out."""
    tb = exc.__traceback__
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while tb is not None and (tb.tb_frame.f_code.co_filename.startswith(here)
                              or tb.tb_frame.f_code.co_filename == runpy.__file__
                              or "<frozen runpy>" in tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def run_target(options: Options, script: str | None, module: str | None, argv: list[str]) -> int:
    session = Session(options)
    try:
        session.start()
    except (OSError, ValueError, RuntimeError) as e:
        print(f"rocprof run: {e}", file=sys.stderr)
        return 2
    started_in = os.getcwd()  # relative output paths are the start's, whatever the script does
    from .rocprofv3_options import shows_notes, start_collection_periods

    if options.preload:
        session.notes.append("--preload applies to commands (rocprof run -- CMD); a script runs "
                             "in this process, which has already started")
    for note in session.notes if shows_notes(options.log_level) else ():
        print(f"rocprof: {note}", file=sys.stderr)
    if options.collection_periods:
        start_collection_periods(options.collection_periods, options.collection_period_unit)
    if options.follow_children:
        from ..children import child_environment

        os.environ.update(child_environment(options))

    if module is not None:
        sys.argv = [module, *argv]
        sys.path.insert(0, os.getcwd())
    else:
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
    code = 0
    try:
        if module is not None:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException as e:  # noqa: BLE001 - the user's program failed; report as Python does
        _print_user_traceback(e)
        code = 1
    finally:
        sys.stdout.flush()
        session.stop()
    _report(session, options, started_in)
    return code


def _report(session: Session, options: Options, started_in: str) -> None:
    path = os.path.join(started_in, session.path) if session.path else None
    if path and os.path.exists(path):
        # A fork child leaving through here names its own database; reports are the parent's.
        report_databases([path], options, reports=not session.forked, cwd=started_in)


def report_databases(databases: list[str], options: Options, reports: bool = True,
                     cwd: str | None = None) -> None:
    """Say where the results are (absolute paths; relative ones, and --summary-output-file, are
    taken from `cwd`, the folder the run started in); --stats, -S and -f per database. A part
    that fails says so in one line and the others are still written."""
    cwd = cwd or os.getcwd()
    databases = [os.path.normpath(os.path.join(cwd, p)) for p in databases]
    for path in databases:
        print(f"rocprof: results written to {path}", file=sys.stderr)
    if not reports or not databases:
        return
    if options.minimum_output_data_kb:
        kept = []
        for path in databases:
            size_kb = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p)) // 1024
            if size_kb > options.minimum_output_data_kb:
                kept.append(path)
            else:
                print(f"rocprof: {path} holds {size_kb} KB, not more than --minimum-output-data "
                      f"{options.minimum_output_data_kb} KB: no --stats/-S/-f outputs for it "
                      "(the database is kept)", file=sys.stderr)
        databases = kept
        if not databases:
            return
    if options.stats:
        _attempt("--stats", _write_stats, databases)
    if options.summary:
        summary_file = options.summary_output_file and os.path.join(cwd, options.summary_output_file)
        _attempt("-S", _print_summary, databases, options.summary_units, summary_file)
    if options.output_formats:
        _attempt("-f", _write_formats, databases, options.output_formats)


def _attempt(what: str, fn, *args) -> None:
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - a report failure must not hide the exit code
        print(f"rocprof: {what} failed: {e}", file=sys.stderr)


def _write_stats(databases: list[str]) -> None:
    from rocpd import stats

    for path in databases:
        prefix = path[: -len("_results.db")] if path.endswith("_results.db") else path
        for written in stats.write_stats_csv(path, prefix):
            print(f"rocprof: stats written to {os.path.abspath(written)}", file=sys.stderr)


def _write_formats(databases: list[str], formats: list[str]) -> None:
    from .rocprofv3_options import write_outputs

    for written in write_outputs(databases, formats):
        print(f"rocprof: written {os.path.abspath(written)}", file=sys.stderr)


def _print_summary(databases: list[str], units: str, summary_file: str | None) -> None:
    from rocpd import stats
    from rocpd.analysis.findings import top_text

    parts = []
    for path in databases:
        if len(databases) > 1:
            parts.append(f"== {path}")
        parts.append(stats.format_summary(path, units=units))
    parts.append(top_text(databases, 3))
    text = "\n".join(parts)
    if summary_file:
        with open(summary_file, "w") as f:
            f.write(text + "\n")
        print(f"rocprof: summary written to {summary_file}", file=sys.stderr)
    else:
        print(text)
