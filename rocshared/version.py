# The one place the version lives: pyproject reads it (regex provider), CMake reads it (or gets
# it from scikit-build-core), the native core reports it back in rocprof._core.__version__, and
# rocprof, roctx and rocpd all show this one.
__version__ = "0.1.0"
