"""The numeric code paths claims are computed on, pinned: same seed, same numbers on every x86-64
machine of a kind (AVX2, the same CPU vendor).

torch and numpy pick their CPU code paths by the machine: MKL's GEMM kernels (by vendor, ISA and
cache sizes), oneDNN's convolutions (by ISA), ATen's vectorised loops (AVX2 or AVX512 lane
width, so a different summation order), numpy's SIMD loops and its OpenBLAS kernels (by CPU
model), and every library's split of a reduction over threads. Each choice rounds differently;
a trained model amplifies the difference (heima's ``accuracy_maintained`` on seed 0 read -0.006
on one AMD EPYC and -0.058 on another), so a per-seed value, and sometimes a verdict, would
depend on the machine that computed it.

:data:`PINS` fixes each of those choices to a path every x86-64 CPU with AVX2 runs the same way
(MKL's: every CPU of one vendor, see below):

- ``MKL_CBWR=AVX2``: MKL's conditional numerical reproducibility (CNR) on its AVX2 branch, which
  MKL documents to give the same results on every Intel CPU with AVX2 (for a fixed thread
  count). On an AMD CPU MKL runs this branch as ``AUTO`` (its verbose log says ``CNR:AUTO``): its
  own AVX2 dispatch with fixed cache sizes, deterministic reductions and static scheduling, so
  two AMD CPUs of other models and cache sizes agree. Whether an Intel and an AMD CPU agree is
  not documented and not measured here; ``COMPATIBLE`` (SSE2, documented for every x86 CPU)
  would promise it, at 4-5x the time of every GEMM (measured here: a 256^3 single-thread
  SGEMM 0.39 ms native, 1.95 ms ``COMPATIBLE``), which would double the trained papers' claims.
- ``ATEN_CPU_CAPABILITY=avx2``: ATen's vectorised kernels at 256-bit lanes, not AVX512.
- ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's convolutions and matmuls capped at AVX2.
- ``OPENBLAS_CORETYPE=Haswell`` and ``NPY_DISABLE_CPU_FEATURES``: numpy's (and scipy's) OpenBLAS
  on its Haswell (AVX2) kernels, numpy's own loops without their AVX512 variants. These two are
  read when numpy is first imported: import ``icml26`` before numpy (every entry point of the
  suite does), or set them in the environment (the test command does).
- one thread (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and
  ``torch.set_num_threads(1)``): a reduction split over threads sums in another order.

``benchmarks/numerics_pins.py`` checks that seed 0 of every paper is bit-identical pinned in a
hostile environment and in a sweep worker (``benchmarks/numerics_pins.csv``, native values
beside). ``ICML26_NUMERICS=native`` leaves the machine's own
paths (faster on AVX512, not comparable with the committed values); a GPU's numbers are not
covered (float reductions on a GPU differ from the CPU's; see ``device_key``) and neither are
other architectures (an ARM CPU has no AVX2 path to pin to).
"""

from __future__ import annotations

import os
import sys

#: environment settings read by MKL, ATen, oneDNN, OpenBLAS and numpy when they first run
PINS: dict[str, str] = {
    "MKL_CBWR": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OPENBLAS_CORETYPE": "Haswell",
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}

#: ``ICML26_NUMERICS``: ``pinned`` (default) or ``native`` (the machine's own code paths)
MODES = ("pinned", "native")


def mode() -> str:
    value = os.environ.get("ICML26_NUMERICS", "pinned")
    if value not in MODES:
        raise ValueError(f"ICML26_NUMERICS must be one of {MODES}, got {value!r}")
    return value


def pin() -> None:
    """Put :data:`PINS` into ``os.environ`` (overriding what is there: a pin the environment
    could change is no pin) and run torch at one thread if it is already imported.

    Called when ``icml26`` is imported, before any of its modules imports torch or numpy; child
    processes (Dask workers, notebook kernels, subprocesses) inherit the environment."""
    if mode() == "native":
        return
    os.environ.update(PINS)
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def problems() -> list[str]:
    """What is not pinned in this process, each as a sentence (empty when all pins hold).

    The environment can be right and the process still not pinned: numpy imported before
    ``icml26`` has its SIMD loops and OpenBLAS kernel fixed already, and a torch computation
    run before ``icml26`` was imported fixes ATen's capability."""
    if mode() == "native":
        return ["ICML26_NUMERICS=native: the machine's own code paths (values are not "
                "comparable with the committed ones)"]
    out = [f"{k}={os.environ.get(k)!r}, pinned {v!r}" for k, v in PINS.items()
           if os.environ.get(k) != v]
    import torch

    if torch.backends.cpu.get_cpu_capability() not in ("AVX2", "DEFAULT"):
        out.append(f"ATen runs {torch.backends.cpu.get_cpu_capability()} kernels (torch "
                   "computed before icml26 was imported)")
    if torch.get_num_threads() != 1:
        out.append(f"torch runs {torch.get_num_threads()} threads")
    from numpy.lib.introspect import opt_func_info

    targets = {t.get("current", "") for sigs in opt_func_info("exp|add|multiply").values()
               for t in sigs.values()}
    if any("AVX512" in t or "X86_V4" in t for t in targets):
        out.append("numpy dispatches AVX512 loops (numpy was imported before icml26)")
    return out


def describe() -> str:
    """One line: the mode and any pin that does not hold (for logs and records)."""
    bad = problems()
    return "numerics pinned" if not bad else "numerics NOT pinned: " + "; ".join(bad)


def shell_exports() -> str:
    """``export K=V`` lines of :data:`PINS`, for a process started outside the suite (a
    ``dask worker``, a JupyterLab server): ``eval "$(icml26 numerics)"``."""
    import shlex

    return "\n".join(f"export {k}={shlex.quote(v)}" for k, v in PINS.items())
