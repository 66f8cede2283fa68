"""Inputs, the circular 1-D conv segmenter, the COVAL losses, training and point-level metrics.

Input per beam (``encode``): the log range ``log r`` (metres) and, unless ``visibility=False``,
free-space carving channels on ``n_bins`` log-spaced range bins: ``free`` (the beam passed the
whole bin), ``hit`` (its return lies in the bin) and ``unknown`` (behind the return: occluded).
A beam without a return carves every bin free.  These derive from the one noisy scan; the
second design (issue 35) adds ``sweep_channels``: what the other sweeps of a moving sensor saw
of the cells this scan's returns occlude.

Losses [derived from the abstract]::

    L = L_seg + w_vvcr L_VVCR + w_vicc L_VICC
    L_seg  = BCE(seg(x_f), y)                         on beams with a return
    L_VVCR = mean (rec(x_f) - (log r_cf - log r_f))^2 on every beam with a return: the
             target is the depth of the occlusion void behind the beam, in log range
             (> 0 on the anomaly's returns, where the counterfactual sees the background;
             exactly 0 everywhere else: "no void here").  Issue 47: the first loss took it
             on the anomaly's returns only (``vvcr_beams="anomaly"``), so the head never
             learned to tell a void from none
    L_VICC = mean 1 - cos(h(x_f), sg[h(x_cf)])         on beams outside the anomaly's shadow
             (visible in both scans; ``sg`` = stop-gradient)

``x_f`` / ``x_cf`` encode the factual / counterfactual scans, ``h`` is the last hidden layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from icml26.common import generator


def bin_edges(n_bins: int, max_range: float, near: float = 0.5) -> torch.Tensor:
    """``n_bins + 1`` log-spaced range-bin edges from 0 (first edge) to ``max_range``."""
    inner = torch.logspace(math.log10(near), math.log10(max_range), n_bins)
    return torch.cat([torch.zeros(1), inner])


def encode(ranges: torch.Tensor, valid: torch.Tensor, max_range: float, n_bins: int,
           visibility: bool = True, others: dict | None = None,
           sweep_cells: str = "occluded") -> torch.Tensor:
    """``[B, R]`` ranges and returns -> ``[B, 1 (+ 3 n_bins (+ 2 n_bins)), R]`` network input.

    ``others`` (the multi-sweep design): the other sweeps of a moving sensor, ``{"ranges",
    "valid": [B, K-1, R], "poses": [B, K-1, 2]}`` (poses relative to this sweep's sensor), add
    ``sweep_channels``: on the cells this sweep's return occludes (``sweep_cells="occluded"``,
    its void; in front of the return a static scene shows nothing new) or on every cell
    (``"all"``, a diagnosis variant)."""
    x = [torch.log(ranges.clamp(min=1e-3))[:, None]]
    if visibility:
        e = bin_edges(n_bins, max_range).to(ranges.device)
        lo, hi = e[:-1][None, :, None], e[1:][None, :, None]
        r = torch.where(valid, ranges, torch.full_like(ranges, math.inf))[:, None]
        free = (hi <= r).float()
        hit = ((lo <= r) & (r < hi)).float()
        x += [free, hit, 1.0 - free - hit]
        if others is not None:
            seen = sweep_channels(others["ranges"], others["valid"], others["poses"],
                                  max_range, n_bins)
            x.append(seen * (1.0 - free - hit).repeat(1, 2, 1) if sweep_cells == "occluded"
                     else seen)
    return torch.cat(x, 1)


def sweep_channels(ranges: torch.Tensor, valid: torch.Tensor, poses: torch.Tensor,
                   max_range: float, n_bins: int, chunk: int = 64) -> torch.Tensor:
    """What the other sweeps saw of this sweep's cells: ``[B, 2 n_bins, R]``.

    A cell is the centre of range bin ``b`` on beam ``i`` of this sweep (sensor at the
    origin).  Sweep ``k`` (sensor at ``poses[:, k]``) looks at it along its nearest beam ``j``
    at distance ``d``: it saw the cell *free* if ``d < r_kj - w_b / 2`` (its ray passed it;
    a beam without a return carves up to ``max_range``) and *hit* if it has a return with
    ``|d - r_kj| <= w_b / 2`` (``w_b``: the bin's width).  Channels: the fraction of the other
    sweeps that saw each cell free, then hit.  Behind this sweep's return (its occlusion
    void) these carry what a single range image cannot: which occluded cells are empty.
    """
    b, k, n = ranges.shape
    dev = ranges.device
    e = bin_edges(n_bins, max_range).to(dev)
    centre = torch.cat([e[1:2] / 2, (e[1:-1] * e[2:]).sqrt()])  # [nb]
    half = (e[1:] - e[:-1]) / 2
    theta = (torch.arange(n, dtype=torch.float64, device=dev) + 0.5) * (2 * math.pi / n)
    cell = centre[:, None, None] * torch.stack([theta.cos(), theta.sin()], -1).float()
    out = []
    for s in range(0, b, chunk):
        r = torch.where(valid[s:s + chunk], ranges[s:s + chunk],
                        torch.full_like(ranges[s:s + chunk], math.inf))
        q = cell[None, None] - poses[s:s + chunk, :, None, None]  # [b, K-1, nb, R, 2]
        d = q.norm(dim=-1)
        ang = torch.remainder(torch.atan2(q[..., 1], q[..., 0]), 2 * math.pi)
        j = (ang * (n / (2 * math.pi))).long().clamp(0, n - 1)
        rj = torch.gather(r, 2, j.flatten(2)).view_as(d)  # [b, K-1, nb, R]
        w = half[None, None, :, None]
        free = (d < rj.clamp(max=max_range) - w).float().mean(1)
        hit = ((d - rj).abs() <= w).float().mean(1)
        out.append(torch.cat([free, hit], 1))
    return torch.cat(out)


class CircularConvNet(nn.Module):
    """Residual dilated circular 1-D convolutions over beams; a segmentation head (anomaly
    logit) and a reconstruction head (counterfactual range). ``[B, C_in, R] -> [B, R] x 2``."""

    def __init__(self, in_ch: int, hidden: int = 32, kernel: int = 5,
                 dilations: tuple[int, ...] = (1, 2, 4, 8, 1)):
        super().__init__()
        self.inp = nn.Conv1d(in_ch, hidden, 1)
        self.convs = nn.ModuleList(
            nn.Conv1d(hidden, hidden, kernel, padding=d * (kernel // 2), dilation=d,
                      padding_mode="circular") for d in dilations)
        self.seg = nn.Conv1d(hidden, 1, 1)
        self.rec = nn.Conv1d(hidden, 1, 1)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for conv in self.convs:
            h = h + F.gelu(conv(h))
        return h

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.features(x)
        return self.seg(h)[:, 0], self.rec(h)[:, 0], h


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults: calibrated on CPU for the quick scale (see the notebook)."""

    w_vvcr: float = 0.0
    w_vicc: float = 0.0
    visibility: bool = True
    hidden: int = 24
    steps: int = 300
    batch: int = 16
    lr: float = 3e-3
    pos_weight: float = 4.0
    vvcr_target: str = "counterfactual"  # "factual": the mutation (nothing to reconstruct)
    vvcr_beams: str = "valid"  # every beam with a return; "anomaly": the issue-35 loss


