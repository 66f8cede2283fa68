"""Batched soft Bellman backup of an entropy-regularised two-player game against a fixed opponent.

Maths.  A game has ``S`` states, ``A`` actions for the player we back up, ``C`` for the
opponent, a reward that is affine in an upper-level parameter ``x in R^D``::

    r_x[b, s, a, c] = r0[s, a, c] + sum_d x[b, d] feats[d, s, a, c]

and transitions ``P[s, a, c, s']``.  Given a value ``V[b, s']`` for every grid point ``b`` and
the opponent's policy ``opp[b, s, c]``, one soft Bellman backup is::

    Q[b, s, a, c] = r_x[b, s, a, c] + gamma * sum_s' P[s, a, c, s'] V[b, s']
    q[b, s, a]    = sum_c opp[b, s, c] Q[b, s, a, c]
    value[b, s]   = tau * logsumexp_a(q[b, s, a] / tau) + tau * sum_c opp log opp
    policy[b,s,a] = softmax_a(q[b, s, a] / tau)

``value`` is the best-response value of the maximising player with entropy bonus ``tau H``
against an opponent whose own entropy enters with the opposite sign (``-tau H(opp)``), i.e.
the regularised zero-sum stage game ``max_pi  pi.Q.opp + tau H(pi) - tau H(opp)``.  The
minimising player's backup is the same operation on the negated, action-transposed game
(``-r0^T, -feats^T, P^T, -V``), negated.  Iterating it is soft value iteration; alternating it
with policy evaluation is soft policy iteration.

Memory traffic.  One program per ``(b, s)``.  It reads the ``A x C`` reward tile, ``D`` such
feature tiles, the ``A x C x S`` transition slice of state ``s``, the ``S`` values of row ``b``
and ``C`` opponent probabilities, and writes ``1 + A`` numbers.  An unfused torch version
materialises ``r_x`` and ``Q`` (``B S A C`` numbers each, written and read back) and the
``B S A C S`` product for the expectation; the fused kernel keeps all of it in registers, so
the traffic per grid point is the ``S (1 + A)`` outputs plus the (cache-resident, shared)
game tensors.  This is the inner loop of the landscape sweep over an ``x`` grid.

Precision.  Everything runs in the input dtype.  float64 (the library's path): loads, sums,
``tau``/``gamma`` (float64 kernel arguments) and ``exp``/``log`` (libdevice ``__nv_exp`` /
``__nv_log`` when compiled, see ``_fp64.py``) are all float64, within 1e-12 relative of the
float64 reference.  float32: float32 throughout with Triton's fast ``tl.exp``/``tl.log``.

Constraints.  Float32 or float64 tensors on one device (accumulation in that dtype: float64 on
the library's path); ``1 <= A, C <= 64``; ``S >= 1``; ``D >= 0``; ``tau > 0``; the opponent
rows are probability vectors (zeros allowed: ``0 log 0 = 0``).

``impl="auto"`` is Triton for CUDA tensors at every shape: no crossover against torch eager /
``torch.compile`` has been measured yet (``python -m icml26.kernels.bench`` measures it on a
GPU).

References.  Triton tutorials (fused softmax: one program per row, masked loads, max-shifted
exponentials); Liger-Kernel (torch reference + ``impl`` switch); Cen et al., "Fast policy
extragradient methods for competitive games with entropy regularization" (2021) for the
regularised game.
"""

from __future__ import annotations

import torch

try:  # triton is a hard dependency, but keep CPU-only importers alive if it is broken
    import triton
    import triton.language as tl

    from ._fp64 import exp as _exp
    from ._fp64 import fp64
    from ._fp64 import log as _log
except ImportError:  # pragma: no cover
    triton = None

MAX_ACTIONS = 64


