"""The one way rocpd and the launcher write an output file, as the core writes a database: never
through what is already at the path. Output folders are often shared (0777, 1777 scratch), where
anyone can plant a link at the name an export will take; writing through it would overwrite the
link's target with the writer's rights.

Each output is written inside a private folder (mode 0700, a new random name) beside its path, so
no one else can reach the file while it is written, then renamed over the path: the rename
replaces whatever entry is there (a link included, never its target) and readers see either the
old file or the whole new one. A writer that fails leaves the path as it was.

``open_output(path)`` gives a file object; ``staged(path)`` gives the private name, for writers
that take a path (SQLite, pandas, matplotlib)."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator


@contextlib.contextmanager
def staged(path: str | os.PathLike) -> Iterator[str]:
    """A fresh name in a private folder beside ``path``; what the block writes there replaces
    ``path`` when it ends without an error. A path naming a folder (one that exists, or ending
    in a separator) is refused before anything is written: it would become a file of that name."""
    path = os.path.abspath(refuse_folder(path))
    folder, name = os.path.split(path)
    private = _private_folder(folder, name, path)
    inner = os.path.join(private, name)
    try:
        yield inner
        if os.path.lexists(inner):
            _replace(inner, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(inner)
        with contextlib.suppress(OSError):
            os.rmdir(private)


def names_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a folder: one that exists, or a path ending in a separator (the
    user asked for a folder, which may not exist yet)."""
    raw = os.fspath(path)
    return raw.endswith(os.sep) or bool(os.altsep and raw.endswith(os.altsep)) \
        or os.path.isdir(raw)


def refuse_folder(path: str | os.PathLike) -> str:
    """``path``, if it can name a file: a folder (:func:`names_folder`) raises
    IsADirectoryError saying to give a file name in it."""
    raw = os.fspath(path)
    if names_folder(raw):
        raise IsADirectoryError(errno.EISDIR, "this names a folder; give a file name in it", raw)
    return raw


def _private_folder(folder: str, name: str, path: str) -> str:
    """mkdtemp's guarantee without loading tempfile (and random) into every profiled process: a
    new folder only its owner can enter; mkdir() fails on anything already there, a link too."""
    for _ in range(100):
        private = os.path.join(folder, f".{name[:64]}.{os.urandom(6).hex()}.tmp")
        try:
            os.mkdir(private, 0o700)
            return private
        except FileExistsError:
            continue
        except OSError as e:  # what open(path) would have said: the same error, naming path
            raise type(e)(e.errno, e.strerror, path) from None
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", path)


def _replace(inner: str, path: str) -> None:
    try:
        os.replace(inner, path)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, path) from None


@contextlib.contextmanager
def open_output(path: str | os.PathLike, mode: str = "w", **kwargs):
    """``open(path, mode, **kwargs)`` for writing, through :func:`staged`: the file appears at
    ``path`` (a link there replaced, its target untouched) when the block ends."""
    if "w" not in mode:
        raise ValueError(f"open_output writes whole files; mode {mode!r} is not 'w' or 'wb'")
    with staged(path) as inner:
        with open(inner, mode, **kwargs) as fh:
            yield fh


def write_text(path: str | os.PathLike, text: str, **kwargs) -> None:
    with open_output(path, "w", **kwargs) as fh:
        fh.write(text)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with open_output(path, "wb") as fh:
        fh.write(data)
