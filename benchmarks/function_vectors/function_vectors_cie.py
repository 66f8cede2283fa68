"""CPU timing of the CIE sweep (Todd et al.'s per-head patching) three ways.

* ``looped``: one full forward per (layer, head) - 12 forwards of the shuffled prompts;
* ``batched``: the prompts tiled 12x, one head patched per tile, one full forward;
* ``prefix``: the same tiling, but only the final token is recomputed on the cached keys and
  values of one unpatched run (what ``icml26.function_vectors`` uses).

All three give the same AIE (tests/test_function_vectors.py checks it). Results are appended to
``benchmarks/function_vectors/function_vectors_cie.csv``; timings are never claims.

    python benchmarks/function_vectors/function_vectors_cie.py [--threads N] [--repeats R]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time
from pathlib import Path

import torch

from icml26 import function_vectors as fv
from icml26.kernels.bench import append_csv


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = fv.config_for("quick")
    blob = fv.shipped_blob()
    model = fv.model_from_state(blob) if blob is not None else fv.FVTransformer().eval()
    a = fv.fv_analysis(model, cfg, 0)
    g = torch.Generator().manual_seed(17)
    prompts = fv.make_prompts(fv.tasks_for(cfg.cie_prompts * fv.N_TASKS), fv.MAX_SHOTS, g,
                              shuffle=True)
    rows = []
    for mode in ("looped", "batched", "prefix"):
        fv.causal_indirect_effect(model, a["means"], prompts, mode=mode)  # warm-up
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            fv.causal_indirect_effect(model, a["means"], prompts, mode=mode)
            best = min(best, time.perf_counter() - t0)
        rows.append({"mode": mode, "seconds": best})
    looped = rows[0]["seconds"]
    out = Path(__file__).with_suffix(".csv")
    stamp = datetime.datetime.now().isoformat(timespec="seconds")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for r in rows:
        print(f"{r['mode']:8s} {r['seconds']:.3f} s  ({looped / r['seconds']:.1f}x vs looped)")
    append_csv(out, ({"timestamp": stamp, "machine": platform.processor() or platform.machine(),
                      "threads": args.threads, "load_avg_1min": f"{load:.2f}",
                      "prompts": len(prompts), "heads": 12, "mode": r["mode"],
                      "seconds": f"{r['seconds']:.4f}",
                      "speedup_vs_looped": f"{looped / r['seconds']:.2f}"} for r in rows))
    print(f"appended to {out}")


if __name__ == "__main__":
    main()
