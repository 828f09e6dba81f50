"""One exception type whose message is always one line naming the file at fault."""


class RocpdError(Exception):
    """A user-facing error: the CLI prints ``rocpd: error: <message>`` and exits non-zero."""

    def __init__(self, message: str, path: str | None = None):
        text = f"{path}: {message}" if path else message
        # One line, always: multi-line SQLite messages would break the CLI contract.
        super().__init__(" ".join(str(text).split()))