def vvcr_loss(rec: torch.Tensor, target: torch.Tensor, valid: torch.Tensor,
              label: torch.Tensor, beams: str = "valid") -> torch.Tensor | None:
    """L_VVCR over ``[B, R]`` predictions: the squared error against the void depth on
    every beam with a return (``beams="valid"``) or, the issue-35 loss, on the anomaly's
    returns only (``"anomaly"``; the head is never told "no void here").  ``None`` when no
    beam qualifies."""
    if beams not in ("valid", "anomaly"):
        raise ValueError(f"vvcr_beams must be 'valid' or 'anomaly', got {beams!r}")
    on = valid if beams == "valid" else label
    return F.mse_loss(rec[on], target[on]) if on.any() else None


ABLATIONS = {"seg-only": (0.0, 0.0), "+VVCR": (1.0, 0.0), "+VICC": (0.0, 1.0),
             "full COVAL": (1.0, 1.0)}


def train(data: dict, cfg: TrainConfig, seed: int) -> CircularConvNet:
    """Train on ``data`` (from ``experiments.scan_data``: inputs, labels, masks, targets) on
    the device the data lives on (parameters initialised and batches drawn on the CPU)."""
    torch.manual_seed(seed)  # parameter init; batches come from the seeded generator below
    g = generator(seed)
    x_f = data["x_f"] if cfg.visibility else data["x_f"][:, :1]
    x_cf = data["x_cf"] if cfg.visibility else data["x_cf"][:, :1]
    dev = x_f.device
    net = CircularConvNet(x_f.shape[1], cfg.hidden).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, cfg.steps)
    pw = torch.tensor(cfg.pos_weight).to(dev)
    target = data["rec_cf"] if cfg.vvcr_target == "counterfactual" else data["rec_f"]
    n = x_f.shape[0]
    for _ in range(cfg.steps):
        idx = torch.randint(0, n, (cfg.batch,), generator=g).to(dev)
        logit, rec, h = net(x_f[idx])
        valid, y = data["valid"][idx], data["label"][idx]
        loss = F.binary_cross_entropy_with_logits(logit[valid], y[valid].float(),
                                                  pos_weight=pw)
        if cfg.w_vvcr:
            rec_loss = vvcr_loss(rec, target[idx], valid, y, cfg.vvcr_beams)
            if rec_loss is not None:
                loss = loss + cfg.w_vvcr * rec_loss
        if cfg.w_vicc:
            vis = ~data["shadow"][idx]
            with torch.no_grad():
                h_cf = net.features(x_cf[idx])
            diff = 1.0 - F.cosine_similarity(h, h_cf, dim=1)  # [B, R]
            loss = loss + cfg.w_vicc * diff[vis].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return net.eval()


