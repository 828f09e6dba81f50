"""Exporters: one module per format, each exposing ``write(db, path, **options)``."""

FORMATS = ("csv", "chrome", "collapsed", "flamegraph", "perfetto", "otf2")
