"""ROCTx ranges and marks (native part: cpp/capture/markers/, always built in): Options →
``markers.*`` settings."""

from __future__ import annotations

from ..options import Options


def configure(options: Options, settings) -> list[str]:
    """Fill settings.markers (rocprof._core.MarkersSettings) from the launcher's options."""
    settings.markers.start_paused = bool(options.selected_regions)
    settings.markers.kernel_rename = bool(options.kernel_rename)
    settings.markers.redact_text = bool(options.redact_text)
    return []
