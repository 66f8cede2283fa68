"""Residual quantizers of ``gsrq``: l2 k-means (RQ-kmeans) and gain-shape k-means (GSKM, GSRQ).

* RQ: ``r_0 = x, c_m = Q_m(r_{m-1}), r_m = r_{m-1} - c_m, x_hat = sum_m c_m``, rate
  ``M log2(K) / d`` bits per element [known, abstract];
* GSKM codewords ``c_k = g_k s_k`` (a gain times a unit shape); assignment by cosine (rule
  ``"cos"``) or by ``argmax_k 2 g_k <x_i, s_k> - g_k^2`` (rule ``"l2"``); shape update
  ``s_k = normalize(sum_{i in k} a_i ||x_i||^p x_i / ||x_i||)``; gain update
  ``g_k = sum a_i <x_i, s_k> / sum a_i`` [reconstructed, see the package docstring];
* per-token gain: stage 1 stores a ``gain_bits``-bit code of ``log <x_i, s_k(i)>`` per vector.

The assignment and the centroid update go through ``icml26.kernels.gain_shape_assign``
(``impl="auto"``: Triton on CUDA tensors, the torch reference on CPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from icml26.common import check_choice, check_int
from icml26.gsrq.data import TINY
from icml26.kernels.gain_shape_assign import centroid_sums, gain_shape_assign

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
        check_int("n_codes", self.n_codes, 1)
        check_int("stages", self.stages, 1)
        check_int("gain_bits", self.gain_bits, 1, 16)
        check_int("iters", self.iters, 0)
        check_choice("method", self.method, METHODS)
        check_choice("gain", self.gain, GAIN_MODES)
        check_choice("rule", self.rule, RULES)
        check_choice("gain_update", self.gain_update, GAIN_UPDATES)
        if not math.isfinite(self.weight_exponent) or abs(self.weight_exponent) > 4:
            raise ValueError(f"weight_exponent must be in [-4, 4], got {self.weight_exponent!r}")
        if self.method == "kmeans" and self.gain == "token":
            raise ValueError("gain='token' needs method='gskm' (k-means has no separate gain)")


def bits_per_element(n_codes: int, stages: int, dim: int, gain: str = "cluster",
                     gain_bits: int = 4) -> float:
    """Rate of an RQ code: ``(M log2 K + [per-token gain] * gain_bits) / d`` bits per element.

    Codebooks (``M K d`` floats shared by all vectors) are not counted, as in the paper.
    """
    check_int("n_codes", n_codes, 1)
    check_int("stages", stages, 0)
    check_int("dim", dim, 1)
    check_choice("gain", gain, GAIN_MODES)
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
    check_int("n_codes", n_codes, 1)
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


def _check_codebook_dim(x: torch.Tensor, stages: list[Stage]) -> None:
    _check_data(x)
    if stages and stages[0].shapes.shape[1] != x.shape[1]:
        raise ValueError(f"x has d={x.shape[1]} but the codebooks have "
                         f"d={stages[0].shapes.shape[1]}")


def rq_reconstruct(x: torch.Tensor, stages: list[Stage], n_stages: int | None = None,
                   impl: str = "auto") -> torch.Tensor:
    """Encode and decode new rows ``x [N, d]`` with the first ``n_stages`` fitted stages."""
    _check_codebook_dim(x, stages)
    n_stages = len(stages) if n_stages is None else n_stages
    check_int("n_stages", n_stages, 0, len(stages))
    resid, x_hat = x.clone(), torch.zeros_like(x)
    for stage in stages[:n_stages]:
        _, q = assign(resid, stage, impl)
        resid, x_hat = resid - q, x_hat + q
    return x_hat


def rq_metrics(x: torch.Tensor, stages: list[Stage], impl: str = "auto") -> list[dict]:
    """:func:`metrics` of new rows ``x [N, d]`` coded with the first 1, 2, ..., M fitted stages
    (one pass: stage ``m`` codes the residual left by stages ``1..m-1``)."""
    _check_codebook_dim(x, stages)
    resid, x_hat, out = x.clone(), torch.zeros_like(x), []
    for stage in stages:
        _, q = assign(resid, stage, impl)
        resid, x_hat = resid - q, x_hat + q
        out.append(metrics(x, x_hat))
    return out
