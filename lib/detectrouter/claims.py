"""The claims of ``detectrouter``: the claim rows and how each is measured from ``evaluate``.

Binding (the issue): the mismatch matters, no surrogate is universal, the router is near oracle
routing.  Added (the z-normalisation pitfall slipped through the binding claims on seed 0, see
``router_fpr_calibrated``): the router's false-positive rate at the nominal 5% threshold.
Reported, and expected since they held on seeds 0-6 (first design) and 0-11 (second): the
router beats every fixed surrogate; stage 2 helps on black-box sources.

CLAIMS_VERSION 2 (issue 35, the second design, fixed before any seed above 6 was run):

* every zoo model is trained on the same pooled training split of the three corpora (sources
  differ by family, order, size and temperature), so human and machine text share the domain.
  In the first design each model had its own corpora; human text alone, with no machine text,
  was told apart by corpus (``diagnose.domain_auroc``, seeds 0-1: sklearn passages against the
  other human passages 0.04-0.20 under every surrogate, pydoc 0.37-0.88), so a generator
  trained on one corpus carried its corpus's score into its text and ``mismatch_matters``
  partly measured domain. Not all the cells near 0 were domain: a weak source's text is far
  less likely than human text under a high-order n-gram (``diagnose.likelihood_gap``: 3-gram
  and GRU texts at -2.7..-5.1 reference sd under the 5- and 7-gram, the 7-gram trained on every
  corpus), which Fast-DetectGPT's curvature rates below human text;
* the router's encoder sees, besides the text's character / word tf-idf, the text's two
  criteria under every surrogate, z-normalised on human reference text
  (``RouterConfig.stats``): the quantities stage 2's target is made of, so stage 2 can align
  prototype distances with detection scores. First design (``diagnose.blackbox_routing``,
  seeds 0-1): the black-box 4-gram's mean embedding was nearest its best surrogate's prototype,
  stage 2's target named that surrogate for 84-87% of its training texts and a label-free
  estimate found it, yet 55-57% of its test texts went there: by tf-idf it sat between the two
  docstring-trained prototypes. Chosen on the design seeds 0-1
  (``benchmarks/detectrouter/detectrouter_router_variants.csv``: router / oracle 0.926 / 0.908 text
  only, 0.957 / 0.945 with the statistics, 0.958 / 0.943 with also 3 prototypes per surrogate: not
  kept), before any seed above 6 was run.

Issue 46, item 6 (an independent audit; written before any result of it was seen): the encoder
reads every surrogate's z-scored criteria, so routing a text runs every surrogate, and
``router_beats_fixed`` compares it with detectors that run one. At the router's cost the fair
baseline is a fixed combination of the same scores (``combine``): mean-z, max-z and a
logistic regression on the router's statistics, trained on the router's training texts
against the human reference text, one chosen by the best validation AUROC (5-fold CV on that
training split; ties to the simpler), evaluated on the headline's test set by AUROC.
``router_beats_combination`` (headline, mean: a comparison of two methods, the abstract's
"consistent improvements" at equal information): router minus that combination > 0.
``text_router_beats_fixed`` (finding: the abstract never says what the encoder reads): the
same router with a text-only encoder, which runs one surrogate per text, so its fair baseline
is the best fixed surrogate, >= 0.02 like ``router_beats_fixed``; its margin over the
combination is in its note and the notebook. A new claim changes no other measurement, so
``CLAIMS_VERSION`` stays; the evaluation's cache version went to 5.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.detectrouter.experiments import (
    PAPER,
    DetectRouterConfig,
    config_for,
    evaluation,
    znormed,
    zoo_data,
)

CLAIMS_VERSION = 2
Z_5PCT = 1.645  # one-sided 5% point of N(0, 1): the threshold of a z-normalised score

#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "mismatch_matters": ClaimSpec(
        statement="Detection depends on surrogate-source alignment: mean diagonal AUROC minus "
                  "mean off-diagonal AUROC (white-box sources x pool) >= 0.10",
        op=">=", threshold=0.10, expected=True, role="mechanism", unit="mean",
        source="detection performance varies substantially depending on surrogate-source "
               "alignment"),
    "no_universal_surrogate": ClaimSpec(
        statement="No surrogate is best everywhere: every surrogate trails the best one by >= "
                  "0.05 AUROC on some source (measured: the min over surrogates of that largest "
                  "gap)",
        op=">=", threshold=0.05, expected=True, role="mechanism", unit="each",
        source="no single surrogate achieves optimal performance universally"),
    "router_near_oracle": ClaimSpec(
        statement="DetectRouter reaches >= 0.9x the AUROC of oracle routing on the "
                  "mixed-source test set",
        op=">=", threshold=0.9, expected=True, role="mechanism", unit="mean",
        source="selecting the most appropriate surrogate for each input"),
    "router_fpr_calibrated": ClaimSpec(
        statement="Routed scores share one scale: flagging z >= 1.645 (nominal 5% FPR) flags "
                  "<= 10% of held-out human texts",
        op="<=", threshold=0.10, expected=True, role="check", unit="each", source=""),
    "router_beats_fixed": ClaimSpec(  # 0.049-0.111, seeds 0-11
        statement="DetectRouter beats the best fixed surrogate (\"consistent improvements "
                  "across multiple detection criteria and model families\"): on the "
                  "mixed-source test set by >= 0.02 AUROC",
        op=">=", threshold=0.02, expected=True, role="headline", unit="mean",
        source="consistent improvements across multiple detection criteria and model "
               "families"),
    "stage2_helps_blackbox": ClaimSpec(  # 0.20-0.27 on seeds 0-11
        statement="Stage 2 (aligning prototype distances with detection scores) raises the "
                  "AUROC on black-box sources (stage 1+2 minus stage 1)",
        op=">", threshold=0.0, expected=True, role="mechanism", unit="mean",
        source="the second generalizes to black-box sources by aligning geometric distances "
               "with observed detection scores"),
    "router_beats_combination": ClaimSpec(  # issue 46; -0.10 on seeds 0-15: fails
        statement="DetectRouter beats the best fixed combination of the same z-scores "
                  "(\"consistent improvements across multiple detection criteria and model "
                  "families\" at the router's cost, which runs every surrogate): mixed-source "
                  "test AUROC minus that of the best of mean-z, max-z and a logistic regression "
                  "(chosen on validation) > 0",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source="consistent improvements across multiple detection criteria and model "
               "families"),
    "text_router_beats_fixed": ClaimSpec(  # issue 46; expected: its interval cleared 0.02
        statement="The router with a text-only encoder (it runs one surrogate per text) beats "
                  "the best fixed surrogate on the mixed-source test set by >= 0.02 AUROC",
        op=">=", threshold=0.02, expected=True, role="finding", unit="mean", source=""),
}
ROUTER_CLAIMS = ("router_near_oracle", "router_fpr_calibrated", "router_beats_fixed",
                 "stage2_helps_blackbox", "router_beats_combination", "text_router_beats_fixed")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (the GRUs,
    the scores' statistics and the router run there; n-gram tables, sampling and AUROCs stay
    numpy on the CPU)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def claims_for(cfg: DetectRouterConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests set ``znorm`` / ``routing`` /
    ``router.stage2_weight``)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    with table.guard(["mismatch_matters", "no_universal_surrogate", *ROUTER_CLAIMS]):
        data = zoo_data(cfg.zoo, seed, device=dev)
        r = evaluation(cfg, seed, device=dev)
        m, pool, sources = r["matrix"], r["pool"], r["sources"]
        k = len(pool)
        white = m[:k]
        diag, off = np.diag(white).mean(), white[~np.eye(k, dtype=bool)].mean()
        scale = (f"{k} surrogates, {len(sources) - k} black-box sources, "
                 f"{len(data['human'])} human / {len(data['texts'][sources[0]])} machine texts "
                 f"per source, criterion {cfg.criterion}; zoo trained here in seconds "
                 "(char n-grams, tiny GRUs), not the paper's LLMs")
        table.add("mismatch_matters", diag - off,
                  f"diagonal {diag:.3f}, off-diagonal {off:.3f} (min {white.min():.3f}); "
                  f"{scale}; every model trained on the same pooled split (second design: "
                  "no domain shift; the cells near 0 left are weak sources' text, less likely "
                  "than human text under a stronger surrogate); paper: > 0.9 matched, down to "
                  "~0.2 mismatched")
        gaps = (m.max(1, keepdims=True) - m).max(0)
        table.add("no_universal_surrogate", gaps.min(),
                  "largest gap per surrogate: " + ", ".join(
                      f"{p} {g:.2f}" for p, g in zip(pool, gaps)))
        s1, s2 = r["stage1"], r["stage2"]
        best = int(np.argmax(r["fixed"]))
        routing = ("random routing (mutation)" if cfg.routing == "random" else
                   "prototype routing")
        zn = "z-normalised on human reference text" if cfg.znorm else "RAW scores (mutation)"
        table.add("router_near_oracle", s2["auroc"] / r["oracle"],
                  f"router {s2['auroc']:.3f} ({routing}, stage 1+2; stage 1 only "
                  f"{s1['auroc']:.3f}) / oracle {r['oracle']:.3f} (each machine text sent to "
                  "its source's best surrogate by the test matrix; human texts to the best "
                  "surrogate of a random source); scores " + zn + "; second design (issue "
                  "35): shared-domain zoo, encoder fed the texts' statistics under the pool: "
                  "0.918-0.962 on seeds 0-11 (first design: 0.877-0.896 on seeds 1-4, "
                  "benchmarks/detectrouter/detectrouter_seeds_first_design.csv)")
        fpr = flagged_human(data, cfg, r)
        table.add("router_fpr_calibrated", fpr,
                  f"share of {len(data['human'])} held-out human texts with routed score >= "
                  f"{Z_5PCT} ({zn}); skipping the z-normalisation passed router_near_oracle "
                  "on seed 0 (raw scales happened to favour the router), so this claim was "
                  "added to catch it")
        table.add("router_beats_fixed", s2["auroc"] - r["fixed"][best],
                  f"router {s2['auroc']:.3f} vs best fixed {pool[best]} {r['fixed'][best]:.3f}; "
                  f"score ensemble {r['ensemble']:.3f}")
        table.add("stage2_helps_blackbox", s2["black_auroc"] - s1["black_auroc"],
                  f"black-box AUROC {s1['black_auroc']:.3f} -> {s2['black_auroc']:.3f} "
                  f"(weight {cfg.router.stage2_weight}, T_s {cfg.router.score_temperature})")
        comb, text = r["combination"], r["text"]
        each = ", ".join(f"{k} {comb['test'][k]:.3f} (val {comb['val'][k]:.3f})"
                         for k in comb["test"])
        table.add("router_beats_combination", s2["auroc"] - comb["auroc"],
                  f"router {s2['auroc']:.3f} ({routing}) vs {comb['chosen']} "
                  f"{comb['auroc']:.3f}, chosen by validation AUROC (5-fold CV on the router's "
                  f"training texts against the human reference text); test (val): {each}; "
                  f"logistic C {comb['C']:g}")
        table.add("text_router_beats_fixed", text["auroc"] - r["fixed"][best],
                  f"text-only router {text['auroc']:.3f} (stage 1+2; {routing}) vs best fixed "
                  f"{pool[best]} {r['fixed'][best]:.3f}; vs the combination {comb['chosen']} "
                  f"{comb['auroc']:.3f}: {text['auroc'] - comb['auroc']:+.3f}; the router with "
                  f"the scores {s2['auroc']:.3f}")
    return table.claims


def flagged_human(data: dict, cfg: DetectRouterConfig, result: dict) -> float:
    """Share of human test texts whose routed score is >= :data:`Z_5PCT`."""
    zh = znormed(data, cfg)["human"]
    routed = zh[np.arange(len(zh)), result["router"]["human_route"]]
    return float(np.mean(routed >= Z_5PCT))


def seed_record(first_design: bool = False):
    """``benchmarks/detectrouter/detectrouter_seeds.csv`` (every claim per seed; with
    ``first_design``, the first design's record ``..._seeds_first_design.csv``) as a DataFrame;
    empty when absent (an install without the repository's benchmarks folder)."""
    return _benchmark("detectrouter_seeds" + ("_first_design" if first_design else "") + ".csv")


#: the margins ``combination_record`` derives from
#: ``benchmarks/detectrouter/detectrouter_combination.csv``
MARGINS = {"router - combination": ("router", "combination"),
           "text-only router - combination": ("text_router", "combination"),
           "router - best fixed": ("router", "best_fixed"),
           "text-only router - best fixed": ("text_router", "best_fixed")}


def combination_record():
    """``benchmarks/detectrouter/detectrouter_combination.csv`` (issue 46: per seed, the router, the
    text-only router, the best fixed surrogate and the combination chosen on validation) in
    long form: ``seed, comparison, margin`` (:data:`MARGINS`); empty when absent."""
    import pandas as pd

    wide = _benchmark("detectrouter_combination.csv")
    if wide.empty:
        return pd.DataFrame(columns=["seed", "comparison", "margin"])
    return pd.concat([pd.DataFrame({"seed": wide["seed"], "comparison": name,
                                    "margin": wide[a] - wide[b]})
                      for name, (a, b) in MARGINS.items()], ignore_index=True)


def _benchmark(name: str):
    from pathlib import Path

    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "detectrouter" / name
    return pd.read_csv(path) if path.exists() else pd.DataFrame()
