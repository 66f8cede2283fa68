"""The fused Bellman backup: Triton (interpreted on CPU) against the torch reference."""

from __future__ import annotations

import math

import pytest
import torch

from icml26.kernels.bellman_interp import (
    backup_table,
    bellman_interp,
    bellman_interp_ref,
    bellman_q_ref,
    n_candidates,
    table_backup,
)

# (batch, levels, grid nodes, queries, honest grid points): regular, odd tail, single row
SHAPES = {
    "regular": (2, 3, 7, 8, 3),
    "odd_tail": (3, 2, 6, 11, 2),
    "single_row": (1, 2, 5, 1, 2),
}


def make_inputs(batch, levels, n_x, n_q, n_a, dtype, seed=0):
    """Random but valid ladders: increasing thresholds inside a sorted grid, c- < c+."""
    g = torch.Generator().manual_seed(seed)
    rand = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)  # noqa: E731
    x_max = 2.0 + rand(batch)
    mu_inner = torch.sort(0.1 + 0.8 * rand(batch, levels - 1), dim=1).values * x_max[:, None]
    uniform = torch.linspace(0, 1, n_x - (levels - 1), dtype=torch.float64) * x_max[:, None]
    grid = torch.sort(torch.cat([uniform, mu_inner], 1), dim=1).values
    inf = torch.full((batch, 1), math.inf, dtype=torch.float64)
    mu = torch.cat([-inf, mu_inner, inf], 1)
    reward = torch.cumsum(rand(batch, levels), 1) - rand(batch, 1)
    c_plus = 0.5 + rand(batch)
    par = torch.stack([x_max / (n_a - 1), 0.95 * rand(batch), 0.3 * rand(batch),
                       0.95 * rand(batch), c_plus, c_plus * (0.05 + 0.9 * rand(batch))], 1)
    v = 3 * rand(batch, levels, n_x)
    # queries inside the grid, on its nodes, and beyond both ends (clamped interpolation)
    xq = (1.4 * rand(batch, levels, n_q) - 0.2) * x_max[:, None, None]
    xq[..., 0] = grid[:, None, min(2, n_x - 1)]
    return [t.to(dtype) for t in (v, grid, xq, mu, reward, par)]


def tolerance(out32: torch.Tensor, ref32: torch.Tensor, ref64: torch.Tensor) -> float:
    """flash-attention's rule: twice torch's own same-dtype error against float64."""
    return 2 * float((ref32.double() - ref64).abs().max()) + 1e-6  # floor: fp32 ulp of ~3


CASES = [pytest.param(shape, dtype, True, id=f"{name}-{dname}")
         for name, shape in SHAPES.items()
         for dtype, dname in ((torch.float64, "fp64"), (torch.float32, "fp32"))]
CASES.append(pytest.param(SHAPES["regular"], torch.float64, False, id="regular-fp64-grid_only"))


@pytest.mark.interpreter
@pytest.mark.parametrize("shape, dtype, gaps", CASES)
def test_kernel_matches_reference(shape, dtype, gaps, device):
    batch, levels, n_x, n_q, n_a = shape
    n_gap = levels - 1 if gaps else 0
    inputs = make_inputs(batch, levels, n_x, n_q, n_a, dtype)
    ref64, _ = bellman_interp_ref(*[t.double() for t in inputs], n_a, n_gap)
    ref, _ = bellman_interp(*inputs, n_a, n_gap, impl="torch")
    out, idx = (t.cpu() for t in bellman_interp(*[t.to(device) for t in inputs], n_a, n_gap,
                                                 impl="triton"))
    assert not torch.isnan(out).any() and (idx >= 0).all(), "kernel left outputs unwritten"
    assert (idx < n_candidates(n_a, n_gap)).all()
    # 1e-12 floor in float64: both sides run the same float64 arithmetic
    atol = 1e-12 if dtype == torch.float64 else tolerance(ref, ref, ref64)
    torch.testing.assert_close(out.double(), ref64, atol=atol, rtol=0)
    # the kernel's argmax attains the maximum (ties may pick another, equally good, index)
    q = bellman_q_ref(*[t.double() for t in inputs], n_a, n_gap)
    attained = q.gather(-1, idx[..., None]).squeeze(-1)
    torch.testing.assert_close(attained, ref64, atol=atol, rtol=0)


