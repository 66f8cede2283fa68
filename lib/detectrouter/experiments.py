"""The experiments of ``detectrouter``: scales, the cached generator zoo and the figures' data.

``zoo_data`` (cached per seed) trains the zoo, samples the machine texts and scores every text
under every surrogate; ``evaluate`` fits the router (stage 1, stage 1+2) and computes F1 the
source x surrogate AUROC matrix, F2 the mixed-set AUROC of every fixed surrogate, the score
ensemble, the router and oracle routing, F3 the routing confusion.  Every random draw comes
from a generator seeded from ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch

from icml26.common import cached, check_choice, check_int, device_key, generator, resolve_device
from icml26.common import config_for as preset
from icml26.detectrouter.combine import combinations
from icml26.detectrouter.corpus import CORPORA, split_passages
from icml26.detectrouter.detect import CRITERIA, auroc, criteria
from icml26.detectrouter.lms import GRUTrain, NgramLM, train_gru
from icml26.detectrouter.router import RouterConfig, fit_router

PAPER = "detectrouter"
CACHE_VERSION = 4  # the zoo (trained models, texts, scores)
EVAL_CACHE_VERSION = 5  # the evaluation; 5: the combinations and the text-only router (issue 46)
ROUTINGS = ("prototype", "random")


@dataclass(frozen=True)
class ModelSpec:
    """One zoo member: ``kind`` "ngram" (``size`` = order) or "gru" (``size`` = hidden units),
    trained on the train split of ``corpora``."""

    name: str
    kind: str
    size: int
    corpora: tuple[str, ...]


@dataclass(frozen=True)
class SourceSpec:
    """A machine-text source: a zoo model sampling at ``temperature``."""

    model: ModelSpec
    temperature: float


#: the first design's pool (spec: n-gram orders 3/5/7 on different corpora + 2 tiny GRUs): each
#: model trained on its own corpus, so machine text differed from the pooled human text in
#: domain (the diagnosis in ``diagnose``; kept to reproduce it)
POOL_FIRST = (ModelSpec("3-gram pydoc", "ngram", 3, ("pydoc",)),
              ModelSpec("5-gram docstrings", "ngram", 5, ("docstrings",)),
              ModelSpec("7-gram all", "ngram", 7, CORPORA),
              ModelSpec("GRU-64 pydoc", "gru", 64, ("pydoc",)),
              ModelSpec("GRU-96 docs+sklearn", "gru", 96, ("docstrings", "sklearn")))
BLACK_BOX_FIRST = (SourceSpec(ModelSpec("4-gram sklearn+docs", "ngram", 4,
                                        ("sklearn", "docstrings")), 0.9),
                   SourceSpec(ModelSpec("6-gram pydoc", "ngram", 6, ("pydoc",)), 0.7))
#: the second design's pool: every model trained on the same pooled training split of all
#: corpora (human and machine text share the domain); sources differ by family, order, size
POOL = (ModelSpec("3-gram", "ngram", 3, CORPORA),
        ModelSpec("5-gram", "ngram", 5, CORPORA),
        ModelSpec("7-gram", "ngram", 7, CORPORA),
        ModelSpec("GRU-64", "gru", 64, CORPORA),
        ModelSpec("GRU-96", "gru", 96, CORPORA))
#: black-box sources: held-out (order, temperature) configurations on the same training split
BLACK_BOX = (SourceSpec(ModelSpec("4-gram", "ngram", 4, CORPORA), 0.9),
             SourceSpec(ModelSpec("6-gram", "ngram", 6, CORPORA), 0.7))


@dataclass(frozen=True)
class ZooConfig:
    """Data, zoo and texts: everything behind the cached ``zoo_data``."""

    length: int = 192  # characters per passage: a 32-char human prefix + 160 scored
    prefix: int = 32
    splits: tuple[float, float] = (0.12, 0.2)  # (ref, test) shares of each corpus
    pool: tuple[ModelSpec, ...] = POOL
    black_box: tuple[SourceSpec, ...] = BLACK_BOX
    temperature: float = 0.8  # white-box sources sample at this temperature (spec)
    n_test: int = 150  # machine test texts per source
    n_human: int = 300  # human test passages (all corpora pooled)
    n_white: int = 200  # router stage-1 texts per white-box source
    n_black: int = 100  # router stage-2 texts per black-box source
    gru: GRUTrain = GRUTrain(steps=250, window=48)

    def sources(self) -> tuple[SourceSpec, ...]:
        return tuple(SourceSpec(m, self.temperature) for m in self.pool) + self.black_box

    def validate(self) -> None:
        check_int("prefix", self.prefix, 1, self.length - 16)
        for name in ("n_test", "n_human", "n_white", "n_black"):
            check_int(name, getattr(self, name), 2)
        if len(self.pool) < 2:
            raise ValueError(f"the pool needs >= 2 surrogates, got {len(self.pool)}")
        if not 0.05 <= self.temperature <= 2.0:
            raise ValueError(f"temperature must be in [0.05, 2], got {self.temperature}")
        for m in (*self.pool, *(s.model for s in self.black_box)):
            check_choice("model kind", m.kind, ("ngram", "gru"))
            for c in m.corpora:
                check_choice("corpus", c, CORPORA)


@dataclass(frozen=True)
class DetectRouterConfig:
    """One scale of the experiments. Quick defaults fit CI; ``SCALES["paper"]`` is closer."""

    zoo: ZooConfig = field(default_factory=ZooConfig)
    router: RouterConfig = field(default_factory=RouterConfig)
    criterion: str = "fast_detect"  # the spec's main criterion (Fast-DetectGPT analytic)
    znorm: bool = True  # False injects the pitfall: raw scores of different scales mixed
    routing: str = "prototype"  # "random" = the random-routing mutation

    def validate(self) -> None:
        self.zoo.validate()
        check_choice("criterion", self.criterion, CRITERIA)
        check_choice("routing", self.routing, ROUTINGS)


SCALES = {
    "quick": DetectRouterConfig(),
    "paper": DetectRouterConfig(zoo=ZooConfig(n_test=500, n_human=800, n_white=600,
                                              n_black=300,
                                              gru=GRUTrain(steps=2000, window=96)),
                                router=RouterConfig(steps=600)),
}


def config_for(scale: str) -> DetectRouterConfig:
    return preset(SCALES, scale)


def train_model(spec: ModelSpec, split: dict, cfg: ZooConfig, gen: torch.Generator,
                device="cpu"):
    """Train one zoo member on the train split of its corpora (a GRU on ``device``; an n-gram
    is a numpy count table)."""
    train = np.concatenate([split[c]["train"] for c in spec.corpora])
    if spec.kind == "ngram":
        return NgramLM(spec.size, train)
    return train_gru(train, spec.size, cfg.gru, gen, device)


def _zoo_data(cfg: ZooConfig, seed: int, device="cpu") -> dict:
    dev = resolve_device(device)
    gen = generator(seed)
    split = {c: split_passages(c, cfg.length, cfg.splits, gen) for c in CORPORA}
    human = np.concatenate([split[c]["test"] for c in CORPORA])
    corpus = np.repeat(np.arange(len(CORPORA)), [len(split[c]["test"]) for c in CORPORA])
    keep = torch.randperm(len(human), generator=gen)[: cfg.n_human].numpy()
    human, human_corpus = human[keep], corpus[keep]
    ref = np.concatenate([split[c]["ref"] for c in CORPORA])
    models: dict[str, object] = {}
    for spec in (*cfg.pool, *(s.model for s in cfg.black_box)):
        if spec.name not in models:
            models[spec.name] = train_model(spec, split, cfg, gen, dev)
    # machine texts continue human prefixes drawn from the held-out human passages
    prompts = np.concatenate([split[c]["test"] for c in CORPORA])
    texts, router_texts = {}, {}
    for i, src in enumerate(cfg.sources()):
        n_train = cfg.n_white if i < len(cfg.pool) else cfg.n_black
        idx = torch.randint(0, len(prompts), (cfg.n_test + n_train,), generator=gen).numpy()
        out = models[src.model.name].sample(prompts[idx, : cfg.prefix],
                                            cfg.length - cfg.prefix, src.temperature, gen)
        texts[src.model.name], router_texts[src.model.name] = out[: cfg.n_test], out[cfg.n_test:]

    def score(x):  # [B, L] -> raw scores [B, K, criteria]
        return np.stack([criteria(models[m.name], x, cfg.prefix, device=dev)
                         for m in cfg.pool], 1)

    return {"pool": [m.name for m in cfg.pool], "sources": [s.model.name for s in cfg.sources()],
            "temperatures": [s.temperature for s in cfg.sources()],
            "human": human, "human_corpus": human_corpus, "human_scores": score(human),
            "ref_scores": score(ref),
            "texts": texts, "scores": {k: score(v) for k, v in texts.items()},
            "router_texts": router_texts,
            "router_scores": {k: score(v) for k, v in router_texts.items()}}


def zoo_data(cfg: ZooConfig, seed: int, device="cpu") -> dict:
    """The trained zoo's texts and raw scores (cached per config and seed): ``human`` [H, L],
    ``human_corpus`` [H] (index into ``CORPORA``), ``human_scores`` [H, K, C], ``ref_scores``
    [R, K, C], per source ``texts`` [n, L] and ``scores`` [n, K, C], router training
    ``router_texts`` and their ``router_scores``; K surrogates, C criteria. GRUs and the
    scores' statistics run on ``device`` (the cache is keyed by its type); the n-gram tables
    and sampling are CPU."""
    cfg.validate()
    dev = resolve_device(device)
    return cached(PAPER, device_key("zoo", dev), cfg, seed, CACHE_VERSION,
                  lambda: _zoo_data(cfg, seed, dev))


def znormed(data: dict, cfg: DetectRouterConfig) -> dict:
    """The chosen criterion's scores, z-normalised per surrogate on the human reference text
    (``cfg.znorm``; otherwise raw): ``human`` [H, K], per source [n, K], ``router`` [m, K],
    ``ref`` [R, K] (the reference text itself)."""
    c = CRITERIA.index(cfg.criterion)
    ref = data["ref_scores"][:, :, c]
    mu, sd = (ref.mean(0), np.maximum(ref.std(0), 1e-9)) if cfg.znorm else (0.0, 1.0)
    z = {k: (v[:, :, c] - mu) / sd for k, v in data["scores"].items()}
    return {"human": (data["human_scores"][:, :, c] - mu) / sd, "sources": z,
            "router": {k: (v[:, :, c] - mu) / sd for k, v in data["router_scores"].items()},
            "ref": (ref - mu) / sd, "mu": mu, "sd": sd}


def stats(data: dict) -> dict:
    """Every text's statistics under the pool for the router's features: both criteria under
    every surrogate, z-normalised on the human reference text, ``[n, K * C]``: ``human``, per
    source ``sources``, per source ``router`` (the router's training texts), ``ref``."""
    ref = data["ref_scores"]
    mu, sd = ref.mean(0), np.maximum(ref.std(0), 1e-9)

    def f(v):
        return ((v - mu) / sd).reshape(len(v), -1)

    return {"human": f(data["human_scores"]),
            "sources": {k: f(v) for k, v in data["scores"].items()},
            "router": {k: f(v) for k, v in data["router_scores"].items()},
            "ref": f(ref)}


def router_inputs(data: dict, z: dict) -> tuple:
    """``fit_router``'s training data: white-box texts, their pool labels, black-box texts,
    their z-scores (the chosen criterion), and the white / black texts' statistics."""
    pool, black = data["pool"], data["sources"][len(data["pool"]):]
    st = stats(data)["router"]
    white = np.concatenate([data["router_texts"][s] for s in pool])
    labels = np.repeat(np.arange(len(pool)), [len(data["router_texts"][s]) for s in pool])
    blk = np.concatenate([data["router_texts"][s] for s in black])
    blk_z = np.concatenate([z["router"][s] for s in black])
    return (white, labels, blk, blk_z, np.concatenate([st[s] for s in pool]),
            np.concatenate([st[s] for s in black]))


def routed_auroc(zh, zm: dict, route_h, routes: dict, names) -> float:
    """AUROC of human vs machine texts of ``names``, each scored by its routed surrogate."""
    h = zh[np.arange(len(zh)), route_h]
    m = np.concatenate([zm[k][np.arange(len(zm[k])), routes[k]] for k in names])
    return auroc(h, m)


def evaluate(cfg: DetectRouterConfig, seed: int = 0, data: dict | None = None,
             device="cpu") -> dict:
    """F1-F3 for one seed: the AUROC matrix, the mixed-set AUROCs and the routings (the
    router trained on ``device``; AUROCs are numpy): ``stage1``, ``stage2`` (= ``router``)
    and ``text`` (stage 1+2, text-only encoder), ``combination`` (:mod:`combine`)."""
    cfg.validate()
    dev = resolve_device(device)
    data = zoo_data(cfg.zoo, seed, dev) if data is None else data
    z = znormed(data, cfg)
    pool, sources = data["pool"], data["sources"]
    n_pool, black = len(pool), sources[len(pool):]
    zh, zm = z["human"], z["sources"]
    matrix = np.array([[auroc(zh[:, k], zm[s][:, k]) for k in range(n_pool)] for s in sources])
    all_m = np.concatenate([zm[s] for s in sources])
    fixed = [auroc(zh[:, k], all_m[:, k]) for k in range(n_pool)]
    ensemble = auroc(zh.mean(1), all_m.mean(1))
    gen = generator(10_007 + seed)
    best = matrix.argmax(1)
    oracle_h = best[torch.randint(0, len(sources), (len(zh),), generator=gen).numpy()]
    oracle = routed_auroc(zh, zm, oracle_h, {s: np.full(len(zm[s]), best[i])
                                             for i, s in enumerate(sources)}, sources)
    rin = router_inputs(data, z)
    out = {"pool": pool, "sources": sources, "n_white": n_pool, "matrix": matrix,
           "fixed": fixed, "ensemble": ensemble, "oracle": oracle, "best": best}
    st = stats(data)
    # the baseline at the router's cost (issue 46): fixed combinations of the pool's z-scores,
    # trained on the router's training texts against the human reference text
    out["combination"] = combinations(
        (z["ref"], st["ref"]), (np.concatenate([z["router"][s] for s in sources]),
                                np.concatenate([st["router"][s] for s in sources])),
        (zh, st["human"]), (all_m, np.concatenate([st["sources"][s] for s in sources])), seed)
    w = cfg.router.stage2_weight
    # "text": the same router (stage 1+2) whose encoder sees the text only, not the scores
    for stage, rcfg in (("stage1", replace(cfg.router, stage2_weight=0.0)),
                        ("stage2", replace(cfg.router, stage2_weight=w)),
                        ("text", replace(cfg.router, stage2_weight=w, stats=False))):
        if cfg.routing == "random":
            def route(x, s=None):
                return torch.randint(0, n_pool, (len(x),), generator=gen).numpy()
        else:
            route = fit_router(*rin[:4], n_pool, rcfg, generator(seed + 1), dev,
                               *rin[4:]).route
        rh = route(data["human"], st["human"])
        routes = {s: route(data["texts"][s], st["sources"][s]) for s in sources}
        out[stage] = {
            "auroc": routed_auroc(zh, zm, rh, routes, sources),
            "black_auroc": routed_auroc(zh, zm, rh, routes, black),
            "per_source": [routed_auroc(zh, zm, rh, routes, [s]) for s in sources],
            "human_route": rh,
            "confusion": np.array([np.bincount(routes[s], minlength=n_pool) for s in sources]
                                  + [np.bincount(rh, minlength=n_pool)]),
            "matched": float(np.mean([np.mean(routes[s] == i) for i, s in enumerate(pool)]))}
    out["router"] = out["stage2"]
    return out


def evaluation(cfg: DetectRouterConfig, seed: int = 0, device="cpu") -> dict:
    """:func:`evaluate` on the cached zoo, itself cached per config, seed and device type (the
    claims, the notebook's figures and the app share one router fit)."""
    dev = resolve_device(device)
    data = zoo_data(cfg.zoo, seed, dev)
    return cached(PAPER, device_key("eval", dev), cfg, seed, EVAL_CACHE_VERSION,
                  lambda: evaluate(cfg, seed, data, dev))


def figure_auroc_matrix_data(cfg: DetectRouterConfig, seed: int = 0) -> dict:
    """F1: the source x surrogate AUROC matrix (rows: sources, white-box first)."""
    r = evaluation(cfg, seed)
    return {"sources": r["sources"], "pool": r["pool"], "matrix": r["matrix"],
            "n_white": r["n_white"]}
