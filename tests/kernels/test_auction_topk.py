"""Batched auction resolution (top-2 + second-price payment): Triton vs ``torch.topk``.

On CPU the Triton path runs under ``TRITON_INTERPRET=1`` (set by ``tests/conftest.py``), so
shapes stay tiny.  Scores are Gaussian (tie-free: winners must match exactly; values are
copies of inputs, so they must match bit for bit) or small integers (ties: the values must
still match, the winner must be one of the tied maxima).  Outputs are pre-filled with NaN by
``torch.empty`` being overwritten: a row left unwritten would fail the comparisons.
"""

from __future__ import annotations

import pytest
import torch

from icml26.kernels.auction_topk import auction_topk, auction_topk_ref

pytestmark = pytest.mark.interpreter

SHAPES = [  # (M auctions, N bidders): a regular tile, odd tails, a single row, one bidder
    pytest.param(32, 8, id="regular-32x8"),
    pytest.param(37, 5, id="odd-tail-37x5"),
    pytest.param(1, 3, id="single-row-1x3"),
    pytest.param(9, 1, id="one-bidder-9x1"),
    pytest.param(20, 33, id="wide-20x33"),
]


def gaussian(m, n, seed=0, device="cpu"):
    return torch.randn(m, n, generator=torch.Generator().manual_seed(seed)).abs().to(device)


@pytest.mark.parametrize(("m", "n"), SHAPES)
@pytest.mark.parametrize("reserve", [0.0, 0.8], ids=["no-reserve", "reserve"])
def test_triton_matches_topk_reference(m, n, reserve, device):
    s = gaussian(m, n, device=device)
    got = auction_topk(s, reserve, impl="triton")
    want = auction_topk_ref(s.cpu(), reserve)
    for g, w, name in zip(got, want, ("winner", "top1", "top2", "price")):
        assert g.device == s.device, name
        assert not (g.is_floating_point() and g.isnan().any()), name
        torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, msg=name)


def test_ties_keep_the_value_and_pick_a_tied_maximum(device):
    s = torch.randint(0, 3, (40, 6), generator=torch.Generator().manual_seed(1)).float()
    win, top1, top2, price = (t.cpu() for t in auction_topk(s.to(device), 0.5, impl="triton"))
    _, r1, r2, rp = auction_topk_ref(s, 0.5)
    torch.testing.assert_close(top1, r1, rtol=0, atol=0)
    torch.testing.assert_close(top2, r2, rtol=0, atol=0)
    torch.testing.assert_close(price, rp, rtol=0, atol=0)
    sale = win >= 0
    assert torch.equal(s[sale].gather(1, win[sale, None])[:, 0], top1[sale])
    first = s.argmax(1)  # the kernel breaks ties to the lowest index
    assert torch.equal(win[sale], first[sale])


def test_semantics_of_the_reference_by_hand():
    s = torch.tensor([[0.3, 0.9, 0.5], [0.1, 0.05, 0.0], [0.7, 0.7, 0.2]])
    win, top1, top2, price = auction_topk_ref(s, reserve=0.2)
    assert win[0] == 1 and price[0] == pytest.approx(0.5)
    assert win[1] == -1 and price[1] == 0.0          # below the reserve: no sale
    assert win[2] in (0, 1) and price[2] == pytest.approx(0.7)  # a tie pays its own bid
    one = auction_topk_ref(torch.tensor([[0.4]]), reserve=0.1)
    assert one[0][0] == 0 and one[3][0] == pytest.approx(0.1)   # alone: pays the reserve


def test_auto_on_cpu_is_the_reference_and_bad_input_raises():
    s = gaussian(7, 4)
    for g, w in zip(auction_topk(s, 0.1), auction_topk_ref(s, 0.1)):
        assert torch.equal(g, w)
    with pytest.raises(ValueError, match="impl"):
        auction_topk(s, impl="cuda")
    with pytest.raises(ValueError, match=r"\[M, N\]"):
        auction_topk(s[0])
    with pytest.raises(ValueError, match="float32"):
        auction_topk(s.double())
    with pytest.raises(ValueError, match="bidders"):
        auction_topk(torch.zeros(3, 0))
