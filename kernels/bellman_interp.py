"""Fused batched Bellman backup on a threshold ladder, with linear interpolation of V.

Maths.  ``B`` independent problems (configurations), each an MDP over ``(level l, skill x)``
with ``l = 0..L-1`` (0-based here; the library's level ``l + 1``) and ``V[b, l, :]`` stored on a
sorted skill grid ``grid[b, 0..NX-1]`` (the library merges a uniform grid with the thresholds,
where ``V`` has its kinks).  For every query skill ``xq[b, l, q]`` the backup is::

    V'(l, x) = max_{a+, a-}  R(l') - c+ a+ - c- a-  +  beta * V(l', x'),
    z  = x + a+ + a-,                      x' = gamma (x + a+) + delta * l'   (0-based l')
    l' = l + 1  if l < L-1 and z >= mu_hi - tol        (promotion; mu_hi = mu[b, l + 1])
    l' = l - 1  if l > 0   and z <  mu_lo - tol        (relegation; mu_lo = mu[b, l])
    l' = l      otherwise

where ``mu[b]`` is the padded ladder ``[-inf, mu_1, ..., mu_{L-1}, +inf]`` and ``V(l', x')``
is linear interpolation on the grid, clamped at both ends (left node: the largest
``i <= NX-2`` with ``grid[i] <= x'``, found by binary search; zero-width intervals, i.e.
repeated nodes, take the left value).  The candidate actions are:

* honest ``a+``: the grid ``k * a_step[b]`` for ``k = 0..n_a-1``, then (``n_gap = L-1``) the
  EXACT GAPS ``max(0, mu_j - x)`` for ``j = 1..L-1`` (``n_gap = 0`` drops them: the
  discretisation pitfall, where missing a threshold by a grid step is patched with gaming);
* gaming ``a-`` given ``y = x + a+``: option 0 none, option 1 ``max(0, mu_hi - y)`` (the
  cheapest promotion), option 2 ``max(0, mu_lo - y)`` (the cheapest way to keep the level).
  With linear costs no other gaming amount can be optimal.  Option 1 at the top is invalid.

Candidate ``c = k * 3 + option`` (``k`` over ``n_a + n_gap``); the first maximiser wins, so
ties go to less effort and no gaming.  Returns the maximum and the argmax ``c``.

Memory traffic.  A torch implementation materialises ``B x L x Q x (n_a + n_gap) x 3``
candidates (hundreds of MB for a phase diagram) and streams them through ~25 elementwise ops.
The kernel keeps one ``BLOCK`` of queries in registers, loops over candidates, binary-searches
the grid row and gathers two ``V`` values per candidate from rows that stay in cache (``V`` is
``B L NX``, kilobytes per configuration) and keeps a running max/argmax: it reads ``V``, the
grid and the query block, writes two numbers per query, and never stores a candidate.

Constraints.  ``v`` float32 or float64 (the library uses float64 to converge to 1e-8;
arithmetic in that dtype), ``NX >= 2`` sorted grid, thresholds strictly increasing, costs
``> 0``.  ``par[b] = (a_step, gamma, delta, beta, c_plus, c_minus)``.

Precision.  All arithmetic in ``v``'s dtype (no transcendentals: adds, multiplies, one
division per candidate, comparisons); ``tol`` is a float64 kernel argument cast to that dtype
(a plain Python float would be a float32 scalar in the compiled kernel).  float64 is within
1e-12 of the float64 reference.

``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch eager /
``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it on a
GPU).

References.  Triton tutorials (row programs, masked loads); Liger-Kernel (torch reference +
``impl`` switch); Puterman, *Markov Decision Processes*, 6.3 (value iteration).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl

    from ._fp64 import fp64
except ImportError:  # pragma: no cover
    triton = None

PAR_FIELDS = ("a_step", "gamma", "delta", "beta", "c_plus", "c_minus")
N_OPTIONS = 3  # gaming options per honest candidate


class Actions(NamedTuple):
    """Candidate actions and their transitions, all broadcast to one shape."""

    a_plus: torch.Tensor
    a_minus: torch.Tensor
    level_next: torch.Tensor  # int64, 0-based
    x_next: torch.Tensor
    reward: torch.Tensor  # R(l') - c+ a+ - c- a-, -inf where the option is invalid


def _col(par: torch.Tensor, name: str, ndim: int) -> torch.Tensor:
    """Column ``name`` of ``par [B, 8]`` shaped ``[B, 1, ..., 1]`` with ``ndim`` dims."""
    return par[:, PAR_FIELDS.index(name)].reshape(-1, *([1] * (ndim - 1)))


def _at(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[b, index[b, ...]]``: ``table [B, N]``, ``index`` broadcastable to ``[B, ...]``."""
    bidx = torch.arange(table.shape[0], device=table.device)
    bidx = bidx.reshape(-1, *([1] * max(index.ndim - 1, 0)))
    return table[bidx, index]


