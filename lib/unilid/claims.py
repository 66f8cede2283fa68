"""The claims of ``unilid``: the claim rows and how each is measured from the experiments.

Headlines (the abstract): ``five_shot_70`` ("surpassing 70% accuracy with as few as five
labeled samples per language"), ``beats_fasttext_5shot`` and ``vs_char_nb_5shot``
("substantially improves sample efficiency in low-resource settings", against fastText and
against character n-gram naive Bayes), ``dialect_gain_vs_fasttext`` ("large gains on
fine-grained dialect identification"). Mechanism: ``subword_beats_chars``. Checks:
``incremental_add_exact`` (exactness) and ``fasttext_tuned`` (the baseline's tuning reaches
what a larger budget would).

Issue 28's audit (CLAIMS_VERSION 2): fastText was tuned over 3 configurations (lr never
tuned, <= 50 epochs) and reached 0.41-0.47; it is now tuned over 36 (lr x epochs x character
n-grams x dim) on the same validation split, and UniLID's own alpha x EM iterations over 36
on that split (equal budgets). Tuned fastText reaches ~0.75, so UniLID's margin over it is
a few points, not the 0.15 the claims ask for: ``beats_fasttext_5shot`` and
``dialect_gain_vs_fasttext`` are reported (expected False), their threshold unchanged.
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.unilid.data import CLOSE12
from icml26.unilid.experiments import (
    PAPER,
    UniLIDConfig,
    accuracy,
    config_for,
    figure_incremental_data,
    predictions,
)

CLAIMS_VERSION = 2  # 2: fastText and UniLID tuned on validation over 36 configs each

_TUNED = ("fastText tuned on the validation split over 36 configs (lr x epochs x char "
          "n-grams x dim), UniLID over 36 (alpha x EM iterations) on the same split")

#: name: ClaimSpec (statement, op, threshold, expected, role, unit, source)
CLAIM_SPECS = {
    "five_shot_70": ClaimSpec(
        statement='"surpassing 70% accuracy with as few as five labeled samples per language": '
                  "UniLID >= 0.70 accuracy at 5 samples per language (22 labels incl. 6 close "
                  "pairs)",
        op=">=", threshold=0.70, expected=True, role="headline", unit="each",
        source="surpassing 70% accuracy with as few as five labeled samples per language"),
    "beats_fasttext_5shot": ClaimSpec(
        statement='"substantially improves sample efficiency in low-resource settings": at 5 '
                  "samples per language UniLID beats fastText by >= 0.15 accuracy (both tuned "
                  "on the same validation split, 36 configs each)",
        op=">=", threshold=0.15, expected=False, role="headline", unit="mean",
        source="substantially improves sample efficiency in low-resource settings"),
    "vs_char_nb_5shot": ClaimSpec(  # a baseline the paper never ran
        statement='"substantially improves sample efficiency in low-resource settings", against '
                  "character 1-4-gram naive Bayes: UniLID at least as accurate at 5 samples "
                  "(the paper does not report this baseline)",
        op=">=", threshold=0.0, expected=False, role="finding", unit="mean", source=""),
    "dialect_gain_vs_fasttext": ClaimSpec(
        statement='"delivers large gains on fine-grained dialect identification": on the close '
                  "pairs UniLID beats fastText by >= 0.15 accuracy at 5 samples (both tuned)",
        op=">=", threshold=0.15, expected=False, role="headline", unit="mean",
        source="delivers large gains on fine-grained dialect identification"),
    "subword_beats_chars": ClaimSpec(
        statement="Subword pieces beat a character unigram model (same EM, max piece length 1, "
                  "tuned the same way) by >= 0.02 accuracy at 5 samples",
        op=">=", threshold=0.02, expected=True, role="mechanism", unit="mean",
        source="a simple and efficient LID method based on the UnigramLM tokenization "
               "algorithm"),
    "incremental_add_exact": ClaimSpec(
        statement="Adding a language changes no parameter of the existing languages (count of "
                  "changed entries)",
        op="<=", threshold=0.0, expected=True, role="check", unit="each", source=""),
    "fasttext_tuned": ClaimSpec(
        statement="The fastText baseline is not under-tuned: beyond its grid's top corner (lr "
                  "1.0, 400 epochs, the chosen n-grams and dim) validation accuracy gains <= "
                  "0.05 over the tuned config",
        op="<=", threshold=0.05, expected=True, role="check", unit="each", source=""),
}
FASTTEXT_CLAIMS = ("beats_fasttext_5shot", "dialect_gain_vs_fasttext", "fasttext_tuned")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``; UniLID's EM and scoring
    on ``device`` (the lattice kernel on CUDA), the baselines (fastText, scikit-learn) on the
    CPU whatever the device."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def claims_for(cfg: UniLIDConfig, seed: int = 0, device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation tests set the model's flags)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    k = cfg.claim_k
    acc: dict[str, float] = {}
    close: dict[str, float] = {}
    with table.guard(["five_shot_70", "beats_fasttext_5shot", "subword_beats_chars",
                      "vs_char_nb_5shot", "dialect_gain_vs_fasttext", "fasttext_tuned"]):
        setting = {}
        runs = {}
        for method in ("UniLID", "UniLID (characters)", "char NB", "fastText"):
            p = runs[method] = predictions(cfg, seed, k, method, dev)
            acc[method] = accuracy(p["pred"], p["gold"])
            close[method] = accuracy(p["pred"], p["gold"], CLOSE12)
            setting[method] = p["setting"]
        n_test = len(p["gold"])
        split = (f"{len(cfg.languages)} labels, k={k}, {n_test} test samples of >= "
                 f"{cfg.min_chars} chars, {cfg.n_valid} validation samples per language; "
                 f"seed {seed}")
        u, ft = acc["UniLID"], acc["fastText"]
        table.add("five_shot_70", u, f"UniLID {u:.3f} ({setting['UniLID']}); {split}; tier "
                  "B: Django UI strings joined into pseudo-sentences, not FLORES; spec "
                  "prototype 0.789-0.805 (untuned alpha 20, 3 EM iterations)")
        table.add("beats_fasttext_5shot", u - ft,
                  f"UniLID {u:.3f} vs fastText {ft:.3f} (fastText: {setting['fastText']}); "
                  f"{split}. Issue 28's audit: with fastText under-tuned (3 configs, lr never "
                  "tuned, <= 50 epochs) it reached 0.41-0.47 and the gain was +0.3; tuned on "
                  "the same split, fastText is close behind: does not reproduce at 0.15 "
                  "(threshold unchanged)")
        table.add("subword_beats_chars", u - acc["UniLID (characters)"],
                  f"UniLID {u:.3f} vs character unigram {acc['UniLID (characters)']:.3f} "
                  f"({setting['UniLID (characters)']}); {split}")
        table.add("vs_char_nb_5shot", u - acc["char NB"],
                  f"UniLID {u:.3f} vs char NB {acc['char NB']:.3f} ({setting['char NB']}); "
                  f"{split}; spec prototype -0.02..-0.04: NB, a baseline the paper does not "
                  "report, is as good or better")
        table.add("dialect_gain_vs_fasttext", close["UniLID"] - close["fastText"],
                  f"close-pair test samples ({', '.join(CLOSE12)}) of the 22-label run: "
                  f"UniLID {close['UniLID']:.3f} vs fastText {close['fastText']:.3f}; "
                  f"{_TUNED}; {split}. Before issue 28's audit (fastText under-tuned) +0.29; "
                  "does not reproduce at 0.15 (threshold unchanged)")
        f = runs["fastText"]
        table.add("fasttext_tuned", f["probe_accuracy"] - f["valid_accuracy"],
                  f"validation accuracy: chosen {f['valid_accuracy']:.3f} "
                  f"({setting['fastText']}), beyond the grid (lr {f['probe']['lr']:g}, "
                  f"{f['probe']['epoch']} epochs, same n-grams and dim) "
                  f"{f['probe_accuracy']:.3f}; {split}. Guards issue 28's bug: the "
                  "pre-audit grid (lr never tuned, <= 50 epochs) fails it")
    with table.guard(["incremental_add_exact"]):
        inc = figure_incremental_data(cfg, seed, dev)
        table.add("incremental_add_exact", inc["changed"],
                  f"{inc['changed']} of {inc['n_parameters']} parameters (log p_L of the "
                  f"{len(inc['rows'])} old languages) changed when {inc['added']} was added "
                  f"(k={inc['k']}; old-language accuracy {inc['old_before']:.3f} -> "
                  f"{inc['old_after']:.3f}, {inc['added']} {inc['new_accuracy']:.3f}); "
                  f"normaliser {cfg.model.normalizer}; alpha {cfg.model.alpha:g}, "
                  f"{cfg.model.em_iters} EM iterations (not tuned: exactness holds for any)")
    return table.claims

