"""Triton lattice forward pass vs its torch reference (interpreter on CPU, tiny shapes)."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from icml26.kernels.lattice_forward import lattice_forward, lattice_forward_ref, reverse_edges

# (B texts, T positions, L max piece length, K languages, V vocabulary)
SHAPES = {
    "regular": (4, 8, 4, 4, 16),
    "odd_tail": (3, 7, 3, 5, 11),
    "single_text": (1, 5, 2, 1, 6),
    "languages_over_block": (2, 6, 3, 17, 9),  # K = 17 > 16: a padded language block
}


def inputs(b, t, n_l, k, v, dtype=torch.float32, seed=0):
    """Random lattices with every length-1 edge present (a segmentation always exists),
    ragged lengths (padding = -1 edges) and one missing multi-char edge per text."""
    g = torch.Generator().manual_seed(seed)
    edges = torch.randint(-1, v, (b, t, n_l), generator=g)
    edges[:, :, 0] = torch.randint(0, v, (b, t), generator=g)
    lengths = torch.randint(max(1, t - 2), t + 1, (b,), generator=g)
    lengths[0] = t
    for i in range(b):
        edges[i, lengths[i]:] = -1
    logp = torch.log_softmax(torch.randn(k, v, generator=g, dtype=torch.float64), 1)
    logp[:, -1] = -math.inf  # a piece with probability 0 (a control piece)
    return edges, lengths, logp.to(dtype)


def oracle(edges, length, logp_row, semiring="log"):
    """Enumerate every segmentation of one text (float64): the definition."""
    n_l = edges.shape[1]
    scores = []
    for cuts in itertools.product([0, 1], repeat=length - 1):
        bounds = [0, *[i + 1 for i, c in enumerate(cuts) if c], length]
        total = 0.0
        for s, e in zip(bounds, bounds[1:]):
            ln = e - s
            if ln > n_l or edges[e - 1, ln - 1] < 0:
                total = -math.inf
                break
            total += float(logp_row[edges[e - 1, ln - 1]])
        scores.append(total)
    t = torch.tensor(scores, dtype=torch.float64)
    return float(torch.logsumexp(t, 0)) if semiring == "log" else float(t.max())


@pytest.mark.parametrize("semiring", ["log", "max"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_reference_matches_enumeration(shape, semiring):
    edges, lengths, logp = inputs(*shape, dtype=torch.float64, seed=1)
    alpha = lattice_forward_ref(edges, logp, semiring)
    for b in range(edges.shape[0]):
        for k in range(logp.shape[0]):
            want = oracle(edges[b], int(lengths[b]), logp[k], semiring)
            assert float(alpha[b, lengths[b], k]) == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_reverse_lattice_gives_the_same_total():
    edges, lengths, logp = inputs(3, 7, 3, 2, 11, dtype=torch.float64, seed=3)
    fwd = lattice_forward_ref(edges, logp)
    bwd = lattice_forward_ref(reverse_edges(edges, lengths), logp)
    b = torch.arange(3)
    torch.testing.assert_close(fwd[b, lengths], bwd[b, lengths], rtol=1e-12, atol=1e-12)


def test_bad_inputs_raise():
    edges, _, logp = inputs(2, 4, 2, 2, 5)
    with pytest.raises(ValueError, match="semiring"):
        lattice_forward(edges, logp, semiring="sum")
    with pytest.raises(ValueError, match="edge ids"):
        lattice_forward(edges + 10, logp)
    with pytest.raises(ValueError, match="int64"):
        lattice_forward(edges.int(), logp)
    with pytest.raises(ValueError, match="impl"):
        lattice_forward(edges, logp, impl="cuda")


@pytest.mark.interpreter
@pytest.mark.parametrize("semiring", ["log", "max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_triton_matches_reference(shape, dtype, semiring, device):
    edges, lengths, logp = inputs(*shape, dtype=dtype, seed=2)
    ref64 = lattice_forward_ref(edges, logp.double(), semiring)
    ref = lattice_forward_ref(edges, logp, semiring)
    out = torch.full_like(ref, float("nan"), device=device)
    got = lattice_forward(edges.to(device), logp.to(device), semiring, impl="triton",
                          out=out).cpu()
    assert not torch.isnan(got).any()
    # -inf exactly where the reference has -inf (positions no segmentation reaches)
    assert torch.equal(torch.isinf(got), torch.isinf(ref64))
    fin = torch.isfinite(ref64)
    # flash-attention's rule: at most twice torch's own error in this dtype vs float64, plus
    # a floor of a few ulps of the scale (a sum of up to T log-probabilities of size ~3)
    eps = torch.finfo(dtype).eps
    scale = float(ref64[fin].abs().max())
    err = (got.double() - ref64)[fin].abs().max()
    assert err <= 2 * (ref.double() - ref64)[fin].abs().max() + 8 * eps * scale


@pytest.mark.interpreter
@pytest.mark.parametrize("semiring", ["log", "max"])
@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_float64_kernel_is_float64(shape, semiring, device):
    """float64 in, float64 math (libdevice exp/log on CUDA): <= 1e-12 relative to the float64
    reference (a float32 transcendental would be ~1e-7 off)."""
    edges, _, logp = inputs(*shape, dtype=torch.float64, seed=5)
    ref = lattice_forward_ref(edges, logp, semiring)
    got = lattice_forward(edges.to(device), logp.to(device), semiring, impl="triton").cpu()
    assert torch.equal(torch.isinf(got), torch.isinf(ref))
    fin = torch.isfinite(ref)
    torch.testing.assert_close(got[fin], ref[fin], rtol=1e-12, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("semiring", ["log", "max"])
def test_compiled_float64_at_unilid_scale(semiring):
    """CUDA only (too big for the interpreter): UniLID-like lattices, 22 languages, float64
    compiled kernel within 1e-12 relative of the float64 reference."""
    edges, _, logp = inputs(64, 160, 8, 22, 500, dtype=torch.float64, seed=6)
    ref = lattice_forward_ref(edges, logp, semiring)
    got = lattice_forward(edges.cuda(), logp.cuda(), semiring).cpu()
    fin = torch.isfinite(ref)
    assert torch.equal(torch.isinf(got), torch.isinf(ref))
    torch.testing.assert_close(got[fin], ref[fin], rtol=1e-12, atol=0)