def ladder_actions(cand: torch.Tensor, x: torch.Tensor, level: torch.Tensor,
                   mu: torch.Tensor, reward: torch.Tensor, par: torch.Tensor, n_a: int,
                   tol: float) -> Actions:
    """The action with index ``cand`` taken at skill ``x`` on 0-based ``level``.

    ``cand`` (int64), ``x`` and ``level`` (int64) broadcast to one shape ``[B, ...]`` (each
    with the same number of dims, size-1 dims allowed); ``mu [B, L+1]`` (padded with
    -inf/+inf), ``reward [B, L]``, ``par [B, 6]``. Per-level quantities are gathered at the
    small shape of ``level`` and per-candidate ones at the shape of ``cand`` before
    broadcasting, so only the arithmetic runs at the full shape.
    """
    nd = max(cand.ndim, x.ndim, level.ndim)
    n_levels = reward.shape[1]
    k, opt = cand // N_OPTIONS, cand % N_OPTIONS
    mu_lo, mu_hi = _at(mu, level), _at(mu, level + 1)
    r_stay = _at(reward, level)
    r_up = _at(reward, (level + 1).clamp(max=n_levels - 1))
    r_down = _at(reward, (level - 1).clamp(min=0))
    gap_j = (k - n_a + 1).clamp(1, max(n_levels - 1, 1))  # which mu_j an exact-gap k targets
    mu_gap = _at(mu, gap_j)
    a_grid = k.to(x.dtype) * _col(par, "a_step", nd)
    a_plus = torch.where(k < n_a, a_grid, (mu_gap - x).clamp(min=0.0))
    y = x + a_plus
    can_up = level < n_levels - 1
    valid = (opt != 1) | can_up
    g = torch.where(opt == 1, (mu_hi - y).clamp(min=0.0),
                    torch.where(opt == 2, (mu_lo - y).clamp(min=0.0), torch.zeros_like(y)))
    g = torch.where(valid, g, torch.zeros_like(g))
    z = y + g
    up = (z >= mu_hi - tol) & can_up
    down = (z < mu_lo - tol) & (level > 0)
    level_next = level + up.long() - down.long()
    x_next = _col(par, "gamma", nd) * y + _col(par, "delta", nd) * level_next.to(x.dtype)
    r = torch.where(up, r_up, torch.where(down, r_down, r_stay))
    r = r - _col(par, "c_plus", nd) * a_plus - _col(par, "c_minus", nd) * g
    r = torch.where(valid, r, torch.full_like(r, -math.inf))
    shape = r.shape
    return Actions(a_plus.expand(shape), g.expand(shape), level_next.expand(shape),
                   x_next.expand(shape), r)


def interp_index(x: torch.Tensor, grid: torch.Tensor):
    """Left node and weight of linear interpolation at ``x [B, ...]`` on ``grid [B, NX]``.

    Left node: the largest ``i <= NX-2`` with ``grid[i] <= x`` (0 below the grid); the weight
    is clamped to ``[0, 1]`` (constant extrapolation) and is 0 on a zero-width interval.
    """
    n_x = grid.shape[1]
    flat = x.reshape(x.shape[0], -1).contiguous()
    i0 = (torch.searchsorted(grid, flat, right=True) - 1).clamp(0, n_x - 2)
    g0, g1 = grid.gather(1, i0), grid.gather(1, i0 + 1)
    width = g1 - g0
    w = torch.where(width > 0, (flat - g0) / torch.where(width > 0, width, 1.0), 0.0)
    return i0.reshape(x.shape), w.clamp(0.0, 1.0).reshape(x.shape)


def interp(v: torch.Tensor, grid: torch.Tensor, level: torch.Tensor, x: torch.Tensor):
    """``V[b, level, .]`` at ``x``: ``v [B, L, NX]``, ``grid [B, NX]``, ``level, x [B, ...]``."""
    bsz, n_levels, n_x = v.shape
    i0, w = interp_index(x, grid)
    bidx = torch.arange(bsz, device=v.device).reshape(-1, *([1] * (x.ndim - 1)))
    row = (bidx * n_levels + level) * n_x
    flat = v.reshape(-1)
    v0 = flat[row + i0]
    return v0 + w * (flat[row + i0 + 1] - v0)


