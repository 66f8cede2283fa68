"""Fused per-token statistics (log p(y), E[log p], Var[log p]): Triton vs the torch reference.

On CPU the Triton path runs under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  Tolerance (flash-attention's rule): <= 2x the fp32 torch error against an
fp64 reference, plus a floor for fp32 rounding of O(10) log-probabilities.
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.token_stats import rows_per_program_for, token_stats, token_stats_ref

SHAPES = [  # (N, V, BLOCK_V): one chunk, odd tail over several chunks, a single row
    pytest.param(16, 96, None, id="char-vocab-16x96"),
    pytest.param(7, 37, 16, id="odd-tail-7x37-block16"),
    pytest.param(1, 5, None, id="single-row-1x5"),
    pytest.param(9, 300, 128, id="multi-chunk-9x300-block128"),
]
FLOOR = 2e-5  # fp32 rounding of sums of V terms of magnitude <= ~10


def inputs(n, v, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, v, generator=g) * scale, torch.randint(0, v, (n,), generator=g)


def check_close(out, ref64, ref32):
    for o, r64, r32 in zip(out, ref64, ref32):
        assert not torch.isnan(o).any()
        err_ref = (r32.double() - r64).abs().max().item()
        err = (o.double() - r64).abs().max().item()
        assert err <= 2 * err_ref + FLOOR, (err, err_ref)


@pytest.mark.interpreter
@pytest.mark.parametrize(("n", "v", "block"), SHAPES)
def test_triton_matches_reference(n, v, block, device):
    z, y = inputs(n, v)
    lp = torch.log_softmax(z.double(), -1)
    p = lp.exp()
    mean = (p * lp).sum(-1)
    ref64 = (lp.gather(-1, y[:, None]).squeeze(-1), mean, (p * (lp - mean[:, None]) ** 2).sum(-1))
    got = [t.cpu() for t in token_stats(z.to(device), y.to(device), impl="triton",
                                        block_v=block)]
    check_close(got, ref64, token_stats_ref(z, y))


def oracle(z, y):
    lp = torch.log_softmax(z.double(), -1)
    p = lp.exp()
    mean = (p * lp).sum(-1)
    return lp.gather(-1, y[:, None]).squeeze(-1), mean, (p * (lp - mean[:, None]) ** 2).sum(-1)


@pytest.mark.interpreter
@pytest.mark.parametrize("rows", [1, 4, None], ids=["one-row", "4-rows", "default-rows"])
@pytest.mark.parametrize(("n", "v"), [pytest.param(16, 96, id="char-vocab-16x96"),
                                      pytest.param(7, 37, id="odd-tail-7x37"),
                                      pytest.param(1, 5, id="single-row-1x5"),
                                      pytest.param(70, 20, id="row-tail-70x20")])
def test_many_rows_per_program_matches_reference(n, v, rows, device):
    """Small vocabularies: several whole rows per program (odd row tails masked) give the
    same statistics as one row per program, to the same tolerance."""
    z, y = inputs(n, v, seed=4)
    got = [t.cpu() for t in token_stats(z.to(device), y.to(device), impl="triton",
                                        rows_per_program=rows)]
    check_close(got, oracle(z, y), token_stats_ref(z, y))


def test_default_rows_per_program():
    assert rows_per_program_for(96, 128) == 32  # detectrouter's characters
    assert rows_per_program_for(1000, 1024) == 4
    assert rows_per_program_for(5, 8) == 64  # capped
    assert rows_per_program_for(300, 128) == 1  # several chunks: the streaming kernel
    z, y = inputs(3, 10)
    with pytest.raises(ValueError, match="power of two"):
        token_stats(z, y, impl="triton", rows_per_program=3)
    with pytest.raises(ValueError, match="whole rows"):
        token_stats(z, y, impl="triton", block_v=8, rows_per_program=2)


@pytest.mark.interpreter
@pytest.mark.parametrize("block, rows", [(8, 1), (32, 4)], ids=["chunked", "many-rows"])
def test_triton_handles_masked_tokens(block, rows, device):
    z, y = inputs(4, 20)
    z[:, :3] = -torch.inf  # masked vocabulary entries (p = 0)
    y = y.clamp_min(3)
    a = token_stats(z.to(device), y.to(device), impl="triton", block_v=block,
                    rows_per_program=rows)
    for u, w in zip(a, token_stats_ref(z, y)):
        torch.testing.assert_close(u.cpu(), w, rtol=1e-5, atol=2e-6)


def test_reference_on_known_distributions():
    v = 8
    uniform = torch.zeros(2, v)
    logp, mean, var = token_stats_ref(uniform, torch.tensor([0, 5]))
    torch.testing.assert_close(logp, torch.full((2,), -torch.log(torch.tensor(8.0))))
    torch.testing.assert_close(mean, logp)  # E[log p] = log(1/V) under a uniform
    torch.testing.assert_close(var, torch.zeros(2))  # log p is constant
    two = torch.tensor([[0.0, -torch.inf, torch.log(torch.tensor(3.0))]])  # p = (1/4, 0, 3/4)
    _, m, s2 = token_stats_ref(two, torch.tensor([2]))
    l1, l3 = torch.log(torch.tensor(0.25)), torch.log(torch.tensor(0.75))
    ev = 0.25 * l1 + 0.75 * l3
    torch.testing.assert_close(m[0], ev)
    torch.testing.assert_close(s2[0], 0.25 * (l1 - ev) ** 2 + 0.75 * (l3 - ev) ** 2)


def test_reference_is_shift_invariant_and_variance_nonnegative():
    z, y = inputs(32, 50, seed=3, scale=8.0)
    a, b = token_stats_ref(z, y), token_stats_ref(z + 100.0, y)
    for u, w in zip(a, b):
        torch.testing.assert_close(u, w, rtol=1e-4, atol=1e-4)
    assert (a[2] >= 0).all()


def test_auto_uses_the_reference_on_cpu_and_validates():
    z, y = inputs(3, 10)
    for u, w in zip(token_stats(z, y), token_stats_ref(z, y)):
        assert torch.equal(u, w)
    with pytest.raises(ValueError, match="target ids"):
        token_stats(z, torch.tensor([0, 1, 10]))
    with pytest.raises(ValueError, match=r"\[N, V\]"):
        token_stats(z[0], y)
    with pytest.raises(ValueError, match="impl"):
        token_stats(z, y, impl="cuda")
    with pytest.raises(ValueError, match="power of two"):
        token_stats(z, y, impl="triton", block_v=12)
