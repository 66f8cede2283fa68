"""The shared tiny transformer and hop task (heima, red)."""

import pytest
import torch

from icml26.common import generator
from icml26.tinylm import LMConfig, TinyLM, hop_batch, masked_ce, one_cycle


def test_hop_chain_follows_the_permutation():
    b = hop_batch(64, 3, 8, generator(0))
    assert b.prompt.shape == (64, 9) and b.chain.shape == (64, 3)
    x = b.prompt[:, -1]
    for k in range(3):
        x = b.perm[torch.arange(64), x]
        assert torch.equal(x, b.chain[:, k])
    assert torch.equal(b.answer, b.chain[:, -1])
    assert (b.perm.sort(1).values == torch.arange(8)).all()


def test_hop_batch_is_seeded_and_checks_its_arguments():
    first, again = hop_batch(5, 2, 8, generator(1)), hop_batch(5, 2, 8, generator(1))
    assert torch.equal(first.prompt, again.prompt) and torch.equal(first.chain, again.chain)
    with pytest.raises(ValueError, match="hops"):
        hop_batch(5, 0, 8, generator(1))


def test_model_is_causal_and_returns_every_layer():
    torch.manual_seed(0)
    model = TinyLM(LMConfig(vocab=12, n_ctx=16, d_model=16, n_layers=3, n_heads=2)).eval()
    idx = torch.randint(12, (2, 10))
    logits, hidden = model(idx)
    assert logits.shape == (2, 10, 12) and len(hidden) == 3 and hidden[0].shape == (2, 10, 16)
    changed = idx.clone()
    changed[:, 7] = (changed[:, 7] + 1) % 12
    logits2, _ = model(changed)
    assert torch.allclose(logits[:, :7], logits2[:, :7], atol=1e-6)
    assert not torch.allclose(logits[:, 7:], logits2[:, 7:])
    e_logits, _ = model(embeds=model.tok(idx))
    assert torch.allclose(e_logits, logits, atol=1e-6)
    with pytest.raises(ValueError, match="n_ctx"):
        model(torch.zeros(1, 17, dtype=torch.long))


def test_the_model_learns_one_hop():
    torch.manual_seed(0)
    model = TinyLM(LMConfig(vocab=8, n_ctx=10, d_model=32, n_layers=2, n_heads=2))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sched = one_cycle(opt, 600, 3e-3)
    gen = generator(0)
    for _ in range(600):
        b = hop_batch(64, 1, 8, gen)
        seq = torch.cat([b.prompt, b.chain], 1)
        logits, _ = model(seq[:, :-1])
        mask = torch.zeros_like(seq[:, 1:], dtype=torch.bool)
        mask[:, -1] = True
        loss = masked_ce(logits, seq[:, 1:], mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    b = hop_batch(500, 1, 8, generator(99))
    logits, _ = model(b.prompt)
    assert (logits[:, -1].argmax(-1) == b.answer).float().mean() > 0.9
