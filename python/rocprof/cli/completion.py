"""`rocprof completion bash|zsh`: the shell completion script for `rocprof` and `rocpd`, written
from their argument parsers when asked (completion_scripts), so it always matches this version's
options and nothing of it is loaded when a program is profiled."""

from __future__ import annotations

import sys

from .help_text import epilog

EXAMPLES = (
    'eval "$(rocprof completion bash)"                 # this bash session (or in ~/.bashrc)',
    "rocprof completion bash > ~/.local/share/bash-completion/completions/rocprof",
    "rocprof completion zsh > ~/.zfunc/_rocprof      # with fpath=(~/.zfunc $fpath) before compinit",
)


def add_parser(p) -> None:
    p.epilog = epilog("One script completes both commands, rocprof and rocpd: subcommands, "
                      "options (with their descriptions in zsh), the choices of an option "
                      "(--sampling-mode cpu|wall, -f csv json ...) and file names elsewhere. "
                      "The bash-completion package loads a file of the completions folder "
                      "when `rocprof` is first completed; for `rocpd` as well, link the same "
                      "file as .../completions/rocpd.", examples=EXAMPLES)
    p.add_argument("shell", choices=("bash", "zsh"), help="the shell to write the script for")


def run(args) -> int:
    from .completion_scripts import script

    sys.stdout.write(script(args.shell))
    return 0
