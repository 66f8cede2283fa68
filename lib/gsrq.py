"""GSRQ: gain-shape residual quantization of KV caches (k-means shrinkage, GSKM, GSRQ).

Soosung Kim, Minjae Park, Eui-Young Chung, Jaeyong Chung.  "GSRQ: Gain-Shape Residual
Quantization for Sub-1-bit KV Cache", ICML 2026, https://arxiv.org/abs/2607.01065.
No code was released; everything below the abstract level is reconstructed (spec
``shared/specs/gsrq.md``).

Figures reproduced (``notebooks/gsrq.ipynb``):
F1 shrinkage of l2 k-means reconstructions (mean ``||x_hat|| / ||x||``) vs dimension ``d`` and
codebook size ``K``; F2 mean cosine and relative l2 vs bits per element for RQ-kmeans, GSRQ
with a cluster gain and GSRQ with a per-token gain code, on equal-norm and heavy-tailed
synthetic KV-like data; F3 a tiny character LM (trained in place on CPython's
``pydoc_data.topics``) decoding with a quantized K/V cache: perplexity and passkey accuracy vs
bits -- a scale gap stand-in for the paper's LLaMA-3-8B / LongBench result; F4 the fused
assignment kernel's benchmark, from ``benchmarks/gain_shape_assign.csv`` when present.

The paper's (abstract):
* residual quantization (RQ): ``r_0 = x, c_m = Q_m(r_{m-1}), r_m = r_{m-1} - c_m,
  x_hat = sum_m c_m``, rate ``M log2(K) / d`` bits per element;
* l2 k-means centroids shrink (Jensen: ``||mean x|| <= mean ||x||``), which weakens the angular
  term of ``||x - c||^2 = ||x||^2 + ||c||^2 - 2 ||x|| ||c|| cos(theta)``;
* GSKM: a codeword is a gain times a unit shape, ``c_k = g_k s_k``; GSRQ is a weighted GSKM
  inside RQ; at 1 bit on LLaMA-3-8B LongBench rises from 11.34 (VQLLM) to 33.54.

Reconstructed (ours, verified by the spec's probe and by the claims below):
* assignment ``k(i) = argmax_k cos(x_i, s_k)`` (rule ``"cos"``) or the l2 rule
  ``argmax_k 2 g_k <x_i, s_k> - g_k^2`` (rule ``"l2"``);
* shape update ``s_k = normalize(sum_{i in k} a_i ||x_i||^p x_i / ||x_i||)`` with importance
  weights ``a_i`` (attention mass in the LM) and a weight exponent ``p`` (``p = 0``: the spec's
  directional mean; ``p = 1`` with the l2 rule is exactly weighted k-means);
* gain update ``g_k = sum a_i <x_i, s_k> / sum a_i``, the l2-optimal gain given the shape (the
  naive norm-preserving gain ``g_k = mean ||x_i||`` breaks the residual stages: a pitfall);
* per-token gain variant: the first stage assigns by cosine and stores, per vector, a
  ``gain_bits``-bit code of ``log <x_i, s_k(i)>`` (a uniform grid in log space between that
  stage's smallest and largest gains), costing ``gain_bits / d`` extra bits per element; later
  stages use cluster gains with the l2 rule (with the cosine rule there, the heavy-tailed
  residual norms are ignored: relative l2 was 1.7x k-means' at K=256, 4 stages in our probe);
* synthetic KV-like data: anisotropic channels (std ``j^-decay``) with a few outlier channels,
  directions then rescaled to equal norms, optionally times a lognormal per-token norm factor.

What holds at quick scale (seeds 0-4): shrinkage, GSKM's better direction at matched (in fact
lower) l2 on equal-norm data, the per-token gain on heavy-tailed data; NOT the tiny-LM win at
1 bit (GSRQ's perplexity is 0.4-1% worse than RQ-kmeans' there; ``tiny_lm_one_bit`` note).

Every random draw comes from a ``torch.Generator`` seeded from ``seed``.  The assignment and
the centroid update go through ``icml26.kernels.gain_shape_assign`` (``impl="auto"``: Triton on
CUDA tensors, the torch reference on CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from icml26.claims import Claim, failed
from icml26.common import cached
from icml26.kernels.gain_shape_assign import centroid_sums, gain_shape_assign

PAPER = "gsrq"
CACHE_VERSION = 1
METHODS = ("kmeans", "gskm")
GAIN_MODES = ("cluster", "token")
RULES = ("cos", "l2")
GAIN_UPDATES = ("l2opt", "mean_norm")  # "mean_norm" = the naive norm-preserving pitfall
#: The three quantizers compared in F2/F3: label -> (method, gain mode, assignment rule).
#: The per-token variant assigns stage 1 by cosine (its gain is free); its later stages carry
#: cluster gains and use the l2 rule, because their residual norms inherit the heavy tail.
VARIANTS = {
    "RQ-kmeans": ("kmeans", "cluster", "l2"),
    "GSRQ (cluster gain)": ("gskm", "cluster", "cos"),
    "GSRQ (per-token gain)": ("gskm", "token", "l2"),
}
TINY = 1e-30


def _check_int(name: str, value: int, low: int, high: int | None = None) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (
            high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be an integer {rng}, got {value!r}")


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


# --------------------------------------------------------------------------- data
@dataclass(frozen=True)
class KVDataConfig:
    """Synthetic KV-like vectors. Defaults: the spec's probe size (N = 8192, d = 128)."""

    n: int = 8192  # spec probe
    dim: int = 128  # head dimension of LLaMA-3-8B, the paper's model
    decay: float = 0.5  # channel std j^-decay: an anisotropic spectrum (ours)
    n_outliers: int = 4  # outlier channels at random positions (ours; LLM keys show a few)
    outlier_scale: float = 4.0  # their std, in units of the base channels' RMS (ours)
    norm_tail: float = 0.0  # sigma of a lognormal per-token norm; 0 = equal norms, 0.8 = spec

    def validate(self) -> None:
        _check_int("n", self.n, 1)
        _check_int("dim", self.dim, 1)
        _check_int("n_outliers", self.n_outliers, 0, self.dim)
        for name in ("decay", "outlier_scale", "norm_tail"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")


#: The two data settings of F2 and of the claims.
EQUAL_NORM = KVDataConfig()
HEAVY_TAIL = KVDataConfig(norm_tail=0.8)  # the spec's lognormal sigma


def make_kv_data(cfg: KVDataConfig, generator: torch.Generator,
                 device: str | torch.device = "cpu") -> torch.Tensor:
    """``[n, dim]`` float32 KV-like vectors (see the module docstring).

    Directions: ``z_ij ~ N(0, sigma_j^2)`` with ``sigma_j = j^-decay`` and ``n_outliers``
    channels (random positions) at ``outlier_scale * RMS(sigma)``; every row is rescaled to the
    norm ``||sigma||`` and, when ``norm_tail > 0``, multiplied by ``exp(norm_tail * eps_i)``.
    """
    cfg.validate()
    base = torch.arange(1, cfg.dim + 1, dtype=torch.float32) ** -cfg.decay
    scale = base.clone()
    pos = torch.randperm(cfg.dim, generator=generator)[: cfg.n_outliers]
    scale[pos] = cfg.outlier_scale * base.pow(2).mean().sqrt()
    z = torch.randn(cfg.n, cfg.dim, generator=generator) * scale
    z = z / z.norm(dim=1, keepdim=True).clamp_min(TINY) * scale.norm()
    if cfg.norm_tail > 0:
        z = z * torch.exp(cfg.norm_tail * torch.randn(cfg.n, 1, generator=generator))
    return z.to(device)


# --------------------------------------------------------------------------- quantizers
@dataclass(frozen=True)
class QuantConfig:
    """One residual quantizer. Defaults: the binding claims' setting (K = 256, 4 stages)."""

    n_codes: int = 256  # K; log2 K = 8 bits per vector per stage (spec)
    stages: int = 4  # M; at d = 128 this is 0.25 bit per element (spec's claim setting)
    method: str = "gskm"  # "kmeans" (RQ-kmeans baseline) or "gskm" (GSRQ)
    gain: str = "cluster"  # "cluster" gains or a per-token gain code on stage 1 ("token")
    rule: str = "cos"  # GSKM assignment: "cos" (spec) or "l2"; k-means always uses l2;
    # with gain="token" stage 1 always assigns by cosine and the rule applies to stages >= 2
    weight_exponent: float = 0.0  # p in the shape update (0 = spec's directional mean)
    gain_bits: int = 4  # per-token gain code width (spec: a 4-bit log gain)
    iters: int = 20  # Lloyd iterations per stage (ours; the distortion is flat by then)
    gain_update: str = "l2opt"  # "mean_norm" = the naive norm-preserving gain (pitfall)

    def validate(self) -> None:
        _check_int("n_codes", self.n_codes, 1)
        _check_int("stages", self.stages, 1)
        _check_int("gain_bits", self.gain_bits, 1, 16)
        _check_int("iters", self.iters, 0)
        _check_choice("method", self.method, METHODS)
        _check_choice("gain", self.gain, GAIN_MODES)
        _check_choice("rule", self.rule, RULES)
        _check_choice("gain_update", self.gain_update, GAIN_UPDATES)
        if not math.isfinite(self.weight_exponent) or abs(self.weight_exponent) > 4:
            raise ValueError(f"weight_exponent must be in [-4, 4], got {self.weight_exponent!r}")
        if self.method == "kmeans" and self.gain == "token":
            raise ValueError("gain='token' needs method='gskm' (k-means has no separate gain)")


def bits_per_element(n_codes: int, stages: int, dim: int, gain: str = "cluster",
                     gain_bits: int = 4) -> float:
    """Rate of an RQ code: ``(M log2 K + [per-token gain] * gain_bits) / d`` bits per element.

    Codebooks (``M K d`` floats shared by all vectors) are not counted, as in the paper.
    """
    _check_int("n_codes", n_codes, 1)
    _check_int("stages", stages, 0)
    _check_int("dim", dim, 1)
    _check_choice("gain", gain, GAIN_MODES)
    extra = gain_bits if gain == "token" and stages > 0 else 0
    return (stages * math.log2(n_codes) + extra) / dim


@dataclass
class Stage:
    """One fitted codebook: ``c_k = gains[k] * shapes[k]`` (``[K, d]`` unit rows, ``[K]``).

    ``log_range = (lo, hi)`` is the per-token gain grid (``None`` for cluster gains).
    """

    shapes: torch.Tensor
    gains: torch.Tensor
    rule: str
    log_range: tuple[float, float] | None = None
    gain_bits: int = 4


def _check_data(x: torch.Tensor, name: str = "x") -> None:
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"{name} must be a [N, d] tensor with N >= 1, got "
                         f"{getattr(x, 'shape', type(x))}")
    if x.dtype != torch.float32:
        raise ValueError(f"{name} must be float32, got {x.dtype}")
    bad = ~torch.isfinite(x).all(dim=1)
    if bad.any():
        rows = torch.nonzero(bad).flatten()[:5].tolist()
        raise ValueError(f"{name} must be finite; rows {rows} contain NaN/inf")