@torch.no_grad()
def scores(net: CircularConvNet, x: torch.Tensor, visibility: bool = True,
           chunk: int = 64, head: int = 0) -> torch.Tensor:
    """Anomaly logits ``[B, R]`` (``head=1``: the VVCR head's void depth instead)."""
    x = x if visibility else x[:, :1]
    return torch.cat([net(x[i:i + chunk])[head] for i in range(0, x.shape[0], chunk)])


def average_precision(score: torch.Tensor, label: torch.Tensor) -> float:
    """Step-wise AP (as scikit-learn's): sum over positives of precision at their rank."""
    order = torch.argsort(score, descending=True, stable=True)
    y = label[order].double()
    if y.sum() == 0:
        return math.nan
    s = score[order]
    tp = torch.cumsum(y, 0)
    last = torch.ones_like(y, dtype=torch.bool)  # ties share one threshold: last of each run
    last[:-1] = s[1:] != s[:-1]
    tp_t, k_t = tp[last], torch.arange(1, len(y) + 1, dtype=torch.float64)[last]
    recall = tp_t / tp_t[-1]
    prev = torch.cat([torch.zeros(1, dtype=torch.float64), recall[:-1]])
    return float(((recall - prev) * tp_t / k_t).sum())


def auroc(score: torch.Tensor, label: torch.Tensor) -> float:
    """Area under the ROC curve (Mann-Whitney U with tied ranks averaged)."""
    y = label.bool()
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    s = score.double()
    order = torch.argsort(s, stable=True)
    ranks = torch.empty_like(s)
    ranks[order] = torch.arange(1, len(s) + 1, dtype=torch.float64)
    uniq, inv = torch.unique(s, return_inverse=True)
    mean_rank = torch.zeros(len(uniq), dtype=torch.float64).index_add_(0, inv, ranks)
    mean_rank /= torch.bincount(inv, minlength=len(uniq)).double()
    return float((mean_rank[inv][y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
