"""The launcher's command-line error, in a module of its own: the subcommand modules raise it and
the CLI's entry point (:mod:`rocprof.cli`, which loads them) prints it."""


class UsageError(Exception):
    """Bad command line: printed as one line, exit code 2."""
