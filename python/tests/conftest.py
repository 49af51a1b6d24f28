import os
import pathlib

import pytest

import kiln

def import_torch(reason):
    """PyTorch, or a skip saying why; where KILN_TEST_TORCH=1 (CI, which installs it) its absence
    fails the tests instead of skipping them."""
    if os.environ.get("KILN_TEST_TORCH") == "1":
        import torch

        return torch
    return pytest.importorskip("torch", reason=reason)


SPECS = pathlib.Path(os.environ.get("KILN_SPECS", pathlib.Path(__file__).resolve().parents[2] / "specs"))


@pytest.fixture
def options(tmp_path):
    """sm_90a without a GPU (NVRTC compiles for it anywhere), a private cache, no KILN_* variables."""
    return kiln.Options(arch="sm_90a", cache_dir=str(tmp_path / "cache"), use_environment=False)


class FakeCuda:
    """An object that says it lives on a CUDA device (__cuda_array_interface__), at an address
    nothing reads: enough for everything kiln does before a launch."""

    next_address = 1 << 20   # each one its own 1 MiB, so that they do not overlap

    def __init__(self, shape, typestr="<f4", strides=None):
        FakeCuda.next_address += 1 << 20
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (FakeCuda.next_address, False), "strides": strides, "version": 3}


class FakeHost:
    """A host (CPU) array, as numpy presents one."""

    def __init__(self, shape):
        self.__array_interface__ = {"shape": tuple(shape), "typestr": "<f4", "data": (1 << 20, False), "version": 3}