@pytest.mark.interpreter
def test_kernel_argmax_is_the_first_maximiser(device):
    """Ties go to the first candidate (no effort, no gaming): V = 0, zero rewards."""
    v, grid, xq, mu, reward, par = make_inputs(1, 2, 5, 4, 3, torch.float64)
    v.zero_()
    reward.zero_()
    _, idx_ref = bellman_interp_ref(v, grid, xq, mu, reward, par, 3, 1)
    _, idx = bellman_interp(*[t.to(device) for t in (v, grid, xq, mu, reward, par)], 3, 1,
                            impl="triton")
    idx = idx.cpu()
    assert (idx == 0).all() and (idx_ref == 0).all()


def test_table_backup_matches_reference():
    inputs = make_inputs(3, 3, 11, 11, 6, torch.float64, seed=3)
    v, grid, xq, mu, reward, par = inputs
    table = backup_table(grid, xq, mu, reward, par, 6, 2)
    val, idx = table_backup(v, table)
    ref, ref_idx = bellman_interp_ref(*inputs, 6, 2)
    torch.testing.assert_close(val, ref, atol=1e-12, rtol=0)
    assert torch.equal(idx, ref_idx)


@pytest.mark.parametrize("bad, message", [
    (lambda a: {**a, "grid": a["grid"][:, :-1]}, "grid must be"),
    (lambda a: {**a, "mu": a["mu"][:, :-1]}, "mu must be"),
    (lambda a: {**a, "par": a["par"][:, :-1]}, "par must be"),
    (lambda a: {**a, "n_gap": 5}, "n_gap"),
    (lambda a: {**a, "v": a["v"].half()}, "float32 or float64"),
    (lambda a: {**a, "impl": "cuda"}, "impl must be"),
], ids=["grid", "mu", "par", "n_gap", "dtype", "impl"])
def test_bad_input_raises(bad, message):
    v, grid, xq, mu, reward, par = make_inputs(2, 3, 7, 4, 3, torch.float64)
    args = dict(v=v, grid=grid, xq=xq, mu=mu, reward=reward, par=par, n_a=3, n_gap=2)
    with pytest.raises(ValueError, match=message):
        bellman_interp(**bad(args))


@pytest.mark.interpreter
def test_library_solve_runs_the_kernel_end_to_end(device):
    """``icml26.promotion.solve`` with ``impl="triton"`` (every backup through the kernel)
    reproduces the torch solution and the honest climb on a tiny ladder."""
    from icml26 import promotion as P

    cfg = P.PromotionConfig(levels=2, nx=6, na=3, horizon=2)
    sol_t = P.solve(P.make_ladder([cfg], device=device), impl="triton")
    sol_r = P.solve(P.make_ladder([cfg]), impl="torch")
    torch.testing.assert_close(sol_t.value.cpu(), sol_r.value, atol=1e-10, rtol=0)
    tr = {k: v.cpu() for k, v in P.simulate(sol_t).items()}
    assert tr["level"][0].tolist() == [1, 2, 2]
    assert float(tr["a_minus"].sum()) <= 1e-6


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 8, 408, 408, 161), (420, 2, 102, 102, 41)],
                         ids=["prototype-64x8x408", "phase-diagram-420x2x102"])
def test_compiled_float64_at_paper_scale(shape):
    """CUDA only (too big for the interpreter): the spec's prototype and the F1 phase-diagram
    sizes in float64, compiled kernel within 1e-12 of the float64 reference (run on CUDA too:
    adds, multiplies and divisions are IEEE there)."""
    batch, levels, n_x, n_q, n_a = shape
    inputs = [t.cuda() for t in make_inputs(batch, levels, n_x, n_q, n_a, torch.float64, seed=7)]
    ref, _ = bellman_interp_ref(*inputs, n_a, levels - 1)
    out, idx = bellman_interp(*inputs, n_a, levels - 1)
    assert (idx >= 0).all()
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=0)