def _weights(x: torch.Tensor, weights: torch.Tensor | None) -> torch.Tensor:
    if weights is None:
        return torch.ones(x.shape[0], dtype=x.dtype, device=x.device)
    if weights.shape != (x.shape[0],) or not torch.isfinite(weights).all() or (
            weights < 0).any() or float(weights.sum()) <= 0:
        raise ValueError(f"weights must be finite, >= 0, not all 0, of shape ({x.shape[0]},)")
    return weights.to(x.dtype)


def _split(c: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Centroids ``[K, d]`` -> unit shapes and gains (a zero centroid keeps a zero shape)."""
    g = c.norm(dim=1)
    return c / g.clamp_min(TINY)[:, None], g


def kmeans_pp_init(x: torch.Tensor, n_codes: int, generator: torch.Generator,
                   weights: torch.Tensor | None = None) -> torch.Tensor:
    """k-means++ seeding (D^2 sampling, weighted by ``weights``): ``[N, d] -> [K, d]``."""
    _check_data(x)
    _check_int("n_codes", n_codes, 1)
    if n_codes > x.shape[0]:
        raise ValueError(f"n_codes K={n_codes} must be <= the number of rows N={x.shape[0]}")
    w = _weights(x, weights)
    sq = (x * x).sum(1)

    def draw(p: torch.Tensor) -> int:  # inverse-CDF sampling of one index, p >= 0
        cdf = torch.cumsum(p.double(), 0)
        u = torch.rand((), generator=generator, dtype=torch.float64).to(cdf.device) * cdf[-1]
        return min(int(torch.searchsorted(cdf, u, right=True)), len(p) - 1)

    def dist2(i: int) -> torch.Tensor:  # ||x - x_i||^2 = ||x||^2 - 2 <x, x_i> + ||x_i||^2
        return (sq - 2.0 * (x @ x[i]) + sq[i]).clamp_min(0)

    first = draw(w)
    centers = [first]
    d2 = dist2(first)
    for _ in range(n_codes - 1):
        p = w * d2
        i = draw(p if float(p.sum()) > 0 else w)  # all rows on centres: fall back to weights
        centers.append(i)
        d2 = torch.minimum(d2, dist2(i))
    return x[torch.tensor(centers, device=x.device)]


def _quantize_gains(g: torch.Tensor, log_range: tuple[float, float], bits: int) -> torch.Tensor:
    """Round per-token gains to a ``2^bits``-level geometric grid on ``[e^lo, e^hi]``."""
    lo, hi = log_range
    levels = 2**bits - 1
    lg = g.clamp_min(math.exp(lo)).log()
    step = (hi - lo) / levels if hi > lo else 1.0
    q = torch.round((lg - lo) / step).clamp(0, levels)
    return torch.exp(lo + q * step)


def assign(x: torch.Tensor, stage: Stage, impl: str = "auto") -> tuple[torch.Tensor, torch.Tensor]:
    """Codes ``[N]`` and reconstructions ``[N, d]`` of ``x`` under one fitted stage."""
    idx, best = gain_shape_assign(x, stage.shapes, stage.gains, stage.rule, impl=impl)
    if stage.log_range is None:
        gain = stage.gains[idx]
    else:  # per-token gain: <x, s_k> (the best cosine score), coded on the stage's log grid
        gain = _quantize_gains(best, stage.log_range, stage.gain_bits)
    return idx, gain[:, None] * stage.shapes[idx]


def fit_stage(x: torch.Tensor, cfg: QuantConfig, generator: torch.Generator,
              weights: torch.Tensor | None = None, impl: str = "auto") -> Stage:
    """Fit one codebook to ``x [N, d]`` by Lloyd iterations from a k-means++ seeding.

    ``method="kmeans"``: weighted l2 k-means, stored as gains ``||c_k||`` and shapes
    ``c_k / ||c_k||`` (the l2 rule then equals ``argmin ||x - c_k||``).  ``method="gskm"``:
    the shape / gain updates of the module docstring.  Empty clusters keep their codeword.
    """
    _check_data(x)
    cfg.validate()
    w = _weights(x, weights)
    k = cfg.n_codes
    shapes, gains = _split(kmeans_pp_init(x, k, generator, w))
    gskm = cfg.method == "gskm"
    token = gskm and cfg.gain == "token"
    rule = ("cos" if token else cfg.rule) if gskm else "l2"
    norms = x.norm(dim=1)
    shape_w = w * norms.pow(cfg.weight_exponent) if gskm else w
    shape_w = torch.where(norms > 0, shape_w, torch.zeros_like(shape_w))
    # rows pre-weighted once per stage: each Lloyd iteration is then one assignment and
    # plain scatter-adds (the memory-bound weighting is not redone 20 times)
    wx = x if weights is None else w[:, None] * x
    if gskm:
        unit = torch.where(norms[:, None] > 0, x / norms.clamp_min(TINY)[:, None], 0.0)
        wu = shape_w[:, None] * unit

    def weight_sums(idx: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.zeros(k, dtype=x.dtype, device=x.device).index_add_(0, idx, v)

    for _ in range(cfg.iters):
        idx, _ = gain_shape_assign(x, shapes, gains, rule, impl=impl)
        sum_x, _, counts = centroid_sums(wx, idx, k, impl=impl)
        sum_w = counts if weights is None else weight_sums(idx, w)
        full = sum_w > 0
        if not gskm:
            new_shapes, new_gains = _split(sum_x / sum_w.clamp_min(TINY)[:, None])
        else:
            sum_u = centroid_sums(wu, idx, k, impl=impl)[0]
            new_shapes, _ = _split(sum_u)
            full = full & (weight_sums(idx, shape_w) > 0)
            if cfg.gain_update == "l2opt":
                new_gains = (sum_x * new_shapes).sum(1) / sum_w.clamp_min(TINY)
            else:  # the pitfall: preserve the mean norm, ignore the angle to the shape
                new_gains = weight_sums(idx, w * norms) / sum_w.clamp_min(TINY)
        shapes = torch.where(full[:, None], new_shapes, shapes)
        gains = torch.where(full, new_gains, gains)
    stage = Stage(shapes, gains, rule)
    if token:
        _, best = gain_shape_assign(x, shapes, gains, "cos", impl=impl)
        pos = best[best > 0]
        if pos.numel() == 0:
            log_range = (0.0, 0.0)
        else:  # floor at 1e-4 of the largest gain so one tiny projection cannot stretch the grid
            hi = float(pos.max().log())
            log_range = (max(float(pos.min().log()), hi - math.log(1e4)), hi)
        stage = Stage(shapes, gains, "cos", log_range, cfg.gain_bits)
    return stage


@dataclass
class RQResult:
    """A fitted residual quantizer and its per-stage metrics on the training data."""

    stages: list[Stage]
    metrics: list[dict]  # one dict per stage: stage, bits, cos, rel_l2, norm_ratio
    recon: torch.Tensor  # [N, d] reconstruction after the last stage


def metrics(x: torch.Tensor, x_hat: torch.Tensor) -> dict:
    """Mean cosine, relative l2 ``sum ||x - x_hat||^2 / sum ||x||^2`` and mean norm ratio."""
    nx, nh = x.norm(dim=1), x_hat.norm(dim=1)
    cos = (x * x_hat).sum(1) / (nx * nh).clamp_min(TINY)
    return {"cos": float(cos.mean()),
            "rel_l2": float(((x - x_hat) ** 2).sum() / (x**2).sum().clamp_min(TINY)),
            "norm_ratio": float((nh / nx.clamp_min(TINY)).mean())}


def fit_rq(x: torch.Tensor, cfg: QuantConfig, generator: torch.Generator,
           weights: torch.Tensor | None = None, impl: str = "auto",
           progress=None) -> RQResult:
    """Residual quantization of ``x [N, d]`` with ``cfg.stages`` codebooks, fitted greedily.

    Stage 1 uses ``cfg.gain``; later stages always use cluster gains (the per-token gain code
    is paid once per vector).  ``progress(stage)`` is called after each stage.
    """
    _check_data(x)
    cfg.validate()
    if cfg.n_codes > x.shape[0]:
        raise ValueError(f"n_codes K={cfg.n_codes} must be <= the number of rows N={x.shape[0]}")
    resid, x_hat = x.clone(), torch.zeros_like(x)
    stages, rows = [], []
    for m in range(cfg.stages):
        stage_cfg = cfg if m == 0 else replace(cfg, gain="cluster")
        stage = fit_stage(resid, stage_cfg, generator, weights, impl)
        _, q = assign(resid, stage, impl)
        resid, x_hat = resid - q, x_hat + q
        stages.append(stage)
        rows.append({"stage": m + 1, "bits": bits_per_element(cfg.n_codes, m + 1, x.shape[1],
                                                               cfg.gain, cfg.gain_bits),
                     **metrics(x, x_hat)})
        if progress is not None:
            progress(m + 1)
    return RQResult(stages, rows, x_hat)


def rq_reconstruct(x: torch.Tensor, stages: list[Stage], n_stages: int | None = None,
                   impl: str = "auto") -> torch.Tensor:
    """Encode and decode new rows ``x [N, d]`` with the first ``n_stages`` fitted stages."""
    _check_data(x)
    if stages and stages[0].shapes.shape[1] != x.shape[1]:
        raise ValueError(f"x has d={x.shape[1]} but the codebooks have "
                         f"d={stages[0].shapes.shape[1]}")
    n_stages = len(stages) if n_stages is None else n_stages
    _check_int("n_stages", n_stages, 0, len(stages))
    resid, x_hat = x.clone(), torch.zeros_like(x)
    for stage in stages[:n_stages]:
        _, q = assign(resid, stage, impl)
        resid, x_hat = resid - q, x_hat + q
    return x_hat


# --------------------------------------------------------------------------- experiments
@dataclass(frozen=True)
class GSRQConfig:
    """One scale of the experiments. Quick defaults fit CI; ``SCALES["paper"]`` is closer."""

    data: KVDataConfig = EQUAL_NORM  # F2's equal-norm setting (the binding claims)
    heavy_tail: float = 0.8  # F2's heavy-tailed setting: lognormal norm sigma (spec)
    n_codes: int = 256  # K of the claims (spec)
    claim_stages: int = 4  # stages of the claims: 0.25 bit/element at d = 128 (spec)
    iters: int = 20
    weight_exponent: float = 0.0
    gain_update: str = "l2opt"  # "mean_norm" injects the naive-gain pitfall (mutation test)
    sweep_codes: int = 16  # F2's cheap codebook, swept up to sweep_max_bits
    sweep_max_bits: float = 1.0  # spec's bit grid {0.06, 0.125, 0.25, 0.5, 1}
    sweep_iters: int = 10  # Lloyd iterations of the 32-stage sweep (a figure, not a claim)
    shrink_dims: tuple[int, ...] = (16, 32, 64, 128, 256)  # F1's x-axis
    shrink_codes: tuple[int, ...] = (16, 64, 256)  # F1's curves (spec probe: 16 and 256)
    shrink_n: int = 4096
    lm_steps: int = 800  # tiny LM training steps (passkey retrieval appears at ~600)
    lm_calib_windows: int = 64  # 64 x 64 tokens x 2 heads = 8192 K (and V) vectors per layer
    lm_eval_windows: int = 128
    lm_codes: int = 256
    lm_stages: int = 4  # 1 bit per element at head dim 32

    def quant(self, label: str, n_codes: int | None = None, stages: int | None = None
              ) -> QuantConfig:
        method, gain, rule = VARIANTS[label]
        return QuantConfig(n_codes=n_codes or self.n_codes,
                           stages=stages or self.claim_stages, method=method, gain=gain,
                           rule=rule,
                           weight_exponent=self.weight_exponent, iters=self.iters,
                           # k-means has no gain update: keep its cache key when mutating
                           gain_update=self.gain_update if method == "gskm" else "l2opt")

    def heavy(self) -> KVDataConfig:
        return replace(self.data, norm_tail=self.heavy_tail)

    def validate(self) -> None:
        self.data.validate()
        self.heavy().validate()
        for label in VARIANTS:
            self.quant(label).validate()
        if self.sweep_max_bits <= 0:
            raise ValueError(f"sweep_max_bits must be > 0, got {self.sweep_max_bits}")


SCALES = {
    "quick": GSRQConfig(),
    # paper: 16 stages of K = 256 reach 1 bit; a longer-trained LM; a larger sample
    "paper": GSRQConfig(data=replace(EQUAL_NORM, n=65536), claim_stages=16, iters=30,
                        sweep_iters=30,
                        shrink_n=16384, lm_steps=3000, lm_calib_windows=256,
                        lm_eval_windows=512),
}


def config_for(scale: str) -> GSRQConfig:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {sorted(SCALES)}, got {scale!r}")
    return SCALES[scale]


def _data_seed(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _fit_seed(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(10_007 + seed)


def rq_curve(data: KVDataConfig, qcfg: QuantConfig, seed: int = 0,
             impl: str = "auto") -> list[dict]:
    """Per-stage metrics of one RQ fit on one synthetic data set (cached)."""

    def compute():
        x = make_kv_data(data, _data_seed(seed))
        return fit_rq(x, qcfg, _fit_seed(seed), impl=impl).metrics

    return cached(PAPER, "rq", {"data": data, "quant": qcfg}, seed, CACHE_VERSION, compute)


def figure_shrinkage_data(cfg: GSRQConfig, seed: int = 0, progress=None) -> list[dict]:
    """F1: mean norm ratio ``||x_hat|| / ||x||`` of one-stage k-means vs ``d`` and ``K``.

    ``progress()`` is called after each of the ``len(shrink_codes) * len(shrink_dims)`` fits.
    """
    cfg.validate()
    rows = []
    for k in cfg.shrink_codes:
        for d in cfg.shrink_dims:
            data = replace(cfg.data, n=cfg.shrink_n, dim=d)
            q = QuantConfig(n_codes=k, stages=1, method="kmeans", iters=cfg.iters)
            m = rq_curve(data, q, seed)[0]
            rows.append({"K": k, "dim": d, "bits": m["bits"], "norm_ratio": m["norm_ratio"],
                         "cos": m["cos"]})
            if progress is not None:
                progress()
    return rows


def figure_rate_distortion_data(cfg: GSRQConfig, seed: int = 0,
                                settings: tuple[str, ...] = ("equal-norm", "heavy-tailed"),
                                sweep: bool = True, progress=None) -> list[dict]:
    """F2: mean cosine / relative l2 / norm ratio vs bits per element, per variant and data.

    Two codebook sizes: ``K = n_codes`` for ``claim_stages`` stages (the claims read these
    rows) and, when ``sweep``, the cheap ``K = sweep_codes`` up to ``sweep_max_bits``.
    ``progress()`` is called after each RQ fit (3 variants x settings x codebook sizes).
    """
    cfg.validate()
    datas = {"equal-norm": cfg.data, "heavy-tailed": cfg.heavy()}
    dim = cfg.data.dim
    plans = [(cfg.n_codes, cfg.claim_stages)]
    if sweep:
        per_stage = math.log2(cfg.sweep_codes) / dim
        plans.append((cfg.sweep_codes, max(1, round(cfg.sweep_max_bits / per_stage))))
    rows = []
    for setting in settings:
        for label in VARIANTS:
            for k, stages in plans:
                q = cfg.quant(label, k, stages)
                if k != cfg.n_codes or stages != cfg.claim_stages:
                    q = replace(q, iters=cfg.sweep_iters)
                for m in rq_curve(datas[setting], q, seed):
                    rows.append({"data": setting, "variant": label, "K": k, **m})
                if progress is not None:
                    progress()
    return rows


def _lm_config(cfg: GSRQConfig):
    from icml26.gsrq_lm import TinyLMConfig

    return TinyLMConfig(steps=cfg.lm_steps)


def trained_tiny_lm(cfg: GSRQConfig, progress=None):
    """The tiny LM (trained once per config with its fixed training seed, then cached)."""
    from icml26.gsrq_lm import load_model, train_tiny_lm

    lm_cfg = _lm_config(cfg)
    trained = cached(PAPER, "tiny_lm", lm_cfg, lm_cfg.train_seed, CACHE_VERSION,
                     lambda: train_tiny_lm(lm_cfg, progress))
    return load_model(lm_cfg, trained), trained


def figure_tiny_lm_data(cfg: GSRQConfig, seed: int = 0, impl: str = "auto") -> list[dict]:
    """F3: perplexity and passkey accuracy of the tiny LM vs bits, per quantizer (cached).

    ``seed`` draws the calibration / evaluation windows and the codebook seeding; the model is
    the same for every seed (like the paper's single checkpoint).
    """
    cfg.validate()
    lm_cfg = _lm_config(cfg)

    def compute():
        from icml26.gsrq_lm import (
            collect_kv,
            evaluate,
            quantized_hook,
            sample_windows,
            split_corpus,
        )

        model, _ = trained_tiny_lm(cfg)
        train, val = split_corpus(lm_cfg)
        g = torch.Generator().manual_seed(20_011 + seed)
        calib, _, _ = sample_windows(train, lm_cfg, cfg.lm_calib_windows, g)
        text, _, _ = sample_windows(val, lm_cfg, cfg.lm_eval_windows, g, passkey_fraction=0.0)
        keys, _, _ = sample_windows(val, lm_cfg, cfg.lm_eval_windows, g, passkey_fraction=1.0)
        kv = collect_kv(model, calib[:, :-1])
        base = evaluate(model, text, keys, lm_cfg.passkey_digits)
        rows = [{"variant": "fp32 cache", "stages": 0, "bits": 32.0, **base}]
        fit_g = _fit_seed(seed)
        for label in VARIANTS:
            q = cfg.quant(label, cfg.lm_codes, cfg.lm_stages)
            books = {}
            for layer in range(lm_cfg.n_layers):
                for name in ("k", "v"):
                    w = kv["mass"][layer] if q.method == "gskm" else None
                    books[(layer, name)] = fit_rq(kv[name][layer], q, fit_g, w, impl).stages
            for m in range(1, q.stages + 1):
                res = evaluate(model, text, keys, lm_cfg.passkey_digits,
                               quantized_hook(books, m, impl))
                rows.append({"variant": label, "stages": m,
                             "bits": bits_per_element(q.n_codes, m, lm_cfg.head_dim, q.gain,
                                                      q.gain_bits), **res})
        return rows

    key = {"lm": lm_cfg, "quant": [cfg.quant(label, cfg.lm_codes, cfg.lm_stages)
                                   for label in VARIANTS],
           "windows": (cfg.lm_calib_windows, cfg.lm_eval_windows)}
    return cached(PAPER, "tiny_lm_eval", key, seed, CACHE_VERSION, compute)


def benchmark_data(name: str = "gain_shape_assign", path: str | None = None):
    """F4: a recorded benchmark, ``benchmarks/<name>.csv`` of the checkout (the GPU kernel
    benchmark by default; ``"gsrq_cpu_assign"`` for the CPU record), or an empty frame."""
    from pathlib import Path

    import pandas as pd

    p = Path(path) if path else Path(__file__).resolve().parents[1] / "benchmarks" / \
        f"{name}.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()


# --------------------------------------------------------------------------- claims
CLAIM_SPECS = {  # name: (statement, op, threshold, expected)
    "kmeans_shrinks": ("l2 k-means reconstructions shrink: mean ||x_hat||/||x|| < 0.9 at "
                       "K=256, one stage, d=128", "<", 0.9, True),
    "gskm_direction": ("On equal-norm data (K=256, 4 stages) GSKM's mean cosine is >= "
                       "k-means' + 0.005", ">=", 0.005, True),
    "gskm_l2_matched": ("On equal-norm data (K=256, 4 stages) GSKM's relative l2 is <= "
                        "1.02x k-means'", "<=", 1.02, True),
    "per_token_gain_heavy_tail": ("With heavy-tailed norms a per-token gain keeps relative l2 "
                                  "within 1.05x of k-means while raising the cosine "
                                  "(measured: min(1.05 - l2 ratio, cosine gain))", ">", 0.0,
                                  True),  # reported; holds on seeds 0-4 (l2 ratio <= 1.038)
    "tiny_lm_one_bit": ("At 1 bit per element GSRQ beats RQ-kmeans on the tiny LM's "
                        "perplexity and passkey accuracy (measured: min(log ppl gap, "
                        "accuracy gap))", ">", 0.0, False),
}


def claims(seed: int = 0, scale: str = "quick") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed``."""
    return claims_for(config_for(scale), seed)


def claims_for(cfg: GSRQConfig, seed: int = 0, lm: bool = True) -> list[Claim]:
    """The claims for an explicit config (the mutation test sets ``gain_update``)."""
    out: list[Claim] = []

    def add(name, measured, note):
        statement, op, threshold, expected = CLAIM_SPECS[name]
        out.append(Claim(PAPER, name, statement, measured, op, threshold, expected, note))

    def fail(names, err):
        out.extend(failed(PAPER, [(n, CLAIM_SPECS[n][0], *CLAIM_SPECS[n][1:]) for n in names],
                          f"{type(err).__name__}: {err}"))

    names = ("kmeans_shrinks", "gskm_direction", "gskm_l2_matched", "per_token_gain_heavy_tail")
    try:
        rows = figure_rate_distortion_data(cfg, seed, sweep=False)
        at = {(r["data"], r["variant"], r["stage"]): r for r in rows}
        s = cfg.claim_stages
        km_eq, gs_eq = at[("equal-norm", "RQ-kmeans", s)], at[("equal-norm",
                                                                "GSRQ (cluster gain)", s)]
        ratios = [at[(d, "RQ-kmeans", 1)]["norm_ratio"] for d in ("equal-norm", "heavy-tailed")]
        add("kmeans_shrinks", max(ratios), f"worst of equal-norm {ratios[0]:.3f} and "
            f"heavy-tailed {ratios[1]:.3f} (N={cfg.data.n}); spec probe 0.60")
        add("gskm_direction", gs_eq["cos"] - km_eq["cos"],
            f"cos {km_eq['cos']:.4f} -> {gs_eq['cos']:.4f} at {gs_eq['bits']:.3g} bit/element; "
            "spec probe 0.834 -> 0.843")
        add("gskm_l2_matched", gs_eq["rel_l2"] / km_eq["rel_l2"],
            f"relative l2 {km_eq['rel_l2']:.4f} -> {gs_eq['rel_l2']:.4f}; gain update "
            f"{cfg.gain_update!r}; spec probe 0.293 -> 0.285")
        km_h = at[("heavy-tailed", "RQ-kmeans", s)]
        tok_h = at[("heavy-tailed", "GSRQ (per-token gain)", s)]
        ratio, gain = tok_h["rel_l2"] / km_h["rel_l2"], tok_h["cos"] - km_h["cos"]
        add("per_token_gain_heavy_tail", min(1.05 - ratio, gain),
            f"l2 ratio {ratio:.3f}, cosine {km_h['cos']:.3f} -> {tok_h['cos']:.3f} "
            f"(lognormal sigma {cfg.heavy_tail}); the gain code costs "
            f"{tok_h['bits'] - km_h['bits']:.3g} extra bit/element; reported (not binding), "
            "l2 ratio 1.014-1.038 on seeds 0-4")
    except Exception as err:  # a failed fit reports NaN claims instead of hiding the rest
        fail(names, err)
    if lm:
        try:
            rows = figure_tiny_lm_data(cfg, seed)
            one = {r["variant"]: r for r in rows if r["stages"] == cfg.lm_stages}
            km, gs = one["RQ-kmeans"], one["GSRQ (cluster gain)"]
            ppl_gap = math.log(km["ppl"]) - math.log(gs["ppl"])
            acc_gap = gs["passkey"] - km["passkey"]
            base = rows[0]
            add("tiny_lm_one_bit", min(ppl_gap, acc_gap),
                f"ppl {km['ppl']:.2f} -> {gs['ppl']:.2f}, passkey {km['passkey']:.3f} -> "
                f"{gs['passkey']:.3f} at {gs['bits']:.3g} bit (fp32 cache: ppl "
                f"{base['ppl']:.2f}, passkey {base['passkey']:.3f}); fails on seeds 0-4 "
                "(GSRQ's ppl 0.4-1% worse; passkey saturated near 1.0 for both); scale gap: "
                "a 2-layer char LM, not LLaMA-3-8B / LongBench")
        except Exception as err:
            fail(["tiny_lm_one_bit"], err)
    return out