def n_candidates(n_a: int, n_gap: int) -> int:
    return (n_a + n_gap) * N_OPTIONS


def _all_actions(xq, mu, reward, par, n_a, n_gap, tol) -> Actions:
    """Every candidate at every query: ``[B, L, Q] -> [B, L, Q, C]``."""
    bsz, n_levels, _ = xq.shape
    cand = torch.arange(n_candidates(n_a, n_gap), device=xq.device)
    level = torch.arange(n_levels, device=xq.device).reshape(1, -1, 1, 1)
    return ladder_actions(cand.reshape(1, 1, 1, -1), xq[..., None], level, mu, reward, par,
                          n_a, tol)


def _chunks(bsz: int, per_config: int, budget: int = 1 << 21):
    step = max(1, budget // max(per_config, 1))
    return [slice(s, min(s + step, bsz)) for s in range(0, bsz, step)]


def bellman_q_ref(v, grid, xq, mu, reward, par, n_a: int, n_gap: int, tol: float = 1e-9):
    """Every candidate's value ``R - costs + beta V(l', x')``: ``[B, L, Q, C]`` (-inf where
    invalid). Materialises everything: for tests and small query sets."""
    act = _all_actions(xq, mu, reward, par, n_a, n_gap, tol)
    return act.reward + _col(par, "beta", 4) * interp(v, grid, act.level_next, act.x_next)


def bellman_interp_ref(v, grid, xq, mu, reward, par, n_a: int, n_gap: int,
                       tol: float = 1e-9):
    """Plain-torch backup: ``(max [B, L, Q], argmax [B, L, Q] int64)``; the oracle.

    Materialises the candidates of a chunk of configurations at a time.
    """
    values, best = [], []
    per = xq[0].numel() * n_candidates(n_a, n_gap)
    for s in _chunks(xq.shape[0], per):
        q = bellman_q_ref(v[s], grid[s], xq[s], mu[s], reward[s], par[s], n_a, n_gap, tol)
        m, i = q.max(dim=-1)
        values.append(m)
        best.append(i)
    return torch.cat(values), torch.cat(best)


class BackupTable(NamedTuple):
    """The V-independent part of the backup at fixed queries, hoisted out of the iteration.

    For each candidate: flat left index into ``V``, the two interpolation weights times beta,
    and the immediate reward. ``[B, L, Q, C]`` each (about 32 bytes per candidate).
    """

    index: torch.Tensor
    w0: torch.Tensor
    w1: torch.Tensor
    reward: torch.Tensor


def backup_table(grid, xq, mu, reward, par, n_a: int, n_gap: int,
                 tol: float = 1e-9) -> BackupTable:
    """Precompute the transitions of every candidate at the queries ``xq [B, L, Q]``."""
    bsz, n_levels, n_q = xq.shape
    n_x, n_c = grid.shape[1], n_candidates(n_a, n_gap)
    shape = (bsz, n_levels, n_q, n_c)
    out = BackupTable(torch.empty(shape, dtype=torch.int64, device=xq.device),
                      *(torch.empty(shape, dtype=xq.dtype, device=xq.device) for _ in range(3)))
    for s in _chunks(bsz, n_levels * n_q * n_c):
        act = _all_actions(xq[s], mu[s], reward[s], par[s], n_a, n_gap, tol)
        i0, w = interp_index(act.x_next, grid[s])
        bidx = torch.arange(s.start, s.stop, device=xq.device).reshape(-1, 1, 1, 1)
        out.index[s] = (bidx * n_levels + act.level_next) * n_x + i0
        beta = _col(par[s], "beta", 4)
        torch.mul(beta, 1 - w, out=out.w0[s])
        torch.mul(beta, w, out=out.w1[s])
        out.reward[s] = act.reward
    return out


def table_backup(v: torch.Tensor, table: BackupTable):
    """The torch backup through a :func:`backup_table` (same result as the reference)."""
    flat = v.reshape(-1)
    values, best = [], []
    bsz = table.index.shape[0]
    for s in _chunks(bsz, table.index[0].numel()):
        idx = table.index[s]
        q = torch.addcmul(table.reward[s], table.w0[s], flat[idx])
        q.addcmul_(table.w1[s], flat[idx + 1])
        m, i = q.max(dim=-1)
        values.append(m)
        best.append(i)
    return torch.cat(values), torch.cat(best)


if triton is not None:

    @triton.jit
    def _bellman_interp_kernel(v_ptr, grid_ptr, xq_ptr, mu_ptr, rew_ptr, par_ptr, out_v_ptr,
                               out_i_ptr,
                               stride_vb, stride_vl, stride_vx, stride_gb, stride_gx,
                               stride_qb, stride_ql, stride_qx,
                               stride_mb, stride_rb, stride_pb,
                               stride_ob, stride_ol, stride_ox,
                               n_batch, n_levels, n_x, n_q, n_a, n_gap, n_search,
                               tol_arg: fp64, BLOCK: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        b = pid // n_levels
        ok = b < n_batch  # always true for the launch grid; masks the per-row scalar loads
        lvl = pid % n_levels
        offs = tl.program_id(1).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        qmask = offs < n_q
        tol = tl.full([], tol_arg, v_ptr.dtype.element_ty)  # float64 argument, tensor dtype
        x = tl.load(xq_ptr + b * stride_qb + lvl * stride_ql + offs * stride_qx, mask=qmask,
                    other=0.0)
        par = par_ptr + b * stride_pb
        a_step = tl.load(par + 0, mask=ok, other=0.0)
        gamma = tl.load(par + 1, mask=ok, other=0.0)
        delta = tl.load(par + 2, mask=ok, other=0.0)
        beta = tl.load(par + 3, mask=ok, other=0.0)
        c_plus = tl.load(par + 4, mask=ok, other=0.0)
        c_minus = tl.load(par + 5, mask=ok, other=0.0)
        grid_row = grid_ptr + b * stride_gb
        mu_lo = tl.load(mu_ptr + b * stride_mb + lvl, mask=ok, other=0.0)
        mu_hi = tl.load(mu_ptr + b * stride_mb + lvl + 1, mask=ok, other=0.0)
        can_up = lvl < n_levels - 1
        can_down = lvl > 0
        v_row = v_ptr + b * stride_vb
        rew_row = rew_ptr + b * stride_rb
        best = tl.full([BLOCK], float("-inf"), x.dtype)
        best_i = tl.zeros([BLOCK], dtype=tl.int64)
        for k in range(0, n_a + n_gap):
            j = tl.minimum(tl.maximum(k - n_a + 1, 1), tl.maximum(n_levels - 1, 1))
            mu_gap = tl.load(mu_ptr + b * stride_mb + j, mask=ok, other=0.0)
            a_grid = x * 0.0 + k * a_step
            a = tl.where(k < n_a, a_grid, tl.maximum(mu_gap - x, 0.0))
            y = x + a
            for opt in tl.static_range(3):
                if opt == 0:
                    g = y * 0.0
                elif opt == 1:
                    g = tl.maximum(mu_hi - y, 0.0)
                else:
                    g = tl.maximum(mu_lo - y, 0.0)
                valid = (opt != 1) | can_up
                g = tl.where(valid, g, 0.0)
                z = y + g
                up = (z >= mu_hi - tol) & can_up
                down = (z < mu_lo - tol) & can_down
                nl = lvl + up.to(tl.int64) - down.to(tl.int64)
                xn = gamma * y + delta * nl.to(x.dtype)
                # binary search: largest i0 <= n_x - 2 with grid[i0] <= xn (0 below the grid)
                lo = tl.zeros([BLOCK], dtype=tl.int64)
                hi = tl.zeros([BLOCK], dtype=tl.int64) + (n_x - 1)
                for _ in range(0, n_search):
                    mid = (lo + hi) // 2
                    g_mid = tl.load(grid_row + mid * stride_gx, mask=qmask, other=0.0)
                    go = (g_mid <= xn) & (hi - lo > 1)
                    stop = (g_mid > xn) & (hi - lo > 1)
                    lo = tl.where(go, mid, lo)
                    hi = tl.where(stop, mid, hi)
                i0 = lo
                g0 = tl.load(grid_row + i0 * stride_gx, mask=qmask, other=0.0)
                g1 = tl.load(grid_row + (i0 + 1) * stride_gx, mask=qmask, other=1.0)
                width = g1 - g0
                w = tl.where(width > 0, (xn - g0) / tl.where(width > 0, width, 1.0), 0.0)
                w = tl.minimum(tl.maximum(w, 0.0), 1.0)
                ptr = v_row + nl * stride_vl + i0 * stride_vx
                v0 = tl.load(ptr, mask=qmask, other=0.0)
                v1 = tl.load(ptr + stride_vx, mask=qmask, other=0.0)
                r = tl.load(rew_row + nl, mask=qmask, other=0.0)
                q = r - c_plus * a - c_minus * g + beta * (v0 + w * (v1 - v0))
                q = tl.where(valid, q, float("-inf"))
                better = q > best
                best = tl.where(better, q, best)
                best_i = tl.where(better, k * 3 + opt, best_i)
        out = b * stride_ob + lvl * stride_ol + offs * stride_ox
        tl.store(out_v_ptr + out, best, mask=qmask)
        tl.store(out_i_ptr + out, best_i, mask=qmask)


def _check(v, grid, xq, mu, reward, par, n_a, n_gap):
    if v.ndim != 3 or xq.ndim != 3 or v.shape[:2] != xq.shape[:2]:
        raise ValueError(f"v must be [B, L, NX] and xq [B, L, Q] with equal B, L; got "
                         f"{tuple(v.shape)} and {tuple(xq.shape)}")
    bsz, n_levels, n_x = v.shape
    if n_x < 2:
        raise ValueError(f"the skill grid needs NX >= 2 points, got {n_x}")
    if tuple(grid.shape) != (bsz, n_x):
        raise ValueError(f"grid must be [B, NX] = {(bsz, n_x)}, got {tuple(grid.shape)}")
    if tuple(mu.shape) != (bsz, n_levels + 1):
        raise ValueError(f"mu must be [B, L+1] = {(bsz, n_levels + 1)}, got {tuple(mu.shape)}")
    if tuple(reward.shape) != (bsz, n_levels):
        raise ValueError(f"reward must be [B, L] = {(bsz, n_levels)}, got "
                         f"{tuple(reward.shape)}")
    if tuple(par.shape) != (bsz, len(PAR_FIELDS)):
        raise ValueError(f"par must be [B, {len(PAR_FIELDS)}] with columns {PAR_FIELDS}, "
                         f"got {tuple(par.shape)}")
    if v.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"v must be float32 or float64, got {v.dtype}")
    if any(t.dtype != v.dtype for t in (grid, xq, mu, reward, par)):
        raise ValueError("v, grid, xq, mu, reward and par must share one dtype")
    if any(t.device != v.device for t in (grid, xq, mu, reward, par)):
        raise ValueError("v, grid, xq, mu, reward and par must be on one device")
    if n_a < 1 or n_gap not in (0, n_levels - 1):
        raise ValueError(f"need n_a >= 1 and n_gap in (0, L-1={n_levels - 1}); got "
                         f"n_a={n_a}, n_gap={n_gap}")


def bellman_interp(v: torch.Tensor, grid: torch.Tensor, xq: torch.Tensor, mu: torch.Tensor,
                   reward: torch.Tensor, par: torch.Tensor, n_a: int, n_gap: int,
                   tol: float = 1e-9, impl: str = "auto"):
    """One Bellman backup at the queries ``xq``: ``-> (value [B, L, Q], argmax [B, L, Q])``.

    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise;
    ``"triton"`` forces the kernel (on CPU only under ``TRITON_INTERPRET=1``).
    """
    _check(v, grid, xq, mu, reward, par, n_a, n_gap)
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    use_triton = impl == "triton" or (impl == "auto" and v.is_cuda and triton is not None)
    if not use_triton:
        return bellman_interp_ref(v, grid, xq, mu, reward, par, n_a, n_gap, tol)
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    bsz, n_levels, n_x = v.shape
    n_q = xq.shape[2]
    mu, reward, par = mu.contiguous(), reward.contiguous(), par.contiguous()
    # NaN / -1 prefill: an element the kernel fails to write cannot pass for a result
    out_v = torch.full((bsz, n_levels, n_q), math.nan, dtype=v.dtype, device=v.device)
    out_i = torch.full((bsz, n_levels, n_q), -1, dtype=torch.int64, device=v.device)
    if out_v.numel() == 0:
        return out_v, out_i
    block = min(128, triton.next_power_of_2(n_q))
    n_search = max(1, math.ceil(math.log2(n_x - 1))) if n_x > 2 else 1
    launch = (bsz * n_levels, triton.cdiv(n_q, block))
    _bellman_interp_kernel[launch](
        v, grid, xq, mu, reward, par, out_v, out_i,
        v.stride(0), v.stride(1), v.stride(2), grid.stride(0), grid.stride(1),
        xq.stride(0), xq.stride(1), xq.stride(2),
        mu.stride(0), reward.stride(0), par.stride(0),
        out_v.stride(0), out_v.stride(1), out_v.stride(2),
        bsz, n_levels, n_x, n_q, n_a, n_gap, n_search, tol, BLOCK=block)
    return out_v, out_i
