"""Diagnosis of the first design (issue 35): domain shift in the mismatch matrix, and why the
black-box sources are misrouted.

* :func:`domain_auroc` -- human text alone, by corpus: ``AUROC(human of the other corpora,
  human of corpus c)`` under each surrogate. With no machine text at all, a value far from 0.5
  says the surrogate's score moves with the corpus: a generator trained on one corpus then
  carries that corpus's score into its machine text, and the matrix measures domain.
* :func:`likelihood_gap` -- mean likelihood z-score (per character, z-normalised on human
  reference text) of each source's texts under each surrogate: below 0 the machine text is
  *less* likely than human text under that surrogate (off its distribution).
* :func:`blackbox_routing` -- the router refitted exactly as ``evaluate`` fits it: for every
  source, where its texts sit among the prototypes (the nearest prototype of their mean
  embedding, the rank of their best surrogate's prototype), the share routed to the best
  surrogate; for the black-box sources also whether stage 2's target (the argmax of the
  z-scores) names the best surrogate, and whether a label-free estimate (AUROC of the human
  reference text against the black-box training texts, per surrogate) finds it.

The best surrogate per source comes from the test matrix: this is a diagnosis, nothing here
feeds the router.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from icml26.common import generator
from icml26.detectrouter.corpus import CORPORA
from icml26.detectrouter.detect import CRITERIA, auroc
from icml26.detectrouter.experiments import (
    DetectRouterConfig,
    ZooConfig,
    router_inputs,
    stats,
    znormed,
)
from icml26.detectrouter.router import fit_router


def domain_auroc(data: dict, cfg: DetectRouterConfig) -> np.ndarray:
    """``[corpora, K]``: AUROC(human texts of the other corpora, human texts of corpus c)
    under surrogate k (the chosen criterion; 0.5 = the corpus does not move the score); NaN
    for a corpus with no human text in the sample (or all of it)."""
    zh, corpus = znormed(data, cfg)["human"], data["human_corpus"]
    return np.array([[auroc(zh[corpus != c, k], zh[corpus == c, k])
                      if 0 < (corpus == c).sum() < len(corpus) else np.nan
                      for k in range(zh.shape[1])] for c in range(len(CORPORA))])


def likelihood_gap(data: dict) -> np.ndarray:
    """``[sources, K]``: mean likelihood z-score of each source's test texts per surrogate."""
    c = CRITERIA.index("likelihood")
    ref = data["ref_scores"][:, :, c]
    mu, sd = ref.mean(0), np.maximum(ref.std(0), 1e-9)
    return np.array([((data["scores"][s][:, :, c] - mu) / sd).mean(0)
                     for s in data["sources"]])


def blackbox_routing(data: dict, cfg: DetectRouterConfig, seed: int, result: dict) -> list:
    """One row per source: where its texts sit among the prototypes and how they are routed
    (the stage 1+2 router of ``evaluate``, refitted with the same seed)."""
    z = znormed(data, cfg)
    pool, sources, best = data["pool"], data["sources"], result["best"]
    n_pool = len(pool)
    rin = router_inputs(data, z)
    fitted = fit_router(*rin[:4], n_pool, cfg.router, generator(seed + 1), "cpu", *rin[4:])
    st = stats(data)
    protos = fitted.model.prototypes.detach().cpu().numpy()
    c = CRITERIA.index(cfg.criterion)
    ref = (data["ref_scores"][:, :, c] - z["mu"]) / z["sd"]
    rows = []
    for i, s in enumerate(sources):
        emb = fitted.embed(data["texts"][s], st["sources"][s])
        d_centre = ((emb.mean(0) - protos) ** 2).sum(1).reshape(n_pool, -1).min(1)
        route = fitted.route(data["texts"][s], st["sources"][s])
        row = {"source": s, "black_box": i >= n_pool, "best": pool[best[i]],
               "nearest_prototype": pool[int(d_centre.argmin())],
               "best_rank": int((d_centre < d_centre[best[i]]).sum()) + 1,
               "routed_to_best": float(np.mean(route == best[i])),
               "best_auroc": float(result["matrix"][i].max()),
               "routed_auroc": float(result["stage2"]["per_source"][i]),
               "router_texts": len(data["router_texts"][s])}
        if i >= n_pool:
            zb = z["router"][s]
            row["target_names_best"] = float(np.mean(zb.argmax(1) == best[i]))
            est = [auroc(ref[:, k], zb[:, k]) for k in range(n_pool)]
            row["label_free_best"] = pool[int(np.argmax(est))]
        rows.append(row)
    return rows


def first_design() -> DetectRouterConfig:
    """The first design: each zoo model trained on its own corpora."""
    from icml26.detectrouter.experiments import BLACK_BOX_FIRST, POOL_FIRST

    return DetectRouterConfig(zoo=replace(ZooConfig(), pool=POOL_FIRST,
                                          black_box=BLACK_BOX_FIRST),
                              router=replace(DetectRouterConfig().router, stats=False,
                                             prototypes=1))


def diagnosis_record() -> tuple:
    """``benchmarks/detectrouter/detectrouter_diagnosis.csv``, ``..._routing_diagnosis.csv`` and
    ``..._router_variants.csv`` as DataFrames (empty when absent: an install without the
    repository's benchmarks folder)."""
    from pathlib import Path

    import pandas as pd

    here = Path(__file__).resolve().parents[2] / "benchmarks" / "detectrouter"
    return tuple(pd.read_csv(p) if p.exists() else pd.DataFrame()
                 for p in (here / "detectrouter_diagnosis.csv",
                           here / "detectrouter_routing_diagnosis.csv",
                           here / "detectrouter_router_variants.csv"))


def table(record, design: str, name: str) -> tuple[list, list, np.ndarray]:
    """One matrix of the diagnosis record, averaged over its seeds: ``(rows, cols, [R, C])``."""
    g = record[(record["design"] == design) & (record["table"] == name)]
    rows, cols = list(dict.fromkeys(g["row"])), list(dict.fromkeys(g["col"]))
    m = g.groupby(["row", "col"])["value"].mean().unstack().loc[rows, cols]
    return rows, cols, m.to_numpy()
