"""What a Run costs, said before it (issue 32: a Run from an empty cache must say how long it
takes before it starts): the recorded default Run of an app from an empty cache, written by
``benchmarks/app_run_timings.py`` into ``benchmarks/app_run_timings.csv``, and durations in
words. Without a record (an installed package has no ``benchmarks/``) there is no estimate."""

from __future__ import annotations

import csv
from pathlib import Path

#: the record of default Runs from an empty cache (repo checkout only)
TIMINGS_CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "app_run_timings.csv"


def recorded_run(slug: str, path: Path | None = None) -> dict | None:
    """The last recorded default Run of app ``slug`` from an empty cache: wall and CPU
    seconds, cores and load average (default record :data:`TIMINGS_CSV`), or None."""
    path = TIMINGS_CSV if path is None else path
    if not path.exists():
        return None
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["app"] == slug]
    if not rows:
        return None
    r = rows[-1]
    return {"cpu_s": float(r["cpu_s"]), "wall_s": float(r["wall_s"]),
            "cores": int(r["cores"]), "load_1min": float(r["load_1min"])}


def duration(seconds: float) -> str:
    """``"45 s"`` below 90 s, else minutes to a tenth: ``"4.0 min"``; ``"< 1 s"`` below a
    second."""
    if seconds < 1:
        return "< 1 s"
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def recorded_run_words(cost: dict) -> str:
    """How the recorded default Run (:func:`recorded_run`) went, in the words every plan line
    uses."""
    return (f"the default Run from an empty cache took {duration(cost['cpu_s'])} of CPU "
            f"time on an idle core, "
            f"{duration(cost['wall_s'])} wall on the shared {cost['cores']} cores at load "
            f"{cost['load_1min']:g}: benchmarks/app_run_timings.csv")
