"""The width-reduced student (EDistill), its projection initialisations and effective rank.

The student keeps the teacher's weights frozen and learns projections of them (the LRC style
of efficient distillation: student weights are trainable projections of teacher weights).
Its residual stream has width ``d' < d``; every weight that reads the residual stream is
``W diag(g) P`` (the teacher's LayerNorm gain folded in) and every weight that writes it is
``W P`` on the output side, so that with ``P`` of orthonormal columns the student is the
teacher restricted to the subspace ``span(P)``: ``s = h P``. Each read and write site has its
own ``P`` (``2 + 4 L`` matrices ``[d, d']``), all initialised to the same matrix, then tuned
independently by distillation. Attention heads and the MLP keep the teacher's inner widths.

Initialisations of ``P`` (``INITS``):

* ``gaussian``: i.i.d. ``N(0, 1/d)`` entries, the base method's random init; its singular
  values spread as Marchenko-Pastur, ``(1 +- sqrt(d'/d))`` at large ``d``, so its condition
  number is about 5.8 at ``d'/d = 1/2``;
* ``red``: activation-aware channel selection, ``P = [e_{i_1} .. e_{i_d'}]`` with ``i_j`` the
  top-``d'`` channels of the teacher's residual stream by ``E[h^2]`` (summed over layers);
  every singular value is 1;
* ``random_select``: ``d'`` channels chosen uniformly at random (the mutation);
* ``orthogonal``: the Q factor of a Gaussian matrix (flat spectrum, random basis).

``erank(H) = exp(-sum p_i log p_i)``, ``p_i = sigma_i / sum_j sigma_j`` (the paper's eRank).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from icml26.common import check_choice, check_int
from icml26.tinylm import TinyLM

INITS = ("gaussian", "red", "random_select", "orthogonal")


def erank(h: torch.Tensor) -> float:
    """Effective rank of the rows of ``h [..., d]`` (flattened to ``[N, d]``)."""
    s = torch.linalg.svdvals(h.reshape(-1, h.shape[-1]).double())
    p = s / s.sum()
    p = p[p > 0]
    return float(torch.exp(-(p * p.log()).sum()))


def condition_number(p: torch.Tensor) -> float:
    s = torch.linalg.svdvals(p.double())
    return float(s.max() / s.min())


def channel_energy(hidden: list[torch.Tensor]) -> torch.Tensor:
    """``E[h^2]`` per channel ``[d]``, summed over the residual streams in ``hidden``."""
    return sum((h.reshape(-1, h.shape[-1]) ** 2).mean(0) for h in hidden)


def selection(channels: torch.Tensor, d: int) -> torch.Tensor:
    """The selection matrix ``[d, len(channels)]`` with columns ``e_{channels[j]}``."""
    p = torch.zeros(d, len(channels))
    p[channels, torch.arange(len(channels))] = 1.0
    return p


def init_projection(init: str, d: int, d_small: int, energy: torch.Tensor | None,
                    gen: torch.Generator) -> torch.Tensor:
    """The projection ``P [d, d_small]`` of ``init`` (``energy``: ``E[h^2]`` for ``red``)."""
    check_choice("init", init, INITS)
    check_int("d_small", d_small, 1, d)
    if init == "gaussian":
        return torch.randn(d, d_small, generator=gen) / d ** 0.5
    if init == "orthogonal":
        q, r = torch.linalg.qr(torch.randn(d, d_small, generator=gen))
        return q * torch.sign(torch.diagonal(r))
    if init == "random_select":
        return selection(torch.randperm(d, generator=gen)[:d_small].sort().values, d)
    if energy is None or energy.shape != (d,):
        raise ValueError(f"init 'red' needs the teacher's channel energy E[h^2] of shape ({d},)")
    return selection(energy.topk(d_small).indices.sort().values, d)


class ProjectedStudent(nn.Module):
    """``logits, hidden = student(idx)``; ``hidden[l] [B, T, d']`` after block ``l``.

    ``teacher``'s weights are copied (folded with its LayerNorm gains) and frozen; only the
    projections ``self.proj`` are trained."""

    def __init__(self, teacher: TinyLM, p0: torch.Tensor):
        super().__init__()
        d = teacher.cfg.d_model
        if p0.shape[0] != d:
            raise ValueError(f"projection must have {d} rows, got {tuple(p0.shape)}")
        self.d_small, self.heads = p0.shape[1], teacher.cfg.n_heads
        with torch.no_grad():
            frozen = {"tok": teacher.tok.weight, "pos": teacher.pos.weight}
            for i, b in enumerate(teacher.blocks):
                for name, ln, lin in (("attn", b.ln1, b.qkv), ("mlp", b.ln2, b.fc)):
                    frozen[f"{name}{i}_rw"] = lin.weight * ln.weight
                    frozen[f"{name}{i}_rb"] = lin.bias + lin.weight @ ln.bias
                for name, lin in (("attn", b.proj), ("mlp", b.out)):
                    frozen[f"{name}{i}_ww"], frozen[f"{name}{i}_wb"] = lin.weight, lin.bias
            frozen["head_w"] = teacher.head.weight * teacher.ln_f.weight
            frozen["head_b"] = teacher.head.weight @ teacher.ln_f.bias
        for k, v in frozen.items():
            self.register_buffer(k, v.detach().clone())
        sites = ["emb", "head"] + [f"{n}{i}_{rw}" for i in range(len(teacher.blocks))
                                   for n in ("attn", "mlp") for rw in ("r", "w")]
        self.proj = nn.ParameterDict({s: nn.Parameter(p0.clone()) for s in sites})
        self.n_layers = len(teacher.blocks)

    def _read(self, s: torch.Tensor, site: str) -> torch.Tensor:
        n = F.layer_norm(s, (self.d_small,))
        return n @ (getattr(self, site + "_rw") @ self.proj[site + "_r"]).T + getattr(
            self, site + "_rb")

    def _write(self, y: torch.Tensor, site: str) -> torch.Tensor:
        return (y @ getattr(self, site + "_ww").T + getattr(self, site + "_wb")) @ self.proj[
            site + "_w"]

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        t = idx.shape[1]
        s = (self.tok[idx] + self.pos[:t]) @ self.proj["emb"]
        hidden = []
        for i in range(self.n_layers):
            q, k, v = self._read(s, f"attn{i}").chunk(3, dim=-1)
            b, _, inner = q.shape
            q, k, v = (z.view(b, t, self.heads, inner // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            s = s + self._write(y.transpose(1, 2).reshape(b, t, inner), f"attn{i}")
            s = s + self._write(F.gelu(self._read(s, f"mlp{i}")), f"mlp{i}")
            hidden.append(s)
        n = F.layer_norm(s, (self.d_small,))
        return n @ (self.head_w @ self.proj["head"]).T + self.head_b, hidden
