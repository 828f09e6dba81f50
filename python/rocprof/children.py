"""Following child processes that are not forks: Python children started with subprocess,
torchrun ranks, multiprocessing 'spawn' workers. (fork() children are followed by the
native core itself.)

The launcher exports the session's options in ROCPROF_CHILD_SESSION and puts
rocprof/_child (a sitecustomize) first on PYTHONPATH; each child Python process starts its
own session as it starts up and closes it at exit.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os

from . import paths, run_report
from .options import Options
from .session import Session

ENV = "ROCPROF_CHILD_SESSION"
_CHILD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_child")


def child_environment(options: Options, unique_names: bool = True) -> dict[str, str]:
    """Variables to set in this process so that its Python children are profiled. With
    `unique_names`, a name without %pid% gets "_%pid%" (children of a recording process never
    overwrite its database); `rocprof run -- CMD` records nothing itself: the first process to
    claim the name keeps it, later ones get another (paths.py)."""
    spec = dataclasses.asdict(options)
    spec["stats"] = spec["summary"] = False  # children never print reports of their own
    spec["output_formats"] = []
    # Children may run in another working directory: anchor the folder to ours.
    spec["output_dir"] = paths.anchored_dir(options.output_dir)
    if unique_names:  # never the parent's database
        spec["output_file"] = paths.per_process_name(options.output_file)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [_CHILD_DIR, package_root]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    return {ENV: json.dumps(spec), "PYTHONPATH": os.pathsep.join(path)}


def start_child_session(spec: str) -> None:
    fields = {f.name for f in dataclasses.fields(Options)}
    options = Options(**{k: v for k, v in json.loads(spec).items() if k in fields})
    session = Session(options)
    session.start()
    for note in session.notes:
        print(f"rocprof: {note}", flush=True)
    if options.collection_periods:
        from .periods import start_collection_periods  # only with --collection-period

        start_collection_periods([tuple(p) for p in options.collection_periods],
                                 options.collection_period_unit)
    def end() -> None:
        session.stop()
        # An image the launcher exec()ed (same pid) ends the run: it names its databases.
        run_report.finish()

    atexit.register(end)
