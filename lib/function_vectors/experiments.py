"""Configs, the trained models and the shared analysis steps of :mod:`icml26.function_vectors`.

The quick / paper presets, the cached training blob per seed, the shipped seed-0 weights (the
dashboard's start), the clean-accuracy gate, Todd et al.'s task means and head ranking, and the
evaluation items of the interventions. Everything expensive is cached per (config, seed).
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from icml26.common import cache_path, cached, generator
from icml26.common import config_for as preset
from icml26.function_vectors.interventions import (
    Prefix,
    causal_indirect_effect,
    final_state,
    joint_indirect_effect,
    rank_heads,
    run,
    subset,
)
from icml26.function_vectors.model import FVTransformer, ModelConfig, model_from_state
from icml26.function_vectors.prompts import (
    MAX_SHOTS,
    N_TASKS,
    make_prompts,
    shuffle_labels,
    tasks_for,
)
from icml26.function_vectors.training import TrainConfig, train_model

PAPER = "function_vectors"
CACHE_VERSION = 2  # 2: joint AIE, zero-shot context control, shipped weights per seed
DATA = Path(__file__).resolve().parents[1] / "data"
#: benchmarks/function_vectors/function_vectors_ship_weights.py writes them
SHIPPED_SEEDS = tuple(range(7))


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class FVConfig:
    """Everything a claim depends on. Defaults: the spec's toy D and Todd et al.'s protocol
    scaled to the toy (6 shots, 25 -> 32 CIE prompts per task, 100 mean prompts per task)."""

    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    icl_threshold: float = 0.85  # issue: assert clean 6-shot accuracy >= 0.85 first
    eval_prompts: int = 1024  # clean-accuracy check
    mean_prompts: int = 100  # per task (Todd et al.: 100 clean prompts)
    cie_prompts: int = 32  # per task (Todd et al.: 25 shuffled prompts)
    top_k: int = 3  # FV heads (spec's torch re-check: the FV spreads over 2-3 heads)
    intervention_prompts: int = 1024
    filter_correct: bool = True  # Todd et al.: evaluate on items clean ICL solves
    additivity_shots: tuple[int, ...] = (2, 3, 4, 6)  # F2's x-axis (spec)
    additivity_prompts: int = 600  # per n: half to fit alpha, half to score R^2
    additivity_weights: str = "shared"  # "per_prompt" = the pitfall (fits the control too)
    reweight_prompts: int = 400  # spec: >= 300
    reweight_p_uninformative: float = 0.5  # spec: prompts mixing both kinds, p = 0.5
    permutations: int = 10000
    hybrid_prompts: int = 400
    # "agnostic": the zero-shot context control gives the layer-0 heads the task-agnostic
    # n-shot mean (disclosed); "task" = the pitfall (their task means: the control leaks it)
    context_control: str = "agnostic"
    ranking: str = "signed"  # FV heads by signed AIE; "abs" = the pitfall (layer-0 heads)
    # "shipped": the weights in lib/data when they exist for the seed and match the config
    # (a shortcut every claim note names), else train; "train": always train (cached)
    weights: str = "shipped"

    def validate(self) -> None:
        self.model.validate()
        self.train.validate(self.model)
        n_heads = self.model.n_layers * self.model.n_heads
        if not 1 <= self.top_k <= n_heads:
            raise ValueError(f"top_k must be in 1..{n_heads}, got {self.top_k}")
        for n in self.additivity_shots:
            if not 2 <= n <= MAX_SHOTS:
                raise ValueError(f"additivity_shots must lie in 2..{MAX_SHOTS}, got {n}")
        if self.additivity_weights not in ("shared", "per_prompt"):
            raise ValueError("additivity_weights must be 'shared' or 'per_prompt', got "
                             f"{self.additivity_weights!r}")
        if self.context_control not in ("agnostic", "task"):
            raise ValueError("context_control must be 'agnostic' or 'task', got "
                             f"{self.context_control!r}")
        if self.ranking not in ("signed", "abs"):
            raise ValueError(f"ranking must be 'signed' or 'abs', got {self.ranking!r}")
        if self.weights not in ("shipped", "train"):
            raise ValueError(f"weights must be 'shipped' or 'train', got {self.weights!r}")
        if not 0 < self.reweight_p_uninformative < 1:
            raise ValueError("reweight_p_uninformative must be in (0, 1), got "
                             f"{self.reweight_p_uninformative}")


SCALES = {
    "quick": FVConfig(),
    # closer to the spec's prototype (5000 steps) with Todd-sized evaluation sets; not run in CI
    "paper": FVConfig(train=TrainConfig(steps=5000), eval_prompts=4096, cie_prompts=100,
                      intervention_prompts=4096, additivity_prompts=2000, reweight_prompts=1000,
                      hybrid_prompts=1000, permutations=100000),
}


def config_for(scale: str) -> FVConfig:
    """The preset ``scale`` ("quick" | "paper")."""
    return preset(SCALES, scale)


def seeded(seed: int, salt: int) -> torch.Generator:
    """The generator of one draw of the analyses: ``seed`` and a per-draw ``salt``."""
    return generator(7_919 * int(seed) + salt)


# --------------------------------------------------------------------------- model + cache
def shipped_path(seed: int = 0) -> Path:
    return DATA / f"function_vectors_seed{int(seed)}.pt"


SHIPPED = shipped_path(0)


def shipped_blob(seed: int = 0, cfg: FVConfig | None = None) -> dict | None:
    """The quick-scale weights of ``seed`` shipped with the package (float16 state stored,
    returned as float32), or ``None`` if absent or (given ``cfg``) trained with another model /
    training config. ``benchmarks/function_vectors/function_vectors_ship_weights.py`` writes
    them."""
    path = shipped_path(seed)
    if not path.exists():
        return None
    blob = torch.load(path, weights_only=False)
    # options added later default to the behaviour the file was trained with
    blob["model_config"] = {**asdict(ModelConfig()), **blob["model_config"]}
    blob["train_config"] = {**asdict(TrainConfig()), **blob["train_config"]}
    if cfg is not None and (blob["model_config"] != asdict(cfg.model)
                            or blob["train_config"] != asdict(cfg.train)):
        return None
    blob["state"] = {k: v.float() for k, v in blob["state"].items()}
    return blob


def weights_source(cfg: FVConfig, seed: int = 0) -> str:
    """Where the model of ``seed`` comes from: ``"shipped <file> (sha256 <12 hex>)"`` when
    ``cfg.weights == "shipped"`` and matching weights are shipped, else ``"trained"`` (in this
    run's cache). Part of every analysis cache key, and named in every claim note."""
    if cfg.weights == "shipped" and shipped_blob(seed, cfg) is not None:
        path = shipped_path(seed)
        return f"shipped {path.name} (sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]})"
    return "trained"


def trained(cfg: FVConfig, seed: int = 0, progress: bool = True) -> dict:
    """The training blob for (model config, train config, seed): the shipped weights when
    ``cfg.weights == "shipped"`` and they exist for this seed and config; otherwise trained
    once and cached."""
    cfg.validate()
    if cfg.weights == "shipped":
        blob = shipped_blob(seed, cfg)
        if blob is not None:
            return blob
    return cached(PAPER, "model", {"model": asdict(cfg.model), "train": asdict(cfg.train)},
                  seed, CACHE_VERSION,
                  lambda: train_model(cfg.model, cfg.train, seed, progress=progress))


def load_model(cfg: FVConfig, seed: int = 0, device="cpu", progress: bool = True
               ) -> FVTransformer:
    return model_from_state(trained(cfg, seed, progress), device)


class NoICLError(RuntimeError):
    """The model did not learn in-context learning; every analysis would be meaningless."""


def clean_accuracy(model: FVTransformer, cfg: FVConfig, seed: int = 0,
                   n_shots: int = MAX_SHOTS) -> float:
    """Top-1 accuracy on clean (all-informative) ``n``-shot prompts."""
    g = seeded(seed, 11)
    p = make_prompts(tasks_for(cfg.eval_prompts, g), n_shots, g)
    return float((run(model, p).argmax(-1) == p.target).float().mean())


def head_means(model: FVTransformer, cfg: FVConfig, seed: int = 0) -> torch.Tensor:
    """Todd et al.'s mean head activations: ``[K, L, H, dh]``, the mean of ``z_h`` at the final
    token over ``mean_prompts`` clean 6-shot prompts of each task."""
    g = seeded(seed, 13)
    task = tasks_for(cfg.mean_prompts * N_TASKS)
    _, z = final_state(model, make_prompts(task, MAX_SHOTS, g))
    return torch.stack([z[task == k].mean(0) for k in range(1, N_TASKS + 1)])


# --------------------------------------------------------------------------- F1: CIE
def fv_analysis(model: FVTransformer, cfg: FVConfig, seed: int = 0) -> dict:
    """Means, single-head AIE, head ranking (the FV heads are ``ranking[:top_k]``) and the
    joint AIE of the top-1 .. top-k heads patched together (``joint[k - 1]``), on the same
    shuffled prompts."""
    means = head_means(model, cfg, seed)
    g = seeded(seed, 17)
    prompts = make_prompts(tasks_for(cfg.cie_prompts * N_TASKS), MAX_SHOTS, g, shuffle=True)
    aie = causal_indirect_effect(model, means, prompts)
    ranking = rank_heads(aie, cfg.ranking)
    pre = Prefix.of(model, prompts)
    joint = [joint_indirect_effect(model, means, prompts, ranking[:k], prefix=pre)
             for k in range(1, cfg.top_k + 1)]
    return {"means": means, "aie": aie, "ranking": ranking, "joint": joint}



def evaluation_items(model: FVTransformer, cfg: FVConfig, seed: int = 0) -> dict:
    """Clean 6-shot prompts (filtered to those the model solves when ``filter_correct``) and
    their zero-shot and shuffled-label versions (same task, query and demonstrations)."""
    g = seeded(seed, 19)
    clean = make_prompts(tasks_for(cfg.intervention_prompts, g), MAX_SHOTS, g)
    ok = run(model, clean).argmax(-1) == clean.target
    keep = ok if cfg.filter_correct else torch.ones_like(ok)
    clean = subset(clean, keep)
    zero = clean.with_slots(torch.zeros(MAX_SHOTS, dtype=torch.bool))
    return {"clean": clean, "zero_shot": zero, "shuffled": shuffle_labels(clean, g),
            "kept": float(keep.float().mean())}


# --------------------------------------------------------------------------- plumbing
def model_analysis(cfg: FVConfig, seed: int = 0, progress: bool = True,
                   allow_shipped: bool = True, allow_train: bool = True) -> dict:
    """``{"model", "means", "aie", "ranking", "clean_accuracy", "source"}`` for one seed.

    Source order: the weights shipped in ``icml26/data`` (when ``allow_shipped`` and
    ``cfg.weights == "shipped"``: the same model the claims use), else the cache, else
    training (``allow_train``).
    """
    if not allow_shipped:
        cfg = replace(cfg, weights="train")
    source = weights_source(cfg, seed)
    key = {"model": asdict(cfg.model), "train": asdict(cfg.train)}
    in_cache = cache_path(PAPER, "model", key, seed, CACHE_VERSION).exists()
    if source == "trained" and not in_cache and not allow_train:
        raise RuntimeError(f"no trained model for seed {seed} in the cache: press Run to "
                           "train it")
    model = load_model(cfg, seed, progress=progress)
    acc = clean_accuracy_cached(cfg, seed, model)
    fv = fv_cached(cfg, seed, model)
    return {"model": model, "means": fv["means"], "aie": fv["aie"],
            "ranking": fv["ranking"], "clean_accuracy": acc,
            "source": "shipped" if source != "trained" else "cache"}


def checked_model(cfg: FVConfig, seed: int) -> FVTransformer:
    model = load_model(cfg, seed)
    acc = clean_accuracy_cached(cfg, seed, model)
    if acc < cfg.icl_threshold:
        raise NoICLError(f"clean 6-shot accuracy {acc:.3f} < {cfg.icl_threshold}: in-context "
                         "learning did not emerge, so no function vector can be analysed")
    return model


def clean_accuracy_cached(cfg: FVConfig, seed: int, model: FVTransformer) -> float:
    return cached(PAPER, "clean_acc", analysis_key(cfg, seed), seed, CACHE_VERSION,
                  lambda: clean_accuracy(model, cfg, seed))


def analysis_key(cfg: FVConfig, seed: int) -> dict:
    """Cache key of an analysis: the config and the model it runs on (shipped file hash or
    trained), so new shipped weights never meet stale analyses."""
    return {**asdict(cfg), "source": weights_source(cfg, seed)}


def fv_cached(cfg: FVConfig, seed: int, model: FVTransformer) -> dict:
    return cached(PAPER, "fv", analysis_key(cfg, seed), seed, CACHE_VERSION,
                  lambda: fv_analysis(model, cfg, seed))


def cached_figure(name: str, cfg: FVConfig, seed: int, compute, **extra):
    """Figure data, cached per (config, seed, arguments): claims, tests and the notebook of
    one CI run share them."""
    key = {"cfg": analysis_key(cfg, seed), **{k: repr(v) for k, v in extra.items()}}
    return cached(PAPER, name, key, seed, CACHE_VERSION, compute)
