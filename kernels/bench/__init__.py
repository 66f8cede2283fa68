"""GPU benchmarks of the kernels, and the one helper every benchmark in ``benchmarks/``
records its rows with (``append_csv``).

``python -m icml26.kernels.bench [--quick] [--only OP ...] [--out DIR]`` runs every kernel's
benchmark (``bench_<op>.py``, each runnable alone) on the shared harness (``harness.py``: CUDA
check, run metadata, copy bandwidth, ``do_bench`` across Triton versions) and writes one CSV
per kernel plus ``summary.md``; see ``cli.py``."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path


def append_csv(path: str | Path, rows: Iterable[dict], fields: Sequence[str] | None = None,
               digits: int | None = None) -> int:
    """Append ``rows`` (dicts) to the CSV at ``path``, writing the header when the file is new;
    ``fields`` defaults to the first row's keys; floats are rounded to ``digits`` if given.
    Returns the number of rows written."""
    rows = [{k: round(v, digits) if digits is not None and isinstance(v, float) else v
             for k, v in r.items()} for r in rows]
    if not rows:
        return 0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(fields or rows[0]))
        if new:
            writer.writeheader()
        writer.writerows(rows)
    return len(rows)
