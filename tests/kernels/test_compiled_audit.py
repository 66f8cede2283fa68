"""Kernels compiled for CUDA, checked on a machine without a GPU (Triton compiles to LLVM IR /
PTX for sm_90 ahead of time): the float64 kernels contain no float32 on their float64 path, and
``gain_shape_assign(precision="tf32x3")`` runs its dot products on tensor cores.

This is the CPU-side guard for issue 29's soft_bellman bug (float64 on an H200 was 7e-5 off):
``tau``/``gamma`` were plain Python floats, i.e. float32 scalars in the compiled kernel, which
the interpreter (numpy, float64 scalars) could not show.  On a CUDA machine the compiled
kernels are checked directly (``test_float64_kernel_is_float64`` and the 1e-12 float64 tests
run compiled there), so this audit is skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

AUDIT = Path(__file__).with_name("compiled_audit.py")


def _nvidia_backend() -> bool:
    try:
        from triton.backends import backends
    except ImportError:  # pragma: no cover
        return False
    return "nvidia" in backends


@pytest.mark.skipif(torch.cuda.is_available(), reason="on CUDA the float64 kernels run compiled "
                    "in test_float64_kernel_is_float64 and the 1e-12 tests")
@pytest.mark.skipif(not _nvidia_backend(), reason="this Triton build has no NVIDIA backend to "
                    "compile for")
def test_compiled_kernels_float64_and_tensor_cores():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    res = subprocess.run([sys.executable, str(AUDIT)], capture_output=True, text=True,
                         timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    found = json.loads(res.stdout.strip().splitlines()[-1])
    assert found.pop("control_bad") == [["float32 kernel argument"]], "the audit is blind"
    assert found.pop("gain_shape_assign_tensor_cores") == {"ieee": False, "tf32x3": True}
    assert set(found) == {"soft_bellman", "lattice_forward", "pgf", "bellman_interp"}
    for kernel, per_launch in found.items():
        assert per_launch and all(p == [] for p in per_launch), (kernel, per_launch)
