"""The population-level surrogate DP over truncated probability generating functions.

``V_t(b, m) = max_{0 <= s <= b} E R(m, s) + discount * E V_{t+1}(b - s, min(R, b - s))``,
``V_{T+1} = 0``, ``V_t(b, 0) = 0``: ``s`` coupons spread evenly over ``m`` i.i.d. people, the
recruits' PGF truncated at ``b - s`` with the tail mass lumped into the last term. Also the
exact evaluation of a fixed spend table and a plain-Python oracle of the same DP.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from icml26.common import check_int
from icml26.kernels.pgf import pgf_mul, pgf_pow_table

from .model import DTYPE, marginals, validate_pmf


@dataclass(frozen=True)
class DPResult:
    """Tables of the surrogate DP, indexed ``[t, b, m]`` with ``t = 0..T-1``.

    ``value[t, b, m]`` is ``V_{t+1}(b, m)``; ``spend[t, b, m]`` the optimal coupons now.
    """

    value: torch.Tensor  # [T, B+1, B+1]
    spend: torch.Tensor  # [T, B+1, B+1] (int64)
    expected_now: torch.Tensor  # [B+1 (m), B+1 (s)]  E R(m, s)
    recruit_pmf: torch.Tensor  # [B+1 (m), B+1 (s), B+1]  pmf of min(R, B)

    def v(self, budget: int, m0: int, t: int = 0) -> float:
        return float(self.value[t, budget, min(m0, budget)])


def recruit_tables(pmf: torch.Tensor, budget: int, impl: str = "auto"):
    """``E R(m, s)`` and the pmf of ``min(R, budget)`` for every frontier size and spend.

    ``s`` coupons over ``m`` exchangeable people: ``r = s mod m`` people get ``q + 1`` and
    ``m - r`` get ``q = s // m`` (the greedy split). ``R`` is a sum of i.i.d. ``min(k, C)``
    terms, so its truncated PGF is a product of the convolution powers
    ``P[k][n] = pmf of min(k,C)_1 + ... + min(k,C)_n`` (one batched product per (m, s)).
    Returns ``([B+1, B+1], [B+1, B+1, B+1])`` indexed ``[m, s(, r)]``.
    """
    pmf = pmf.to(DTYPE)
    dev = pmf.device
    k = pmf.numel() - 1
    length = budget + 1
    # pmf of min(kk, C) for kk = 0..K, lumped at `budget` (so also valid when budget < K)
    kk = torch.arange(k + 1, device=dev)
    per_person = torch.zeros(k + 1, length, dtype=DTYPE, device=dev)
    for c in range(k + 1):
        per_person[:, :].index_put_((kk, kk.clamp(max=min(c, budget))),
                                    pmf[c].expand(k + 1), accumulate=True)
    powers = pgf_pow_table(per_person, budget, impl=impl)  # [K+1, B+1, B+1]
    ess = torch.cat([torch.zeros(1, dtype=DTYPE, device=dev),
                     marginals(pmf).cumsum(0)])  # E min(k,C)

    m = torch.arange(1, length, device=dev)[:, None].expand(-1, length)  # [B, B+1]
    s = torch.arange(length, device=dev)[None, :].expand(budget, -1)
    q, r = s // m, s % m
    lo, hi = q.clamp(max=k), (q + 1).clamp(max=k)
    dist = pgf_mul(powers[lo, m - r].reshape(-1, length), powers[hi, r].reshape(-1, length),
                   impl=impl).reshape(budget, length, length)
    exp_now = (m - r) * ess[lo] + r * ess[hi]
    dead = torch.zeros(1, length, length, dtype=DTYPE, device=dev)
    dead[..., 0] = 1.0  # m = 0: nobody to recruit
    return (torch.cat([torch.zeros(1, length, dtype=DTYPE, device=dev), exp_now.to(DTYPE)]),
            torch.cat([dead, dist]))


def continuation_values(v_next: torch.Tensor, tail: str = "lump") -> torch.Tensor:
    """``W[b', r] = E-value of reaching (b', frontier r)``: ``[B+1, B+1] -> [B+1, B+1]``.

    Truncating the PGF at ``b'`` with the tail lumped means every ``r >= b'`` is worth
    ``V(b', b')``: ``W[b', r] = V(b', min(r, b'))``. ``tail="drop"`` is the pitfall that throws
    that mass away (``W = 0`` for ``r > b'``); it exists for the mutation test.
    """
    size = v_next.shape[0]
    b = torch.arange(size, device=v_next.device)[:, None]
    r = torch.arange(size, device=v_next.device)[None, :]
    capped = v_next.gather(1, torch.minimum(r, b).expand(size, size))
    if tail == "lump":
        return capped
    if tail == "drop":
        return torch.where(r <= b, capped, torch.zeros_like(capped))
    raise ValueError(f"tail must be 'lump' or 'drop', got {tail!r}")


def truncate_pgf(pmf: torch.Tensor, level: int, tail: str = "lump") -> torch.Tensor:
    """Truncate a pmf over ``0..n`` at ``level``: ``[..., n+1] -> [..., level+1]``.

    ``lump`` keeps the total mass (last entry ``P(R >= level)``); ``drop`` loses the tail.
    """
    head = pmf[..., :level].clone()
    rest = pmf[..., level:].sum(-1, keepdim=True)
    if tail == "drop":
        rest = pmf[..., level : level + 1]
    elif tail != "lump":
        raise ValueError(f"tail must be 'lump' or 'drop', got {tail!r}")
    return torch.cat([head, rest], -1)


def _q_values(exp_now, dist, v_next, discount, tail):
    """``Q[b, m, s] = E R(m,s) + discount * E W(b-s, R)`` with ``s > b`` set to ``-inf``."""
    size = exp_now.shape[0]
    w = continuation_values(v_next, tail)  # [b', r]
    cont = torch.einsum("msr,pr->msp", dist, w)  # [m, s, b']
    b = torch.arange(size, device=exp_now.device)[:, None]
    s = torch.arange(size, device=exp_now.device)[None, :]
    cont_bs = cont[:, s.expand(size, size), (b - s).clamp(min=0)]  # [m, b, s]
    q = exp_now[:, None, :] + discount * cont_bs
    q = q.permute(1, 0, 2)  # [b, m, s]
    return q.masked_fill((s > b)[:, None, :].expand_as(q), -math.inf)


def surrogate_dp(pmf: Sequence[float] | torch.Tensor, budget: int, rounds: int,
                 discount: float = 1.0, allow_save: bool = True, tail: str = "lump",
                 impl: str = "auto", device: str | torch.device | None = None) -> DPResult:
    """Exact DP over truncated PGFs for the homogeneous surrogate ``V_t(b, m)``.

    Tables cover every ``b <= budget`` and ``m <= budget`` (a larger frontier is capped at
    the budget: only ``b`` people can be served). ``allow_save=False`` forces ``s = b`` (the
    spend-everything pitfall); ``tail="drop"`` discards truncated mass (the other pitfall).
    Cost: ``O(K B)`` products for the powers, one batched product per (m, s), then
    ``O(T B^4)`` multiply-adds for the expectations. The tables live on ``device`` (default:
    the pmf's), so ``impl="auto"`` runs the PGF products through the Triton kernel on CUDA.
    """
    pmf = validate_pmf(pmf)
    if device is not None:
        pmf = pmf.to(device)
    check_int("budget", budget, 0)
    check_int("rounds", rounds, 1)
    if not 0 < discount <= 1:
        raise ValueError(f"discount must be in (0, 1], got {discount}")
    exp_now, dist = recruit_tables(pmf, budget, impl=impl)
    size = budget + 1
    v_next = torch.zeros(size, size, dtype=DTYPE, device=pmf.device)
    values, spends = [], []
    s = torch.arange(size, device=pmf.device)
    for _ in range(rounds):
        q = _q_values(exp_now, dist, v_next, discount, tail)
        q[:, 0, 1:] = -math.inf  # an empty frontier can receive no coupons
        if not allow_save:  # every coupon left must go out now (m >= 1)
            not_all = (s[None, :] != s[:, None])[:, None, :]  # [b, 1, s]: s != b
            q[:, 1:, :] = q[:, 1:, :].masked_fill(not_all, -math.inf)
        v, a = q.max(dim=-1)  # first maximiser: the smallest optimal spend
        values.append(v)
        spends.append(a)
        v_next = v
    return DPResult(torch.stack(values[::-1]), torch.stack(spends[::-1]), exp_now, dist)


def evaluate_policy(spend: torch.Tensor, pmf: torch.Tensor | None = None,
                    discount: float = 1.0, impl: str = "auto",
                    tables: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """Exact value ``[T, B+1, B+1]`` of a fixed spend table under a homogeneous pmf.

    ``tables`` reuses ``(expected_now, recruit_pmf)`` of a :class:`DPResult` for the same
    pmf instead of recomputing them from ``pmf``.
    """
    rounds, size, _ = spend.shape
    if tables is None:
        if pmf is None:
            raise ValueError("evaluate_policy needs pmf or tables")
        tables = recruit_tables(validate_pmf(pmf).to(spend.device), size - 1, impl=impl)
    exp_now, dist = tables
    v_next = torch.zeros(size, size, dtype=DTYPE, device=exp_now.device)
    out = []
    for t in reversed(range(rounds)):
        q = _q_values(exp_now, dist, v_next, discount, "lump")
        v_next = q.gather(-1, spend[t][..., None]).squeeze(-1)
        out.append(v_next)
    return torch.stack(out[::-1])


def surrogate_dp_reference(pmf: Sequence[float], budget: int, rounds: int,
                           discount: float = 1.0) -> list[list[list[float]]]:
    """The same DP in plain Python loops (the oracle for tests and the speed benchmark)."""
    p = [float(x) for x in validate_pmf(pmf)]
    k = len(p) - 1

    def conv(a, b, cap):
        out = [0.0] * (cap + 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                out[min(i + j, cap)] += x * y
        return out

    def person(kk):
        d = [0.0] * (min(kk, k) + 1)
        for c, pc in enumerate(p):
            d[min(c, kk)] += pc
        return d

    v_next = [[0.0] * (budget + 1) for _ in range(budget + 1)]
    tables = []
    for _ in range(rounds):
        v = [[0.0] * (budget + 1) for _ in range(budget + 1)]
        for b in range(budget + 1):
            for m in range(1, budget + 1):
                best = -math.inf
                for s in range(b + 1):
                    q, r = divmod(s, m)
                    dist = [1.0]
                    for kk in [q] * (m - r) + [q + 1] * r:
                        dist = conv(dist, person(kk), b - s)
                    now = sum(i * x for i, x in enumerate(person(q))) * (m - r) + \
                        sum(i * x for i, x in enumerate(person(q + 1))) * r
                    later = sum(x * v_next[b - s][min(i, b - s)] for i, x in enumerate(dist))
                    best = max(best, now + discount * later)
                v[b][m] = best
        tables.append(v)
        v_next = v
    return tables[::-1]
