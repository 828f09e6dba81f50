"""ROCm's ``rocpd.output_config``: where ``rocpd.write_csv``/``write_perfetto``/``write_otf2`` put
their files (OUTPUT_PATH/OUTPUT_FILE_...), for scripts written against ROCm's package."""

from __future__ import annotations

import os
import sys

from rocshared import placeholders


class output_config:  # noqa: N801 - ROCm's name
    """Output settings: ``output_path`` (default $ROCPD_OUTPUT_PATH or ./rocpd-output-data) and
    ``output_file`` (default $ROCPD_OUTPUT_NAME or out). ROCm's other settings (kernel_rename,
    agent_index_value, perfetto_*) are kept but do not change this package's output."""

    def __init__(self, **kwargs):
        self.output_path = os.environ.get("ROCPD_OUTPUT_PATH", "./rocpd-output-data")
        self.output_file = os.environ.get("ROCPD_OUTPUT_NAME", "out")
        self.kernel_rename = False
        self.agent_index_value = "relative"
        self.update(**kwargs)

    def update(self, **kwargs):
        strict = kwargs.pop("strict", True)
        for key, value in kwargs.items():
            if not key.isidentifier() or (strict and not hasattr(self, key)
                                          and not key.startswith("perfetto_")):
                raise KeyError(f"output_config has no setting {key!r}; known: output_path,"
                               " output_file, kernel_rename, agent_index_value")
            setattr(self, key, value)
        return self

    def folder(self) -> str:
        """OUTPUT_PATH, placeholders expanded; created."""
        path = format_path(self.output_path)
        os.makedirs(path, exist_ok=True)
        return path

    def name(self, stem: str) -> str:
        """OUTPUT_FILE_<stem> (just <stem> when OUTPUT_FILE is empty)."""
        return format_path(f"{self.output_file}_{stem}" if self.output_file else stem)

    def filename(self, stem: str, ext: str = "") -> str:
        """OUTPUT_PATH/OUTPUT_FILE_<stem><ext>, as ROCm names its outputs."""
        return os.path.join(self.folder(), self.name(stem) + ext)


def format_path(path: str, tag: str | None = None) -> str:
    """ROCm's format_path: every placeholder of ``path`` expanded (rocshared.placeholders: the set and
    rules of rocprofv3 and of the launcher), then ~. ``tag`` is %tag% (ROCm's default: the
    interpreter's name); %argt%, %args% read this process's arguments. ValueError names a bad
    placeholder."""
    tag = tag if tag is not None else os.path.basename(sys.executable)
    return os.path.expanduser(placeholders.expand(path, [tag, *placeholders.own_argv()[1:]]))
