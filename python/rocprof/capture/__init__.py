"""Python halves of the capture backends: each module here turns Options into
backend_options for the native core and registers itself in rocprof.backends' tables.
Imported (all of them) when a session is configured."""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
