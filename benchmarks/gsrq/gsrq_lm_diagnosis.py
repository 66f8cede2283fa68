"""Issue 47's diagnosis of ``tiny_lm_one_bit`` (seeds 0-1 only): why the first design failed.

The audit's cause, in three parts, each measured here:
1. head dim 32: GSKM fixes a high-dimension effect -- synthetic RQ at d = 32 vs d = 128
   (``part = synthetic``: cluster gain and per-token gain vs RQ-kmeans, equal-norm and
   lognormal norms, K = 256, 4 stages, held-out rows);
2. the passkey task saturates -- the first design's tiny LM (head dim 32, one 5-digit passkey)
   and the second's (head dim 128, 4 keys x 4 digits) decoded with quantized K/V at every
   stage of K = 256 (``part = lm``: perplexity, recall accuracy, chance 0.1, fp32 ceiling);
3. real K/V norms are heavy-tailed -- the std of the log-norms of the LMs' held-out keys and
   values, per layer (``part = norms``; the synthetic heavy tail is 0.8).

It also fixes the operating point of the second design by the rule written down before it ran
(notebook, "Second design (issue 47)"): the largest M in {4, 8, 16} stages at which the
RQ-kmeans baseline's recall, mean over seeds 0-1, is at least 0.05 below the fp32 ceiling;
the GSRQ rows play no part in it. It found none (recall at the ceiling at every M), so the
claim falls back to M = 4, the synthetic claims' K = 256 x 4 stages at d = 128.

Run (about 10-15 min of one CPU core, trains both LMs once into the cache):
    ICML26_CACHE=/tmp/gsrq-cache OMP_NUM_THREADS=1 .venv/bin/python \\
        benchmarks/gsrq/gsrq_lm_diagnosis.py
writes ``benchmarks/gsrq/gsrq_lm_diagnosis.csv`` (long format: one row per measured value).
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import icml26  # noqa: F401  (pins the numeric code paths)
from icml26 import gsrq
from icml26.common import generator
from icml26.gsrq import tiny_lm as lm
from icml26.gsrq.experiments import FIRST_DESIGN, norm_tails

OUT = Path(__file__).with_suffix(".csv")
SEEDS = (0, 1)
GRID = (4, 8, 16)  # candidate operating points at head dim 128: 0.25, 0.5, 1 bit


def main() -> None:
    quick = gsrq.config_for("quick")
    designs = {"first (hd 32, passkey)": replace(quick, **FIRST_DESIGN),
               "second (hd 128, 4 keys)": replace(quick, lm_stages=max(GRID))}
    rows: list[dict] = []

    def put(part, design, seed, variant="", stages="", metric="", value=float("nan"),
            **extra):
        rows.append({"part": part, "design": design, "seed": seed, "variant": variant,
                     "stages": stages, "metric": metric, "value": value, **extra})

    for seed in SEEDS:
        for dim in (32, 128):
            for tail in (0.0, 0.8):
                data = replace(quick.data, dim=dim, norm_tail=tail)
                for label in gsrq.VARIANTS:
                    for r in gsrq.rq_curve(data, quick.quant(label), seed):
                        for k in ("cos", "rel_l2", "bits"):
                            put("synthetic", f"d={dim}, sigma={tail}", seed, label,
                                r["stage"], k, r[k])
        for name, cfg in designs.items():
            print(name, "seed", seed, flush=True)
            for r in gsrq.figure_tiny_lm_data(cfg, seed):
                for k in ("bits", "ppl", "passkey", "k_cos", "v_cos", "k_rel_l2", "v_rel_l2"):
                    if k in r:
                        put("lm", name, seed, r["variant"], r["stages"], k, r[k])
            model, _ = gsrq.trained_tiny_lm(cfg)
            lcfg = gsrq.lm_config(cfg)
            _, val = lm.split_corpus(lcfg)
            win = lm.sample_windows(val, lcfg, cfg.lm_eval_windows, generator(20_011 + seed))[0]
            kv = lm.collect_kv(model, win[:, :-1])
            for layer in range(lcfg.n_layers):
                for kind in ("k", "v"):
                    for k, v in norm_tails(kv[kind][layer]).items():
                        put("norms", name, seed, f"layer {layer} {kind}", "", k, v)
    with OUT.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # the operating point, from the baseline and the ceiling alone
    lm_rows = [r for r in rows if r["part"] == "lm" and r["design"].startswith("second")
               and r["metric"] == "passkey"]

    def mean(variant, stages):
        vals = [r["value"] for r in lm_rows if r["variant"] == variant and r["stages"] == stages]
        return sum(vals) / len(vals)

    ceiling = mean("fp32 cache", 0)
    base = {m: mean("RQ-kmeans", m) for m in GRID}
    ok = [m for m in GRID if base[m] <= ceiling - 0.05]
    print(f"ceiling {ceiling:.3f}; RQ-kmeans recall {base}; operating point M = "
          f"{max(ok) if ok else 'none (saturated at every M)'}")


if __name__ == "__main__":
    main()
