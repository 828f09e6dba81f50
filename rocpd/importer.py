"""ROCm's ``rocpd.importer``: ``RocpdImportData`` is this package's :class:`rocpd.Connection`
(several databases read as one, read-only; a list of paths as ROCm passes them works)."""

from __future__ import annotations

from .io.connection import Connection as RocpdImportData

__all__ = ["RocpdImportData"]
