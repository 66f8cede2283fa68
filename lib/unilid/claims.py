"""The claims of ``unilid``: the claim rows and how each is measured from the experiments.

Binding (issue 14): ``five_shot_70``, ``beats_fasttext_5shot``, ``incremental_add_exact``.
Reported: ``subword_beats_chars``, ``vs_char_nb_5shot`` (fails: char NB is as good or
better), ``dialect_gain_vs_fasttext``.
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimTable
from icml26.unilid.data import CLOSE12
from icml26.unilid.experiments import (
    PAPER,
    UniLIDConfig,
    accuracy,
    config_for,
    figure_incremental_data,
    predictions,
)

#: name: (statement, op, threshold, expected)
CLAIM_SPECS = {
    "five_shot_70": ("With 5 labelled samples per language UniLID reaches >= 70% accuracy "
                     "(22 labels incl. 6 close pairs)", ">=", 0.70, True),
    "beats_fasttext_5shot": ("At 5 samples per language UniLID beats a tuned fastText "
                             "classifier by >= 0.15 accuracy (same split)", ">=", 0.15, True),
    "incremental_add_exact": ("Adding a language changes no parameter of the existing "
                              "languages (count of changed entries)", "<=", 0.0, True),
    "subword_beats_chars": ("Subword pieces beat a character unigram model (same EM, max "
                            "piece length 1) by >= 0.02 accuracy at 5 samples", ">=", 0.02,
                            True),
    "vs_char_nb_5shot": ("UniLID is at least as accurate as character 1-4-gram naive Bayes at "
                         "5 samples (the paper does not compare; reported)", ">=", 0.0, False),
    "dialect_gain_vs_fasttext": ("On the close pairs UniLID beats fastText by >= 0.15 "
                                 "accuracy at 5 samples", ">=", 0.15, True),
}


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``."""
    return claims_for(config_for(scale), seed)


def claims_for(cfg: UniLIDConfig, seed: int = 0) -> list[Claim]:
    """The claims for an explicit config (the mutation tests set the model's flags)."""
    table = ClaimTable(PAPER, CLAIM_SPECS)
    k = cfg.claim_k
    acc: dict[str, float] = {}
    close: dict[str, float] = {}
    with table.guard(["five_shot_70", "beats_fasttext_5shot", "subword_beats_chars",
                      "vs_char_nb_5shot", "dialect_gain_vs_fasttext"]):
        setting = {}
        for method in ("UniLID", "UniLID (characters)", "char NB", "fastText"):
            p = predictions(cfg, seed, k, method)
            acc[method] = accuracy(p["pred"], p["gold"])
            close[method] = accuracy(p["pred"], p["gold"], CLOSE12)
            setting[method] = p["setting"]
        n_test = len(p["gold"])
        split = (f"{len(cfg.languages)} labels, k={k}, {n_test} test samples of >= "
                 f"{cfg.min_chars} chars; seed {seed}")
        u = acc["UniLID"]
        table.add("five_shot_70", u, f"UniLID {u:.3f} ({setting['UniLID']}); {split}; tier "
                  "B: Django UI strings joined into pseudo-sentences, not FLORES; spec "
                  "prototype 0.789-0.805")
        table.add("beats_fasttext_5shot", u - acc["fastText"],
                  f"UniLID {u:.3f} vs fastText {acc['fastText']:.3f} (tuned on "
                  f"{cfg.n_valid} validation samples per language: {setting['fastText']}); "
                  f"{split}")
        table.add("subword_beats_chars", u - acc["UniLID (characters)"],
                  f"UniLID {u:.3f} vs character unigram {acc['UniLID (characters)']:.3f} "
                  f"(same vocabulary restricted to 1-char pieces, same EM and prior); {split}")
        table.add("vs_char_nb_5shot", u - acc["char NB"],
                  f"UniLID {u:.3f} vs char NB {acc['char NB']:.3f} ({setting['char NB']}); "
                  f"{split}; spec prototype -0.02..-0.04: does not reproduce the way the "
                  "paper's framing suggests (NB was not among its baselines)")
        table.add("dialect_gain_vs_fasttext", close["UniLID"] - close["fastText"],
                  f"close-pair test samples ({', '.join(CLOSE12)}) of the 22-label run: "
                  f"UniLID {close['UniLID']:.3f} vs fastText {close['fastText']:.3f}; {split}")
    with table.guard(["incremental_add_exact"]):
        inc = figure_incremental_data(cfg, seed)
        table.add("incremental_add_exact", inc["changed"],
                  f"{inc['changed']} of {inc['n_parameters']} parameters (log p_L of the "
                  f"{len(inc['rows'])} old languages) changed when {inc['added']} was added "
                  f"(k={inc['k']}; old-language accuracy {inc['old_before']:.3f} -> "
                  f"{inc['old_after']:.3f}, {inc['added']} {inc['new_accuracy']:.3f}); "
                  f"normaliser {cfg.model.normalizer}")
    return table.claims
