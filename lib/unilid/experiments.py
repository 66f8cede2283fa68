"""The experiments of ``unilid``: scales, cached fits and the data behind the figures.

F1 accuracy vs k labelled samples per language for UniLID, its character-unigram ablation
and the three tuned baselines (22 labels); F2 the confusion matrix of the close pairs at the
claims' k; F3 adding a language to a fitted model: the old languages' parameters and
accuracies before and after.  Every random draw (the pools' shuffles) is seeded from
``seed``; sentencepiece and fastText run on one thread with fixed seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from icml26.common import cached
from icml26.common import config_for as preset
from icml26.unilid.baselines import BASELINES, METHODS
from icml26.unilid.data import ALL22, CLOSE12, Samples, make_samples
from icml26.unilid.model import ModelConfig, UniLID, Vocabulary, fit, train_vocabulary

PAPER = "unilid"
CACHE_VERSION = 1


@dataclass(frozen=True)
class UniLIDConfig:
    """One scale of the experiments; quick defaults fit CI (spec's calibrated design)."""

    languages: tuple[str, ...] = ALL22  # 22 labels: 10 distinct + the 12 of the close pairs
    k_grid: tuple[int, ...] = (1, 2, 5, 10)  # F1's x-axis (samples per language)
    claim_k: int = 5  # the paper's 5-shot setting
    n_valid: int = 5  # validation samples per language (tune the baselines)
    n_test: int = 20  # test samples per language (bs has ~22 in its test pool)
    min_chars: int = 100  # a sample: UI strings joined to >= 100 characters (spec)
    model: ModelConfig = field(default_factory=ModelConfig)
    added: str = "sk"  # F3: the language added to a model of the other 21 (close to cs)

    def validate(self) -> None:
        self.model.validate()
        if self.claim_k not in self.k_grid:
            raise ValueError(f"claim_k={self.claim_k} must be one of k_grid {self.k_grid}")
        if len(set(self.languages)) != len(self.languages) or len(self.languages) < 2:
            raise ValueError(f"languages must be >= 2 distinct codes, got {self.languages}")
        if self.added not in self.languages:
            raise ValueError(f"added={self.added!r} must be one of the languages")


SCALES = {
    "quick": UniLIDConfig(),
    # paper: more EM iterations, a larger vocabulary; the Django pools cap k and the test size
    "paper": UniLIDConfig(k_grid=(1, 2, 5, 10, 15), n_test=20,
                          model=ModelConfig(vocab_size=4000, em_iters=5)),
}


def config_for(scale: str) -> UniLIDConfig:
    """The preset named ``scale`` (``"quick"`` or ``"paper"``)."""
    return preset(SCALES, scale)


def samples(cfg: UniLIDConfig, seed: int, languages: tuple[str, ...] | None = None) -> Samples:
    """The seed's samples (the largest k of the grid; smaller k take prefixes)."""
    return make_samples(languages or cfg.languages, max(cfg.k_grid), cfg.n_valid, cfg.n_test,
                        cfg.min_chars, seed)


def vocabulary(cfg: UniLIDConfig, seed: int, languages: tuple[str, ...] | None = None
               ) -> Vocabulary:
    """The shared vocabulary of the unlabelled train pools of ``languages`` (cached)."""
    langs = languages or cfg.languages
    key = {"languages": langs, "vocab_size": cfg.model.vocab_size,
           "max_len": cfg.model.max_len if cfg.model.max_len > 1 else 8,
           "min_chars": cfg.min_chars, "k": max(cfg.k_grid), "n": (cfg.n_valid, cfg.n_test)}
    return cached(PAPER, "vocab", key, seed, CACHE_VERSION, lambda: train_vocabulary(
        samples(cfg, seed, langs).unlabelled, key["vocab_size"], key["max_len"]))


def shots(s: Samples, k: int) -> dict[str, list[str]]:
    return {code: texts[:k] for code, texts in s.train.items()}


def test_set(s: Samples) -> tuple[list[str], list[str]]:
    texts = [t for ts in s.test.values() for t in ts]
    gold = [code for code, ts in s.test.items() for _ in ts]
    return texts, gold


def accuracy(pred: list[str], gold: list[str], only: tuple[str, ...] | None = None) -> float:
    pairs = [(p, g) for p, g in zip(pred, gold) if only is None or g in only]
    return sum(p == g for p, g in pairs) / max(1, len(pairs))


def predictions(cfg: UniLIDConfig, seed: int, k: int, method: str) -> dict:
    """One method at one k on the seed's test set (cached): ``pred``, ``gold``, ``setting``."""
    def compute():
        s = samples(cfg, seed)
        texts, gold = test_set(s)
        if method in ("UniLID", "UniLID (characters)"):
            mcfg = cfg.model if method == "UniLID" else replace(cfg.model, max_len=1)
            model = fit(vocabulary(cfg, seed), mcfg, shots(s, k))
            return {"pred": model.predict(texts), "gold": gold,
                    "setting": f"alpha {mcfg.alpha:g}, {mcfg.em_iters} EM iterations, "
                               f"pieces <= {mcfg.max_len} chars, {mcfg.prior} prior, "
                               f"{mcfg.normalizer} normaliser, {mcfg.score}"}
        pred, setting = BASELINES[method](shots(s, k), s.valid, texts, seed)
        return {"pred": pred, "gold": gold, "setting": setting}

    # a baseline does not depend on UniLID's settings: one cache entry for every model config
    key = cfg if method.startswith("UniLID") else replace(cfg, model=ModelConfig())
    return cached(PAPER, f"pred-{method}-k{k}", key, seed, CACHE_VERSION, compute)


def figure_accuracy_data(cfg: UniLIDConfig, seed: int = 0,
                         methods: tuple[str, ...] = METHODS) -> list[dict]:
    """F1: one row per (method, k): accuracy on all labels and on the close pairs."""
    cfg.validate()
    rows = []
    for k in cfg.k_grid:
        for method in methods:
            p = predictions(cfg, seed, k, method)
            rows.append({"method": method, "k": k, "accuracy": accuracy(p["pred"], p["gold"]),
                         "close_accuracy": accuracy(p["pred"], p["gold"], CLOSE12),
                         "setting": p["setting"], "n_test": len(p["gold"])})
    return rows


def figure_confusion_data(cfg: UniLIDConfig, seed: int = 0, method: str = "UniLID",
                          k: int | None = None) -> dict:
    """F2: counts ``[gold, predicted]`` over the close-pair labels (+ an "other" column)."""
    labels = [c for c in CLOSE12 if c in cfg.languages]
    p = predictions(cfg, seed, cfg.claim_k if k is None else k, method)
    cols = [*labels, "other"]
    m = torch.zeros(len(labels), len(cols), dtype=torch.int64)
    for pred, gold in zip(p["pred"], p["gold"]):
        if gold in labels:
            m[labels.index(gold), cols.index(pred) if pred in labels else len(labels)] += 1
    return {"labels": labels, "columns": cols, "counts": m.numpy(), "method": method}


def changed_parameters(before: torch.Tensor, after: torch.Tensor) -> int:
    """Entries of ``before`` that are not bit-identical in ``after`` (a NaN counts as changed)."""
    return int((before != after).sum())


def figure_incremental_data(cfg: UniLIDConfig, seed: int = 0) -> dict:
    """F3: fit the other languages (vocabulary from their unlabelled text), then add
    ``cfg.added``.  Per old language: accuracy before / after; the new one's accuracy; how
    many parameters of the old languages changed (bit for bit)."""
    cfg.validate()

    def compute():
        base = tuple(c for c in cfg.languages if c != cfg.added)
        s = samples(cfg, seed)
        vocab = vocabulary(cfg, seed, base)
        model = UniLID(vocab, cfg.model)
        for code in base:
            model.add_language(code, s.train[code][: cfg.claim_k])
        before = model.log_probs().clone()
        texts, gold = test_set(s)
        old = [i for i, g in enumerate(gold) if g != cfg.added]
        pred_before = model.predict([texts[i] for i in old])
        model.add_language(cfg.added, s.train[cfg.added][: cfg.claim_k])
        after = model.log_probs()
        pred_after = model.predict(texts)
        rows = []
        for code in base:
            idx = [j for j, i in enumerate(old) if gold[i] == code]
            rows.append({"language": code,
                         "before": sum(pred_before[j] == code for j in idx) / len(idx),
                         "after": sum(pred_after[old[j]] == code for j in idx) / len(idx)})
        new = [i for i, g in enumerate(gold) if g == cfg.added]
        return {"rows": rows, "added": cfg.added, "k": cfg.claim_k,
                "new_accuracy": sum(pred_after[i] == cfg.added for i in new) / len(new),
                "changed": changed_parameters(before, after[: len(base)]),
                "n_parameters": before.numel(),
                "old_before": accuracy(pred_before, [gold[i] for i in old]),
                "old_after": accuracy([pred_after[i] for i in old], [gold[i] for i in old]),
                "all_after": accuracy(pred_after, gold)}

    return cached(PAPER, "incremental", cfg, seed, CACHE_VERSION, compute)
