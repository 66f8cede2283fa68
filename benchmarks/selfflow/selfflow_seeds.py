"""Every probe number and claim of selfflow on seeds 0-6 at quick scale.

Trains (or loads from the cache) the four models per seed, then writes
``benchmarks/selfflow/selfflow_seeds.csv`` (seed, variant, probe setting, block, held-out accuracy,
held-out FM loss) and ``benchmarks/selfflow/selfflow_claims.csv`` (seed, claim, measured, holds,
expected).  The notebook's closing section reads both.

    ICML26_CACHE=... python benchmarks/selfflow/selfflow_seeds.py [--seeds 0 1 2 3 4 5 6]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from icml26 import selfflow

HERE = Path(__file__).resolve().parent
PROBE_CSV = HERE / "selfflow_seeds.csv"
CLAIM_CSV = HERE / "selfflow_claims.csv"


def rows_for(seed: int, scale: str = "quick") -> tuple[list[dict], list[dict]]:
    cfg = selfflow.config_for(scale)
    res = selfflow.run_all(cfg, seed)
    probes = [{"seed": seed, "variant": r["variant"], "probe": r["probe"], "layer": r["layer"],
               "acc": round(r["acc"], 4), "fm_loss": round(res[r["variant"]]["fm_loss"], 5)}
              for v in selfflow.VARIANTS for r in res[v]["probes"]]
    probes += [{"seed": seed, "variant": "raw pixels", "probe": r["probe"], "layer": -1,
                "acc": round(r["acc"], 4), "fm_loss": ""} for r in selfflow.pixel_probes(cfg, seed)]
    claims = [{"seed": seed, "claim": c.name, "measured": round(c.measured, 5),
               "holds": c.holds, "expected": c.expected} for c in selfflow.claims(seed, scale)]
    return probes, claims


def main(argv=None) -> int:
    import pandas as pd

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(7)))
    args = ap.parse_args(argv)
    probes, claims = [], []
    for s in args.seeds:
        p, c = rows_for(s)
        probes += p
        claims += c
        print(f"seed {s}: " + ", ".join(f"{r['claim']} {r['measured']:+.4f}"
                                        f"{'' if r['holds'] else ' (fails)'}" for r in c),
              flush=True)
    pd.DataFrame(probes).to_csv(PROBE_CSV, index=False)
    pd.DataFrame(claims).to_csv(CLAIM_CSV, index=False)
    print(f"wrote {PROBE_CSV.name} and {CLAIM_CSV.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
