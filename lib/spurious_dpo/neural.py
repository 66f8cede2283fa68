"""F4 of ``icml26.spurious_dpo``: batched 2-layer MLP rewards trained by DPO (+ ties).

A log-linear policy whose feature map is learnt: ``r(phi)`` is an MLP over one response's raw
``(c, s1, s2)``; DPO acts on ``r(phi_w) - r(phi_l)``. Spurious sensitivity is measured by
central finite differences. Nothing runs at import.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from icml26.spurious_dpo.model import (
    SpuriousConfig,
    check_n,
    check_tie_fraction,
    n_ties_for,
    substream,
    w_star,
)


def response_features(n: int, m: float, rho: float, sigma: float, kappa: float, d_c: int,
                      gen: torch.Generator, replicates: int = 1, tie: bool = False,
                      dtype=torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """Raw per-response features ``phi = (c, s1, s2)`` of ``n`` pairs: ``(first, second)``,
    each ``[R, n, d_c + 2]``; for preferences the first is the winner.

    ``c ~ N(0, I/2)`` per response (so ``dc ~ N(0, I)``), ``s1 = rho u + (m/2) t + sigma/sqrt2
    eps`` with ``t = +1`` for the chosen response, ``s2 = rho u + sigma/sqrt2 eps``: their
    differences follow the pair model exactly. Ties move both responses along ``w*`` to the
    pair's mean utility (``du = 0``) and give ``t = +-1`` at random.
    """
    check_n(n)
    w = w_star(d_c).to(dtype)
    c = torch.randn(replicates, 2, n, d_c, generator=gen, dtype=dtype) / math.sqrt(2)
    if tie:
        du = (c[:, 0] - c[:, 1]) @ w
        c = torch.stack([c[:, 0] - du[..., None] * w / 2, c[:, 1] + du[..., None] * w / 2], 1)
        first = torch.rand(replicates, n, generator=gen) < 0.5
    else:
        du = (c[:, 0] - c[:, 1]) @ w
        first = torch.rand(replicates, n, generator=gen, dtype=dtype) < torch.sigmoid(kappa * du)
    u = c @ w
    t = torch.where(first, 1.0, -1.0).to(dtype)
    t = torch.stack([t, -t], 1)
    eps = torch.randn(replicates, 2, n, 2, generator=gen, dtype=dtype) * sigma / math.sqrt(2)
    phi = torch.cat([c, (m / 2 * t + rho * u + eps[..., 0])[..., None],
                     (rho * u + eps[..., 1])[..., None]], -1)  # [R, 2, n, p]
    if tie:
        return phi[:, 0], phi[:, 1]
    win = torch.where(first[..., None], phi[:, 0], phi[:, 1])
    lose = torch.where(first[..., None], phi[:, 1], phi[:, 0])
    return win, lose


NEURAL_TEST_PAIRS = 5_000  # held-out preference pairs for the MLPs' test loss


class BatchedMLP(torch.nn.Module):
    """``B`` independent 2-layer tanh MLP rewards ``r_b(phi)``: ``[B, n, p] -> [B, n]``."""

    def __init__(self, batch: int, dim: int, hidden: int, gen: torch.Generator,
                 dtype=torch.float32):
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(batch, dim, hidden, generator=gen,
                                                 dtype=dtype) / math.sqrt(dim))
        self.b1 = torch.nn.Parameter(torch.zeros(batch, 1, hidden, dtype=dtype))
        self.w2 = torch.nn.Parameter(torch.randn(batch, hidden, 1, generator=gen,
                                                 dtype=dtype) / math.sqrt(hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (torch.tanh(x @ self.w1 + self.b1) @ self.w2)[..., 0]


def sensitivity(model: BatchedMLP, x: torch.Tensor, direction: torch.Tensor,
                h: float = 1e-2) -> torch.Tensor:
    """``E |d r / d direction|`` by central finite differences over rows of ``x [B, n, p]``."""
    with torch.no_grad():
        d = direction.to(x.dtype)
        return ((model(x + h * d) - model(x - h * d)) / (2 * h)).abs().mean(-1)


def train_neural(cfg: SpuriousConfig, seed: int = 0, tie_fractions: Sequence[float] = (0.0,),
                 device: str | torch.device = "cpu") -> dict:
    """F4: batched MLP rewards trained by DPO (+ symmetric ties) with full-batch Adam.

    One network per (tie fraction, replicate), all in one tensor program; networks of the
    same replicate share data and initialisation, so the comparison is paired. Returns
    spurious (``s1``, ``s2``) and causal (along ``w*``) sensitivities ``[F, R]`` and losses.
    """
    cfg.validate()
    for f in tie_fractions:
        check_tie_fraction(f)
    g = substream(seed, 40)
    r, nf = cfg.mlp_replicates, len(tie_fractions)
    win, lose = response_features(cfg.mlp_pairs, cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa,
                                  cfg.d_c, g, r)
    n_tie = [n_ties_for(cfg.mlp_pairs, f) for f in tie_fractions]
    ta, tb = response_features(max(max(n_tie), 2), cfg.m, cfg.rho, cfg.sigma_eps, cfg.kappa,
                               cfg.d_c, g, r, tie=True)
    test_w, test_l = response_features(NEURAL_TEST_PAIRS, cfg.m, cfg.rho, cfg.sigma_eps,
                                       cfg.kappa, cfg.d_c, g, r)
    p = cfg.d_c + 2
    init = BatchedMLP(r, p, cfg.mlp_hidden, g)
    model = BatchedMLP(nf * r, p, cfg.mlp_hidden, g).to(device)
    with torch.no_grad():  # the same initialisation for every tie fraction of a replicate
        for mine, theirs in zip(model.parameters(), init.parameters()):
            mine.copy_(theirs.repeat(nf, 1, 1))
    win, lose, ta, tb = (t.repeat(nf, 1, 1).to(device) for t in (win, lose, ta, tb))
    tie_w = (torch.arange(ta.shape[1])[None, :] <
             torch.tensor(n_tie).repeat_interleave(r)[:, None]).float().to(device)
    total = (cfg.mlp_pairs + tie_w.sum(1)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.mlp_lr)
    beta = cfg.beta
    losses = []
    x_all = torch.cat([win, lose, ta, tb], 1)
    n, nt = win.shape[1], ta.shape[1]
    for _ in range(cfg.mlp_steps):
        opt.zero_grad()
        r_all = model(x_all)
        z = beta * (r_all[:, :n] - r_all[:, n:2 * n])
        zt = beta * (r_all[:, 2 * n:2 * n + nt] - r_all[:, 2 * n + nt:])
        tie_nll = 0.5 * (F.softplus(zt) + F.softplus(-zt))  # the symmetric tie loss
        per = (F.softplus(-z).sum(1) + (tie_w * tie_nll).sum(1)) / total
        per.sum().backward()
        opt.step()
        losses.append(per.detach())
    with torch.no_grad():
        test_w, test_l = (t.repeat(nf, 1, 1).to(device) for t in (test_w, test_l))
        test_loss = F.softplus(-beta * (model(test_w) - model(test_l))).mean(1)
    x = torch.cat([win, lose], 1)
    e_s1 = torch.zeros(p)
    e_s1[cfg.d_c] = 1.0
    e_s2 = torch.zeros(p)
    e_s2[cfg.d_c + 1] = 1.0
    e_c = torch.zeros(p)
    e_c[: cfg.d_c] = w_star(cfg.d_c).float()
    shape = (nf, r)
    return {"tie_fractions": list(tie_fractions),
            "sens_s1": sensitivity(model, x, e_s1.to(device)).cpu().reshape(shape),
            "sens_s2": sensitivity(model, x, e_s2.to(device)).cpu().reshape(shape),
            "sens_causal": sensitivity(model, x, e_c.to(device)).cpu().reshape(shape),
            "final_loss": losses[-1].cpu().reshape(shape),
            "test_loss": test_loss.cpu().reshape(shape),
            "loss_curve": torch.stack(losses).cpu().reshape(-1, *shape)}
