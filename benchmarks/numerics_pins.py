"""Do the pins of ``icml26.numerics`` make claims machine-independent, and what do they cost?

Runs every paper's ``claims(seed)`` (``benchmarks/claims_ledger.py``, one paper per process, an
empty cache per configuration) under named configurations of the environment, then writes
``benchmarks/numerics_pins.csv`` (config, paper, claim, seed, measured, seconds) and prints

- per paper, whether the pinned configurations agree bit for bit with each other, and whether
  the native ones do (the variation the pins must override);
- the claims time per paper, native against pinned (the cost of the pins).

The configurations vary what the pins must override on an AVX512 machine: ATen's, oneDNN's and
numpy's ISA (AVX512 native or capped at AVX2, as on a CPU without AVX512), OpenBLAS's kernel,
MKL's instruction cap, and one or two threads.

    python benchmarks/numerics_pins.py run --configs native pinned --out DIR [--papers ...]
    python benchmarks/numerics_pins.py collect DIR [DIR ...] [--sweep DATASET NAME]
                                                     # -> numerics_pins.csv + summary

``--sweep`` adds seed 0 of an ``icml26 sweep`` dataset (which runs on the pinned paths) as the
configuration NAME (e.g. ``pinned``: the seconds are then a sweep worker's).

Two configurations at a time share the 2 cores, so the seconds are those of a loaded machine
(both sides equally).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "numerics_pins.csv"
AVX2_MACHINE = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                "MKL_ENABLE_INSTRUCTIONS": "AVX2", "OPENBLAS_CORETYPE": "Haswell",
                "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
CONFIGS = {
    "native": {"ICML26_NUMERICS": "native", "OMP_NUM_THREADS": "1"},
    "native-avx2-2threads": {"ICML26_NUMERICS": "native", "OMP_NUM_THREADS": "2",
                             **AVX2_MACHINE},
    "pinned": {"ICML26_NUMERICS": "pinned"},
    "pinned-under-avx2-2threads": {"ICML26_NUMERICS": "pinned", "OMP_NUM_THREADS": "2",
                                   **AVX2_MACHINE},
}


def run(config: str, out: Path, papers: list[str], seed: int) -> int:
    env = {**os.environ, **CONFIGS[config],
           "ICML26_CACHE": tempfile.mkdtemp(prefix=f"icml26-{config}-")}
    cmd = [sys.executable, str(HERE / "claims_ledger.py"), "--out", str(out / config),
           "--seeds", str(seed), "--timeout", "1500", *(["--papers", *papers] if papers else [])]
    return subprocess.run(cmd, env=env).returncode


def collect(folders: list[Path]) -> list[dict]:
    rows = []
    for folder in folders:
        with open(folder / "claims.csv", newline="") as f:
            for r in csv.DictReader(f):
                rows.append(dict(config=folder.name, paper=r["paper"], claim=r["claim"],
                                 seed=r["seed"], measured=r["measured"], seconds=r["seconds"],
                                 error=r["error"]))
    return rows


def sweep_rows(dataset: Path, name: str, seed: int = 0) -> list[dict]:
    from icml26 import sweep

    df = sweep.read(dataset, seeds=[seed])
    return [dict(config=name, paper=r["paper"], claim=r["claim"], seed=str(seed),
                 measured=repr(float(r["measured"])), seconds=str(round(r["seconds"], 2)),
                 error=r["error"] or "") for r in df.to_dict("records")]


def summary(rows: list[dict]) -> str:
    by = defaultdict(dict)  # (paper) -> config -> {claim: measured}
    secs = defaultdict(dict)
    for r in rows:
        by[r["paper"]].setdefault(r["config"], {})[r["claim"]] = r["measured"]
        secs[r["paper"]][r["config"]] = float(r["seconds"])
    configs = sorted({r["config"] for r in rows})
    pinned = [c for c in configs if c.startswith("pinned")]
    native = [c for c in configs if c.startswith("native")]
    lines = ["| paper | native configs agree | pinned configs agree | claims moved by the pins"
             " | native s | pinned s | cost |", "|---|---|---|---|---|---|---|"]
    def agree(per: dict, names: list[str]) -> str:
        vals = [per.get(c) for c in names]
        return "-" if len(vals) < 2 else ("yes" if all(v == vals[0] for v in vals) else "NO")

    for paper, per in by.items():
        moved = "-"
        if "native" in per and "pinned" in per:
            moved = str(sum(per["native"].get(k) != v for k, v in per["pinned"].items()))
        n, p = secs[paper].get("native"), secs[paper].get("pinned")
        cost = f"{p / n:.2f}x" if n and p else "-"
        lines.append(f"| {paper} | {agree(per, native)} | {agree(per, pinned)} | {moved} | "
                     f"{n if n else '-'} | {p if p else '-'} | {cost} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--configs", nargs="+", choices=sorted(CONFIGS), default=sorted(CONFIGS))
    r.add_argument("--papers", nargs="*", default=[])
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("collect")
    c.add_argument("folders", nargs="+", type=Path)
    c.add_argument("--sweep", nargs=2, metavar=("DATASET", "NAME"))
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return max(run(cfg, args.out, args.papers, args.seed) for cfg in args.configs)
    rows = collect(args.folders)
    if args.sweep:
        rows += sweep_rows(Path(args.sweep[0]), args.sweep[1])
    with open(OUT, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
