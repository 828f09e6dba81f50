"""What rocprof (capture) and rocpd (analysis) share, below both: the version, the output-path
placeholders, the hardware-counter names, where measured peaks are kept and the SI form rates are
printed in.

Pure Python on the standard library: nothing here imports rocprof, roctx or rocpd, so capture
never depends on analysis, and rocpd reads databases without the native core."""
