"""The one benchmark harness every ``bench_<op>.py`` runs on.

Pieces (each used by ``python -m icml26.kernels.bench``):

* ``cuda_or_exit``: the CUDA check; without a GPU one clear line on stderr and exit code 2,
  before anything is created or written.
* ``run_metadata``: device, driver, CUDA, torch, Triton and Python versions, a UTC stamp.
* ``quantiles``: ``triton.testing.do_bench`` normalised across Triton versions (3.6 returns
  a bare float for ``quantiles=[0.5]``, others a list) to ``[median, p20, p80]``.
* ``copy_bandwidth_gbps``: a 1 GiB device-to-device copy (read + write bytes / time), measured
  in the same run, the ceiling ``% of copy bandwidth`` is quoted against.
* ``Case``: one (kernel, shape, dtype, pass) with its implementations; ``time_case`` turns it
  into rows (Triton, torch eager, ``torch.compile``, other torch paths, Triton variants named
  ``triton-...``), and ``summarize`` / ``write_summary`` into ``summary.md`` (best torch path,
  speedup, % of copy bandwidth).

Nothing here measures on CPU: timings come only from a CUDA run of the command.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NO_CUDA_MESSAGE = ("icml26.kernels.bench: no CUDA device found; these benchmarks time the "
                   "compiled Triton kernels on a GPU, so nothing was run or written.")
ROW_FIELDS = ["kernel", "shape", "dtype", "pass", "impl", "ms", "ms_p20", "ms_p80", "gbps",
              "pct_copy", "max_err", "note"]
META_FIELDS = ["timestamp", "device", "torch", "triton"]
# where the benchmark inputs live: CUDA for every real run (a CPU smoke test of the case
# builders may point it at "cpu", with tiny shapes, under the interpreter)
DEVICE = "cuda"


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return torch.cuda.is_available()


def cuda_or_exit(stream=None) -> int | None:
    """``None`` when a CUDA device is present; otherwise print one line and return 2."""
    if cuda_available():
        os.environ.pop("TRITON_INTERPRET", None)  # compiled kernels, never the interpreter
        return None
    print(NO_CUDA_MESSAGE, file=stream or sys.stderr)
    return 2


def run_metadata() -> dict:
    """What the numbers were measured on (strings, so they go straight into CSV / markdown)."""
    import torch

    meta = {"timestamp": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(), "torch": torch.__version__,
            "cuda": str(torch.version.cuda), "device": "cpu", "driver": "", "triton": ""}
    try:
        import triton

        meta["triton"] = triton.__version__
    except ImportError:  # pragma: no cover
        pass
    if torch.cuda.is_available():
        meta["device"] = torch.cuda.get_device_name()
        try:
            meta["driver"] = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            meta["driver"] = "unknown"
    return meta


def normalise_quantiles(result, n: int) -> list[float]:
    """``do_bench``'s return value as a list of ``n`` floats: a bare float (Triton 3.6 with one
    quantile, or no quantiles) is repeated, a tuple/list is converted."""
    if isinstance(result, (int, float)):
        return [float(result)] * n
    vals = [float(v) for v in result]
    if len(vals) == 1:
        return vals * n
    if len(vals) != n:
        raise ValueError(f"do_bench returned {len(vals)} values, expected {n}")
    return vals


def quantiles(fn: Callable, q: Sequence[float] = (0.5, 0.2, 0.8), bench=None) -> list[float]:
    """``[ms at each quantile]`` of ``fn`` (``triton.testing.do_bench`` unless ``bench``)."""
    if bench is None:
        from triton.testing import do_bench as bench
    return normalise_quantiles(bench(fn, quantiles=list(q)), len(q))


def copy_bandwidth_gbps(numel: int = 2**28, bench=None) -> float:
    """Read + write GB/s of a ``numel``-float32 device-to-device copy (1 GiB by default)."""
    import torch

    src = torch.empty(numel, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = quantiles(lambda: dst.copy_(src), (0.5,), bench)[0]
    return 2 * numel * 4 / (ms * 1e-3) / 1e9


def compiled(fn: Callable) -> Callable:
    """``torch.compile(fn)``; a compile failure is raised at the first call (recorded as a
    row with a note, the other implementations still run)."""
    import torch

    return torch.compile(fn)


@dataclass
class Case:
    """One benchmark point.  ``impls`` maps an implementation name (``"triton"``,
    ``"torch-eager"``, ``"torch-compile"``, or another ``"torch-..."`` path) to a
    zero-argument callable.  ``bytes_moved`` (what the fused kernel must read + write) gives
    GB/s and % of the copy bandwidth; ``error`` maps an implementation's output to its max
    abs error against the reference (optional)."""

    kernel: str
    shape: str
    dtype: str
    impls: dict[str, Callable]
    bytes_moved: float | None = None
    pass_: str = "fwd"
    error: Callable | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)


def time_case(case: Case, copy_gbps: float, bench=None) -> list[dict]:
    """Rows (one per implementation) for ``case``; an implementation that raises is a row with
    ``ms = nan`` and the exception in ``note``, so one failing path cannot hide the others."""
    rows = []
    for impl, fn in case.impls.items():
        row = {"kernel": case.kernel, "shape": case.shape, "dtype": case.dtype,
               "pass": case.pass_, "impl": impl, "ms": math.nan, "ms_p20": math.nan,
               "ms_p80": math.nan, "gbps": math.nan, "pct_copy": math.nan,
               "max_err": math.nan, "note": case.note, **case.extra}
        try:
            out = fn()  # warm-up (compiles), and the output checked below
            if case.error is not None:
                row["max_err"] = float(case.error(out))
            ms, lo, hi = quantiles(fn, bench=bench)
        except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
            row["note"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            rows.append(row)
            continue
        row.update(ms=ms, ms_p20=lo, ms_p80=hi)
        if case.bytes_moved:
            row["gbps"] = case.bytes_moved / (ms * 1e-3) / 1e9
            row["pct_copy"] = 100 * row["gbps"] / copy_gbps if copy_gbps else math.nan
        rows.append(row)
    return rows


def summarize(rows: Iterable[dict]) -> list[dict]:
    """One line per (kernel, shape, dtype, pass) and Triton variant (``"triton"``, the default
    path, then any ``"triton-..."`` alternative): its ms, the best torch path and its ms,
    speedup = best torch / Triton (> 1: Triton is faster), Triton's % of copy bandwidth."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["kernel"], r["shape"], r["dtype"], r["pass"]), []).append(r)
    out = []
    for (kernel, shape, dtype, pass_), rs in groups.items():
        torch_rows = [r for r in rs if r["impl"].startswith("torch") and _finite(r["ms"])]
        best = min(torch_rows, key=lambda r: r["ms"]) if torch_rows else None
        variants = [r for r in rs if r["impl"] == "triton"] + \
            [r for r in rs if r["impl"].startswith("triton-")]
        for tri in variants or [None]:
            t_ms = tri["ms"] if tri else math.nan
            out.append({"kernel": kernel, "shape": shape, "dtype": dtype, "pass": pass_,
                        "triton": tri["impl"] if tri else "-", "triton_ms": t_ms,
                        "best_torch_ms": best["ms"] if best else math.nan,
                        "best_torch": best["impl"] if best else "-",
                        "speedup": (best["ms"] / t_ms) if best and _finite(t_ms) else math.nan,
                        "pct_copy": tri.get("pct_copy", math.nan) if tri else math.nan})
    return out


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _fmt(x, spec: str) -> str:
    return format(x, spec) if _finite(x) else "-"


