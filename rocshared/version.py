# The one place the version lives: pyproject reads it (regex provider), CMake gets it from
# scikit-build-core, and the native core reports it back in rocprof._core.__version__.
__version__ = "0.1.0"
