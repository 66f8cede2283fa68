"""Zero-shot criteria under a surrogate, z-normalisation on human text, and AUROC.

Fast-DetectGPT's analytic criterion (Bao et al., ICLR 2024; DetectRouter's main criterion)
scores a text ``x`` under a surrogate ``q`` by the conditional probability curvature::

    c(x) = (sum_t log q(x_t | x_<t) - sum_t mu_t) / sqrt(sum_t sigma_t^2),
    mu_t = E_{v~q(.|x_<t)} log q(v | x_<t),  sigma_t^2 = Var_{v~q(.|x_<t)} log q(v | x_<t)

summed over the scored positions (the continuation after a human prefix).  Machine text
sampled from (a sharpened) ``q`` sits above its expected log-likelihood, human text below.
The second criterion is the plain log-likelihood per character (``"likelihood"``).  The
per-token statistics come from the fused kernel ``icml26.kernels.token_stats``.

Scores of different surrogates live on different scales, so each surrogate's scores are
z-normalised with the mean and standard deviation of its scores on human reference text
before a router mixes them (the spec's pitfall: skipping it mixes scales in one AUROC).
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.kernels.token_stats import token_stats

CRITERIA = ("fast_detect", "likelihood")


def criteria(model, texts: np.ndarray, start: int, impl: str = "auto",
             batch: int = 256, device=None) -> np.ndarray:
    """Every criterion of :data:`CRITERIA` for ``texts [B, L]`` under ``model``, scored on the
    positions ``start .. L-1`` (one forward pass): ``[B, len(CRITERIA)]`` float64. The
    statistics are computed on ``device`` (default: where the model's log-probs are), so
    ``impl="auto"`` takes the Triton kernel on CUDA."""
    texts = np.asarray(texts)
    if texts.ndim != 2 or not 1 <= start < texts.shape[1]:
        raise ValueError(f"texts must be [B, L] and start in [1, L-1], got shape "
                         f"{texts.shape} and start {start}")
    out = []
    for lo in range(0, len(texts), batch):
        x = texts[lo: lo + batch]
        lp = model.log_probs(x)[:, start - 1:]  # position t predicts x[t + 1]
        if device is not None:  # an n-gram's table is numpy: its log-probs move here
            lp = lp.to(device)
        b, t, v = lp.shape
        y = torch.as_tensor(x[:, start:].astype(np.int64)).reshape(-1).to(lp.device)
        logp, mean, var = (s.reshape(b, t) for s in token_stats(lp.reshape(-1, v), y,
                                                                 impl=impl))
        fast = (logp.sum(1) - mean.sum(1)) / var.sum(1).clamp_min(1e-12).sqrt()
        out.append(torch.stack([fast, logp.mean(1)], 1))
    return torch.cat(out).double().cpu().numpy() if out else np.zeros((0, len(CRITERIA)))


def criterion(model, texts: np.ndarray, start: int, name: str = "fast_detect",
              impl: str = "auto") -> np.ndarray:
    """Scores ``[B]`` of one criterion (``"fast_detect"`` or ``"likelihood"``)."""
    if name not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {name!r}")
    return criteria(model, texts, start, impl)[:, CRITERIA.index(name)]


def znorm_params(ref_scores: np.ndarray) -> tuple[float, float]:
    """``(mean, std)`` of a surrogate's scores on human reference text."""
    ref = np.asarray(ref_scores, dtype=float)
    return float(ref.mean()), float(max(ref.std(), 1e-9))


def auroc(human: np.ndarray, machine: np.ndarray) -> float:
    """P(machine score > human score) + 0.5 P(tie): the Mann-Whitney AUROC (machine = 1)."""
    h, m = np.asarray(human, float), np.asarray(machine, float)
    if len(h) == 0 or len(m) == 0:
        raise ValueError("auroc needs at least one human and one machine score")
    allv = np.concatenate([h, m])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    ranks[order] = np.arange(1, len(allv) + 1)
    # average ranks over ties
    uniq, inv, counts = np.unique(allv, return_inverse=True, return_counts=True)
    sums = np.bincount(inv, weights=ranks)
    ranks = (sums / counts)[inv]
    r_m = ranks[len(h):].sum()
    return float((r_m - len(m) * (len(m) + 1) / 2) / (len(h) * len(m)))