def write_summary(path: str | Path, rows: Sequence[dict], meta: dict, copy_gbps: float) -> Path:
    """``summary.md``: the run's metadata, the copy bandwidth and the ``summarize`` table."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# Kernel benchmarks", "",
             ", ".join(f"{k}: {meta.get(k, '')}" for k in
                       ("timestamp", "device", "driver", "cuda", "torch", "triton", "python")),
             "", f"Copy bandwidth (1 GiB device-to-device, read + write): "
             f"{_fmt(copy_gbps, '.0f')} GB/s", "",
             "| kernel | shape | dtype | pass | triton | triton ms | best torch ms | "
             "best torch | speedup | % copy bw |", "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summarize(rows):
        lines.append(f"| {s['kernel']} | {s['shape']} | {s['dtype']} | {s['pass']} | "
                     f"{s['triton']} | "
                     f"{_fmt(s['triton_ms'], '.4f')} | {_fmt(s['best_torch_ms'], '.4f')} | "
                     f"{s['best_torch']} | {_fmt(s['speedup'], '.2f')}x | "
                     f"{_fmt(s['pct_copy'], '.0f')} |")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_csv(path: str | Path, rows: Sequence[dict], meta: dict) -> Path:
    """One kernel's rows (with the run metadata on every row), overwriting ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = sorted({k for r in rows for k in r} - set(ROW_FIELDS))
    fields = META_FIELDS + ROW_FIELDS + extra
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**{k: meta.get(k, "") for k in META_FIELDS},
                        **{k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()}})
    return path