def soft_bellman_ref(x: torch.Tensor, r0: torch.Tensor, feats: torch.Tensor, P: torch.Tensor,
                     V: torch.Tensor, opp: torch.Tensor, tau: float,
                     gamma: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain-torch backup. Shapes: ``x [B, D]``, ``r0 [S, A, C]``, ``feats [D, S, A, C]``,
    ``P [S, A, C, S]``, ``V [B, S]``, ``opp [B, S, C]`` -> ``(value [B, S], policy [B, S, A])``.
    Differentiable in every tensor argument."""
    n_b, n_s, (n_a, n_c) = V.shape[0], r0.shape[0], r0.shape[1:]
    r = r0 + (x @ feats.reshape(x.shape[1], n_s * n_a * n_c)).reshape(n_b, n_s, n_a, n_c)
    q_full = r + gamma * (V @ P.reshape(-1, n_s).T).reshape(n_b, n_s, n_a, n_c)
    q = (q_full @ opp[..., None])[..., 0]
    ent = torch.special.xlogy(opp, opp).sum(-1)
    value = tau * torch.logsumexp(q / tau, dim=-1) + tau * ent
    return value, torch.softmax(q / tau, dim=-1)


if triton is not None:

    @triton.jit
    def _soft_bellman_kernel(x_ptr, r0_ptr, f_ptr, p_ptr, v_ptr, opp_ptr, val_ptr, pol_ptr,
                             n_states, n_a, n_c, n_feat, tau_arg: fp64, gamma_arg: fp64,
                             stride_xb, stride_xd,
                             stride_rs, stride_ra, stride_rc,
                             stride_fd, stride_fs, stride_fa, stride_fc,
                             stride_ps, stride_pa, stride_pc, stride_pt,
                             stride_vb, stride_vs,
                             stride_ob, stride_os, stride_oc,
                             stride_valb, stride_vals,
                             stride_polb, stride_pols, stride_pola,
                             BLOCK_A: tl.constexpr, BLOCK_C: tl.constexpr,
                             BLOCK_T: tl.constexpr, F64: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        # float64 scalars in, cast to the tensors' dtype (float32 kernels stay float32)
        tau = tl.full([], tau_arg, r0_ptr.dtype.element_ty)
        gamma = tl.full([], gamma_arg, r0_ptr.dtype.element_ty)
        b = pid // n_states
        s = pid % n_states
        a = tl.arange(0, BLOCK_A)
        c = tl.arange(0, BLOCK_C)
        mask_a = a < n_a
        mask_c = c < n_c
        mask_ac = mask_a[:, None] & mask_c[None, :]
        # reward tile r_x[b, s] = r0[s] + sum_d x[b, d] feats[d, s]
        q = tl.load(r0_ptr + s * stride_rs + a[:, None] * stride_ra + c[None, :] * stride_rc,
                    mask=mask_ac, other=0.0)
        for d in range(0, n_feat):
            xd = tl.load(x_ptr + b * stride_xb + d * stride_xd)
            fd = tl.load(f_ptr + d * stride_fd + s * stride_fs + a[:, None] * stride_fa
                         + c[None, :] * stride_fc, mask=mask_ac, other=0.0)
            q += xd * fd
        # expected next value sum_t P[s, a, c, t] V[b, t], in blocks of next states
        ev = tl.zeros([BLOCK_A, BLOCK_C], dtype=q.dtype)
        for t0 in range(0, n_states, BLOCK_T):
            t = t0 + tl.arange(0, BLOCK_T)
            mask_t = t < n_states
            v = tl.load(v_ptr + b * stride_vb + t * stride_vs, mask=mask_t, other=0.0)
            p = tl.load(p_ptr + s * stride_ps + a[:, None, None] * stride_pa
                        + c[None, :, None] * stride_pc + t[None, None, :] * stride_pt,
                        mask=mask_ac[:, :, None] & mask_t[None, None, :], other=0.0)
            ev += tl.sum(p * v[None, None, :], axis=2)
        q += gamma * ev
        # marginalise the opponent, then the soft maximum over our actions
        o = tl.load(opp_ptr + b * stride_ob + s * stride_os + c * stride_oc, mask=mask_c,
                    other=0.0)
        qa = tl.sum(q * o[None, :], axis=1)
        ent = tl.sum(tl.where(o > 0, o * _log(tl.where(o > 0, o, 1.0), F64), 0.0), axis=0)
        z = tl.where(mask_a, qa / tau, float("-inf"))
        zmax = tl.max(z, axis=0)
        e = tl.where(mask_a, _exp(z - zmax, F64), 0.0)
        total = tl.sum(e, axis=0)
        value = tau * (zmax + _log(total, F64)) + tau * ent
        tl.store(val_ptr + b * stride_valb + s * stride_vals, value)
        tl.store(pol_ptr + b * stride_polb + s * stride_pols + a * stride_pola, e / total,
                 mask=mask_a)


def _check(x, r0, feats, P, V, opp, tau, gamma) -> None:
    tensors = {"x": x, "r0": r0, "feats": feats, "P": P, "V": V, "opp": opp}
    dtypes = {t.dtype for t in tensors.values()}
    if len(dtypes) != 1 or r0.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"all tensors must share dtype float32 or float64, got "
                         f"{ {k: v.dtype for k, v in tensors.items()} }")
    if len({t.device for t in tensors.values()}) != 1:
        raise ValueError("all tensors must be on one device")
    if r0.ndim != 3:
        raise ValueError(f"r0 must be [S, A, C], got shape {tuple(r0.shape)}")
    n_s, n_a, n_c = r0.shape
    if not (1 <= n_a <= MAX_ACTIONS and 1 <= n_c <= MAX_ACTIONS) or n_s < 1:
        raise ValueError(f"need S >= 1 and 1 <= A, C <= {MAX_ACTIONS}, got S={n_s}, A={n_a}, "
                         f"C={n_c}")
    if x.ndim != 2:
        raise ValueError(f"x must be [B, D], got shape {tuple(x.shape)}")
    n_b, n_d = x.shape
    expect = {"feats": (n_d, n_s, n_a, n_c), "P": (n_s, n_a, n_c, n_s), "V": (n_b, n_s),
              "opp": (n_b, n_s, n_c)}
    for name, shape in expect.items():
        if tuple(tensors[name].shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, got {tuple(tensors[name].shape)}")
    if not tau > 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    if not 0 <= gamma < 1:
        raise ValueError(f"gamma must be in [0, 1), got {gamma}")


def soft_bellman(x: torch.Tensor, r0: torch.Tensor, feats: torch.Tensor, P: torch.Tensor,
                 V: torch.Tensor, opp: torch.Tensor, tau: float, gamma: float,
                 impl: str = "auto") -> tuple[torch.Tensor, torch.Tensor]:
    """One soft Bellman backup for every grid point and state: ``(value [B, S], policy [B, S, A])``.

    ``impl="auto"`` runs Triton on CUDA tensors and the torch reference otherwise;
    ``"triton"`` forces the kernel (on CPU only under ``TRITON_INTERPRET=1``). The Triton path
    does not record autograd history; use ``impl="torch"`` to differentiate.
    """
    _check(x, r0, feats, P, V, opp, tau, gamma)
    if impl not in ("auto", "triton", "torch"):
        raise ValueError(f"impl must be 'auto', 'triton' or 'torch', got {impl!r}")
    use_triton = impl == "triton" or (impl == "auto" and r0.is_cuda and triton is not None)
    if not use_triton:
        return soft_bellman_ref(x, r0, feats, P, V, opp, tau, gamma)
    if triton is None:  # pragma: no cover
        raise RuntimeError("impl='triton' needs the triton package")
    n_s, n_a, n_c = r0.shape
    n_b, n_d = x.shape
    # NaN-filled, so an element the kernel fails to write cannot pass for a result
    value = torch.full((n_b, n_s), float("nan"), dtype=r0.dtype, device=r0.device)
    policy = torch.full((n_b, n_s, n_a), float("nan"), dtype=r0.dtype, device=r0.device)
    if n_b == 0:
        return value, policy
    if n_d == 0:  # keep a valid pointer for the (never executed) feature loop
        feats = torch.zeros(1, n_s, n_a, n_c, dtype=r0.dtype, device=r0.device)
        x = torch.zeros(n_b, 1, dtype=r0.dtype, device=r0.device)
    block_t = min(triton.next_power_of_2(n_s), 16)
    _soft_bellman_kernel[(n_b * n_s,)](
        x, r0, feats, P, V, opp, value, policy,
        n_s, n_a, n_c, n_d, float(tau), float(gamma),
        x.stride(0), x.stride(1),
        r0.stride(0), r0.stride(1), r0.stride(2),
        feats.stride(0), feats.stride(1), feats.stride(2), feats.stride(3),
        P.stride(0), P.stride(1), P.stride(2), P.stride(3),
        V.stride(0), V.stride(1),
        opp.stride(0), opp.stride(1), opp.stride(2),
        value.stride(0), value.stride(1),
        policy.stride(0), policy.stride(1), policy.stride(2),
        BLOCK_A=triton.next_power_of_2(n_a), BLOCK_C=triton.next_power_of_2(n_c),
        BLOCK_T=block_t, F64=r0.dtype == torch.float64)
    return value, policy
