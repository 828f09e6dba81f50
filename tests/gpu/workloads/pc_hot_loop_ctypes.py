"""Runs pc_hot_loop.cu's kernels from Python: argv[1] is the library built from it, argv[2]
the rounds (tests/gpu/test_gpu_pc_sampling.py)."""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
sys.exit(lib.pc_hot_loop_run(int(sys.argv[2])))
