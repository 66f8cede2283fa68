"""The experiments of ``grids``: scales, the cached encoder, token-policy training and the data
behind the figures.

F1 contact-point error vs K (log x) for every method, and success at the run's success radius
(issue 46: the all-tokens model's median validation error, fixed by rule before any method is
scored); F2 analytic head FLOPs vs K, relative to all the map's tokens; F3 GridS's predicted
coordinates over test images.  The encoder is pretrained once per seed with all
tokens (a dense contact readout plus the attention-pooled global readout), frozen, and every
policy's head is trained on its cached features.  Every random draw comes from a generator
seeded from ``seed``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field, replace

import torch
import torch.nn.functional as F

from icml26.common import (
    cache_dir,
    cached,
    check_choice,
    check_int,
    device_key,
    generator,
    resolve_device,
)
from icml26.common import config_for as preset
from icml26.grids.models import METHODS, Encoder, TokenPolicy
from icml26.grids.scenes import SceneConfig, action_errors, action_targets, make_scenes

PAPER = "grids"
CACHE_VERSION = 3  # 2: the second design (16-px tokens, position-aware scout); rows gain
# ``nearest_px``; 3 (issue 46): top-K's scorer has the scout's capacity; rows keep the
# per-scene errors (test and validation) so success is scored at the run's radius
SCOUT_INPUTS = ("tokens", "map", "mean")


@dataclass(frozen=True)
class PolicyConfig:
    """GridS's knobs (the authors' ``ActiveTokenSampler`` defaults where they exist)."""

    coord_embed: bool = True  # the code's optional coordinate embedding, on
    temperature: float = 1.0  # sigmoid(z / T); 1 = the code's plain sigmoid
    margin: float = 0.0  # the code's optional coordinate margin, off
    noise_scale: float = 0.1  # exploration noise on the pooled feature (code: 0.1)
    probes: int = 4  # noisy probes averaged during training
    init_grid: bool = True  # the scout starts with its points on a grid
    scout_input: str = "tokens"  # "tokens" (second design): the code's LayerNorm + mean-pool
    # of position-aware tokens (each with a Fourier encoding of its centre, a token-wise
    # Linear + ReLU); "map" (first design): the encoder's attention-pooled feature; "mean":
    # the code's LayerNorm + mean-pool of the bare map (stalls: see the notebook)
    round_coords: bool = False  # the mutation: nearest-neighbour sampling, no coordinate grad

    def validate(self) -> None:
        check_choice("scout_input", self.scout_input, SCOUT_INPUTS)
        check_int("probes", self.probes, 1, 64)
        if not 0.05 <= self.temperature <= 20:
            raise ValueError(f"temperature must be in [0.05, 20], got {self.temperature}")
        if not 0 <= self.margin < 0.5:
            raise ValueError(f"margin must be in [0, 0.5), got {self.margin}")
        if not 0 <= self.noise_scale <= 2:
            raise ValueError(f"noise_scale must be in [0, 2], got {self.noise_scale}")


@dataclass(frozen=True)
class GridsConfig:
    """One scale of the experiments; quick defaults fit CI's claims budget."""

    scene: SceneConfig = field(default_factory=SceneConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    n_train: int = 1536
    n_test: int = 512
    n_val: int = 512  # validation scenes (issue 46), drawn from their own generator (seed +
    # 20000): used only to fix the success radius from the all-tokens model
    patch: int = 16  # token side in px: 16 -> a [4, 4, 32] map, 16 tokens as coarse as
    # SigLIP's 14-px patches against the contact point (issue 35; first design: 4 -> 256)
    channels: int = 32  # token width
    d_model: int = 32  # head width
    pretrain_steps: int = 400
    readout_detached: bool = True  # the all-tokens readout trains on the encoder's detached
    # features (a head like every other; the encoder learns from the per-token objectives).
    # First design: trained through the encoder; at 16 tokens its loss swamped the contact
    # cross-entropy (accuracy 0.1-0.3 of 16 tokens after 400 steps, every readout at chance)
    head_steps: int = 400
    full_steps: int = 3000  # the all-tokens head (all_tokens="head"; 0.17 s/step at 256)
    all_tokens: str = "readout"  # the all-tokens reference: "readout" = the encoder's
    # pretraining readout over all tokens; "head" = the transformer head over all tokens (first
    # design: 300 steps over 256 tokens had not learned the position, 15 px; quick scale
    # keeps the readout in the second design, so the reference is measured as before)
    batch: int = 64
    lr: float = 3e-3
    ks: tuple[int, ...] = (8, 4, 1)  # F1's K grid below all 16 tokens (first design: 16, 4 of
    # 256); 1 = the headline's K (< 10%, issue 46)
    figure_methods: tuple[str, ...] = ("grids", "topk", "avgpool", "random")
    success_quantile: float = 0.5  # issue 46: success = contact error < r, r = this quantile
    # (0.5: the median) of the all-tokens model's errors on the validation scenes, per run; a
    # rule fixed before any method was scored (the spec's fixed 2 px sat far below a 16-px
    # token: every method's success 0.03-0.08, near the floor)
    token_share: float = 0.10  # the headline's K: the largest K with K / tokens < 10% (the
    # abstract's "fewer than 10% original visual tokens"): 1 of 16

    @property
    def few_k(self) -> int:
        """The headline's K: the largest K with ``K / side^2 < token_share`` (at least 1)."""
        n = self.side ** 2
        return max(1, math.ceil(n * self.token_share) - 1)

    @property
    def side(self) -> int:
        """Tokens per side of the map (``size / patch``)."""
        return self.scene.size // self.patch

    def validate(self) -> None:
        self.scene.validate()
        self.policy.validate()
        if self.patch not in (4, 8, 16, 32) or self.scene.size % self.patch:
            raise ValueError(f"patch must be 4, 8, 16 or 32 px, dividing the image size "
                             f"{self.scene.size}, got {self.patch}")
        check_int("n_train", self.n_train, 16)
        check_int("n_test", self.n_test, 16)
        check_int("n_val", self.n_val, 16)
        if not 0 < self.success_quantile < 1:
            raise ValueError(f"success_quantile must be in (0, 1), got {self.success_quantile}")
        check_int("head_steps", self.head_steps, 1)
        check_choice("all_tokens", self.all_tokens, ("readout", "head"))
        for k in self.ks:
            check_int("k", k, 1, self.side ** 2)
        for m in self.figure_methods:
            check_choice("method", m, METHODS)


SCALES = {
    "quick": GridsConfig(),
    "paper": GridsConfig(n_train=8192, n_test=2048, pretrain_steps=2000, head_steps=3000,
                         all_tokens="head", ks=(8, 4, 2, 1)),
}
#: the first design (CLAIMS_VERSION 1): 4-px tokens (256 of them), the scout reading the
#: encoder's attention-pooled feature; kept for the diagnosis (benchmarks/grids/grids_diagnosis.py)
FIRST_DESIGN = GridsConfig(patch=4, ks=(16, 4), readout_detached=False,
                           policy=PolicyConfig(scout_input="map"))


def config_for(scale: str) -> GridsConfig:
    return preset(SCALES, scale)


# --------------------------------------------------------------------------- data + encoder
def scenes(cfg: GridsConfig, seed: int) -> dict:
    """Train and test scenes of ``seed`` (a pure function of the config and the seed)."""
    g = generator(seed)
    img, act = make_scenes(cfg.scene, cfg.n_train + cfg.n_test, g)
    val_img, val_act = make_scenes(cfg.scene, cfg.n_val, generator(seed + 20_000))
    return {"img": img, "act": act, "tgt": action_targets(act, cfg.scene.size),
            "n_train": cfg.n_train, "val_img": val_img, "val_act": val_act}


def loss_fn(pred: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Squared error with the contact point in units of 4 px (one token) and (cos, sin)."""
    return ((((pred[:, :2] - tgt[:, :2]) * 16) ** 2).sum(1).mean()
            + ((pred[:, 2:] - tgt[:, 2:]) ** 2).sum(1).mean())


def make_readout(cfg: GridsConfig) -> torch.nn.Module:
    """The pretraining's global readout: pooled feature ``[B, C]`` -> action ``[B, 4]``."""
    return torch.nn.Sequential(torch.nn.Linear(cfg.channels, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 4))


def _encoder_key(cfg: GridsConfig) -> dict:
    return {"scene": asdict(cfg.scene), "n": (cfg.n_train, cfg.n_test), "c": cfg.channels,
            "patch": cfg.patch, "readout_detached": cfg.readout_detached,
            "steps": cfg.pretrain_steps, "batch": cfg.batch, "lr": cfg.lr}


def pretrain_encoder(cfg: GridsConfig, seed: int, data: dict) -> dict:
    """Train the encoder with all tokens: a per-token contact logit (cross-entropy over the
    tokens), the contact token's (cos, sin) and the attention-pooled global readout of
    the whole action, on the device of ``data`` (initialised and batches drawn on the CPU).
    Returns the state dicts (on the CPU)."""
    torch.manual_seed(seed)
    g = generator(seed + 10_000)
    dev = data["img"].device
    enc = Encoder(cfg.channels, cfg.patch).to(dev)
    readout = make_readout(cfg).to(dev)
    side = cfg.side
    cell = (data["act"][:, :2] / cfg.patch).floor().clamp(0, side - 1).long()
    token = cell[:, 1] * side + cell[:, 0]
    params = [*enc.parameters(), *readout.parameters()]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=cfg.pretrain_steps,
                                                pct_start=0.1)
    n = data["n_train"]
    for _ in range(cfg.pretrain_steps):
        i = torch.randint(0, n, (cfg.batch,), generator=g).to(dev)
        fmap = enc(data["img"][i])
        dense = enc.dense(fmap).reshape(cfg.batch, side * side, 5)
        at = dense[torch.arange(cfg.batch, device=dev), token[i], 3:]
        cut = cfg.readout_detached
        pooled = enc.pooled(fmap.detach() if cut else fmap, detach_saliency=cut)
        loss = (F.cross_entropy(dense[..., 0], token[i])
                + ((at - data["tgt"][i, 2:]) ** 2).sum(1).mean()
                + loss_fn(readout(pooled), data["tgt"][i]) / 4)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return {name: {k: v.detach().cpu() for k, v in m.state_dict().items()}
            for name, m in (("encoder", enc), ("readout", readout))}


def features(cfg: GridsConfig, seed: int, device="cpu") -> dict:
    """The frozen encoder's maps ``[n, side, side, C]`` and pooled features ``[n, C]`` of every
    scene, with the scenes, on ``device`` (scenes drawn on the CPU generator, then moved; the
    encoder is trained there and cached on disk keyed by device type; the features of the last
    two (encoder, seed, cache folder, device) are kept in memory, so a notebook computes them
    once)."""
    dev = resolve_device(device)
    key = replace(cfg, policy=PolicyConfig(), ks=(), figure_methods=(), head_steps=1)
    return _features(key, seed, str(cache_dir()), str(dev))


@functools.lru_cache(maxsize=2)
def _features(cfg: GridsConfig, seed: int, cache_root: str, device: str = "cpu") -> dict:
    dev = torch.device(device)
    data = {k: v.to(dev) if torch.is_tensor(v) else v for k, v in scenes(cfg, seed).items()}
    state = cached(PAPER, device_key("encoder", dev), _encoder_key(cfg), seed, CACHE_VERSION,
                   lambda: pretrain_encoder(cfg, seed, data))
    enc = Encoder(cfg.channels, cfg.patch)
    enc.load_state_dict(state["encoder"])
    enc.to(dev).eval()
    with torch.no_grad():
        fmap = torch.cat([enc(data["img"][j: j + 512]) for j in range(0, len(data["img"]), 512)])
        pooled = enc.pooled(fmap)
        val_fmap = torch.cat([enc(data["val_img"][j: j + 512])
                              for j in range(0, len(data["val_img"]), 512)])
    return {**data, "fmap": fmap, "pooled": pooled, "readout": state["readout"],
            "val_fmap": val_fmap, "val_pooled": enc.pooled(val_fmap).detach()}


# --------------------------------------------------------------------------- policies
def make_policy(cfg: GridsConfig, method: str, k: int, impl: str = "auto") -> TokenPolicy:
    p = cfg.policy
    return TokenPolicy(method, k, cfg.channels, cfg.side, cfg.side, cfg.d_model,
                       coord_embed=p.coord_embed, temperature=p.temperature, margin=p.margin,
                       noise_scale=p.noise_scale, probes=p.probes, init_grid=p.init_grid,
                       round_coords=p.round_coords,
                       position_aware=p.scout_input == "tokens", impl=impl)


def train_policy(cfg: GridsConfig, method: str, k: int, seed: int, feats: dict,
                 impl: str = "auto", steps: int | None = None) -> TokenPolicy:
    """Train one selector + head on the frozen features of the training scenes, on the
    features' device (initialised and batches drawn on the CPU)."""
    torch.manual_seed(seed + 7 * k + METHODS.index(method))
    g = generator(seed + 1000 * (1 + METHODS.index(method)) + k)
    dev = feats["fmap"].device
    pol = make_policy(cfg, method, k, impl).to(dev)
    steps = steps or (cfg.full_steps if method == "full" else cfg.head_steps)
    opt = torch.optim.AdamW(pol.parameters(), lr=cfg.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg.lr, total_steps=steps, pct_start=0.1)
    pooled = feats["pooled"] if cfg.policy.scout_input == "map" else None
    for _ in range(steps):
        i = torch.randint(0, feats["n_train"], (cfg.batch,), generator=g).to(dev)
        pred = pol(feats["fmap"][i], g, None if pooled is None else pooled[i])
        loss = loss_fn(pred, feats["tgt"][i])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    pol.eval()
    return pol


def _scores(cfg: GridsConfig, pred: torch.Tensor, feats: dict, val_pred: torch.Tensor
            ) -> dict:
    """Test errors (mean, median, angle) and the per-scene contact errors of the test
    (``pos_px``) and validation (``val_pos_px``) scenes, on the CPU; success is scored later,
    at the run's radius (:func:`success_radius`, :func:`with_success`)."""
    pos, ang = action_errors(pred, feats["act"][feats["n_train"]:], cfg.scene.size)
    val_pos, _ = action_errors(val_pred, feats["val_act"].to(val_pred.device), cfg.scene.size)
    return {"error_px": float(pos.mean()), "median_px": float(pos.median()),
            "angle_deg": float(ang.mean()), "n_test": len(pos),
            "pos_px": pos.detach().cpu(), "val_pos_px": val_pos.detach().cpu()}


def success_radius(cfg: GridsConfig, full: dict) -> float:
    """The run's success radius (px), by the rule fixed in issue 46 before any method was
    scored: the ``success_quantile`` (0.5, the median) of the all-tokens model's contact
    errors on the validation scenes (never trained on, never the test scenes)."""
    return float(torch.quantile(full["val_pos_px"].double(), cfg.success_quantile))


def with_success(row: dict, radius: float) -> dict:
    """``row`` with ``success`` (share of test scenes with contact error < ``radius``) and
    ``radius_px``."""
    return {**row, "success": float((row["pos_px"] < radius).float().mean()),
            "radius_px": radius}


def readout_row(cfg: GridsConfig, feats: dict) -> dict:
    """The all-tokens reference at quick scale: the encoder's pretraining readout (attention
    pooling over all tokens, then an MLP) on the test (and validation) scenes."""
    readout = make_readout(cfg)
    readout.load_state_dict(feats["readout"])
    readout.to(feats["pooled"].device)
    with torch.no_grad():
        pred = readout(feats["pooled"][feats["n_train"]:])
        val_pred = readout(feats["val_pooled"])
    return {"method": "full", "k": cfg.side ** 2, **_scores(cfg, pred, feats, val_pred)}


def to_px(cfg: GridsConfig, coords: torch.Tensor) -> torch.Tensor:
    """Map coordinates in ``[0, 1]`` (token centres at ``j / (W - 1)``) -> image pixels."""
    return coords * (cfg.side - 1) * cfg.patch + (cfg.patch - 1) / 2


def evaluate(cfg: GridsConfig, pol: TokenPolicy, feats: dict, seed: int, n_show: int = 8
             ) -> dict:
    """Test-set errors of a trained policy, its coordinates (px) on the first test scenes and,
    over the test set, the mean / max distance (px) from the contact point to the nearest of
    its K reading points (``nearest_px``, ``nearest_max_px``: does it read at the contact?)."""
    n0 = feats["n_train"]
    g = generator(seed + 99)
    pooled = feats["pooled"][n0:] if cfg.policy.scout_input == "map" else None
    val_pooled = feats["val_pooled"] if cfg.policy.scout_input == "map" else None
    with torch.no_grad():
        pred = pol(feats["fmap"][n0:], g, pooled)
        val_pred = pol(feats["val_fmap"], generator(seed + 97), val_pooled)
        _, coords = pol.select(feats["fmap"][n0:], generator(seed + 98), pooled)
    px = to_px(cfg, coords)
    near = (px - feats["act"][n0:, None, :2]).norm(dim=-1).min(1).values
    return {"method": pol.method, "k": pol.k, **_scores(cfg, pred, feats, val_pred),
            "nearest_px": float(near.mean()), "nearest_max_px": float(near.max()),
            "coords_px": px[:n_show].cpu()}


def _policy_key(cfg: GridsConfig, method: str, k: int) -> dict:
    key = {"enc": _encoder_key(cfg), "d": cfg.d_model, "lr": cfg.lr, "batch": cfg.batch,
           "steps": cfg.full_steps if method == "full" else cfg.head_steps,
           "method": method, "k": k, "n_val": cfg.n_val}
    if method == "grids":
        key["policy"] = asdict(cfg.policy)
    else:
        key["coord_embed"] = cfg.policy.coord_embed
    if method == "topk":  # issue 46: the scorer has the scout's capacity (and position input)
        key["saliency"] = {"hidden": 256, "position_aware": cfg.policy.scout_input == "tokens"}
    return key


def run_policy(cfg: GridsConfig, method: str, k: int, seed: int, feats: dict | None = None,
               device="cpu") -> dict:
    """Cached evaluation row of ``method`` at ``k`` tokens (trains it on a cache miss, on
    ``device``, or on the device of ``feats`` when given; cached by device type)."""
    dev = resolve_device(device) if feats is None else feats["fmap"].device

    def compute():
        f = features(cfg, seed, dev) if feats is None else feats
        return evaluate(cfg, train_policy(cfg, method, k, seed, f), f, seed)

    return cached(PAPER, device_key(f"policy-{method}-{k}", dev), _policy_key(cfg, method, k),
                  seed, CACHE_VERSION, compute)


# --------------------------------------------------------------------------- figures
def all_tokens_row(cfg: GridsConfig, seed: int, feats: dict) -> dict:
    """The all-tokens reference (``cfg.all_tokens``)."""
    if cfg.all_tokens == "readout":
        return readout_row(cfg, feats)
    return run_policy(cfg, "full", cfg.side ** 2, seed, feats)


def claim_rows(cfg: GridsConfig, seed: int, device="cpu") -> dict:
    """The rows the claims read (computed on ``device``), each with ``success`` at the run's
    radius (:func:`success_radius`, fixed from the all-tokens row before any other is
    scored): all tokens, GridS@4, top-K@4 and GridS at the headline's K (``few``,
    ``cfg.few_k``: 1 of 16 tokens, < 10%)."""
    feats = features(cfg, seed, device)
    full = all_tokens_row(cfg, seed, feats)
    radius = success_radius(cfg, full)
    rows = {"full": full,
            "grids": run_policy(cfg, "grids", 4, seed, feats),
            "topk": run_policy(cfg, "topk", 4, seed, feats),
            "few": run_policy(cfg, "grids", cfg.few_k, seed, feats)}
    return {name: with_success(row, radius) for name, row in rows.items()}


def with_policy(cfg: GridsConfig, **changes) -> GridsConfig:
    """``cfg`` with some :class:`PolicyConfig` fields changed (dashboard, mutation tests)."""
    return replace(cfg, policy=replace(cfg.policy, **changes))
