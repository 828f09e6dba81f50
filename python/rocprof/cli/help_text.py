"""The help layout every `rocprof` subcommand shares: option help wrapped as argparse wraps it,
prose of descriptions and epilogs wrapped here, and examples kept one command a line."""

from __future__ import annotations

import argparse

from .errors import UsageError

WIDTH = 78


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs are laid out by :func:`epilog` (examples must not be re-wrapped);
    option help is wrapped as usual, with the option column wide enough for `-d DIR, --...`."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32, width=WIDTH + 2)


def epilog(*paragraphs: str, examples: list[str] | tuple[str, ...] = ()):
    """Prose paragraphs wrapped to WIDTH, then `examples:` with one command a line (a comment
    after two spaces and `#` says what it does). With prose, a Later that wraps it when the
    text is first read (help, tests): the parser of every `rocprof run` is built before the
    program starts, and textwrap (with its regular expressions) is for --help only. The
    parsers of rocprof.cli take either as a description or epilog."""
    def text() -> str:
        parts = []
        if paragraphs:
            import textwrap

            parts = [textwrap.fill(" ".join(p.split()), WIDTH) for p in paragraphs]
        if examples:
            parts.append("examples:\n" + "\n".join(f"  {e}" for e in examples))
        return "\n\n".join(parts)

    return Later(text) if paragraphs else text()


class Parser(argparse.ArgumentParser):
    """The parsers of rocprof.cli: errors in one line, not argparse's usage dump."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")

    # Descriptions and epilogs may be Later (prose wrapped when first read).
    description = property(lambda self: resolved(self.__dict__.get("_description")),
                           lambda self, value: self.__dict__.__setitem__("_description", value))
    epilog = property(lambda self: resolved(self.__dict__.get("_epilog")),
                      lambda self, value: self.__dict__.__setitem__("_epilog", value))


class Later:
    """A help text made when first read."""

    def __init__(self, make):
        self._make = make
        self._text: str | None = None

    def __call__(self) -> str:
        if self._text is None:
            self._text = self._make()
        return self._text


def resolved(value):
    """A description or epilog as text (a Later made now)."""
    return value() if isinstance(value, Later) else value


def example_commands(text: str, program: str) -> list[list[str]]:
    """The examples of an epilog as argv lists (tests check that each one parses)."""
    import re
    import shlex

    if "examples:\n" not in text:
        return []
    out = []
    for line in text.split("examples:\n", 1)[1].splitlines():
        command = re.sub(r'"\$\((.*?)\)"', r"\1", line.split("  #")[0].strip())  # eval "$(...)"
        words = shlex.split(command)
        for stop in ("|", ">", ">>", "&&", ";"):  # the command ends at a pipe or redirection
            if stop in words:
                words = words[:words.index(stop)]
        while words and words[0] != program:  # `srun -n 4 rocprof run ...`, `eval "$(...)"`
            words = words[1:]
        if words:
            out.append(words[1:])
    return out
