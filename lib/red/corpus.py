"""The teacher's two kinds of data: generic text and multi-hop chains, in one vocabulary.

Generic text: the characters of CPython's bundled ``pydoc_data.topics`` (the reference
manual's topics, ~465k characters; ships with Python, no download), printable ASCII plus
newline (anything else maps to ``?``). Split by topic: the first 90% of the sorted topics
train, the rest is the held-out text the perplexity is measured on.

Multi-hop reasoning: ``icml26.tinylm.hop_batch`` (a random permutation of ``M`` symbols listed
in key order, a start symbol, the chain ``x_1 .. x_h``), written as
``[HOP, H_h, P(0) .. P(M-1), x0, SEP, x_1 .. x_h]`` with the symbols and markers as their own
tokens after the characters. The model writes the chain one hop at a time (each hop is one
lookup in context); ``h``-hop accuracy is exact-match of the greedy chain's last symbol.
"""

from __future__ import annotations

import functools

import torch

from icml26.common import check_int
from icml26.tinylm import hop_batch

CHARS = "\n" + "".join(chr(c) for c in range(32, 127))  # 96 characters
UNKNOWN = CHARS.index("?")
MAX_HOPS = 3
SYMBOLS = 8  # permutation size M (the shared task's default in heima)
SYMBOL0 = len(CHARS)  # first symbol id
HOP = SYMBOL0 + SYMBOLS  # marks a hop prompt
HOPS0 = HOP + 1  # H_1 .. H_MAX_HOPS: how many hops are asked
SEP = HOPS0 + MAX_HOPS  # the answer chain follows
VOCAB = SEP + 1
BOS = VOCAB  # a fixed first token, only in a model with ``RedConfig.bos`` (one more id)
PROMPT_LEN = 2 + SYMBOLS + 1 + 1  # HOP, H_h, permutation, x0, SEP


def encode(text: str) -> torch.Tensor:
    """Character ids ``[len(text)]`` (unknown characters -> ``?``)."""
    table = {c: i for i, c in enumerate(CHARS)}
    return torch.tensor([table.get(c, UNKNOWN) for c in text], dtype=torch.long)


def decode(ids) -> str:
    return "".join(CHARS[i] if i < len(CHARS) else f"<{i}>" for i in ids)


@functools.lru_cache(maxsize=1)
def text_split() -> tuple[torch.Tensor, torch.Tensor]:
    """``(train, held_out)`` character ids of the pydoc topics (90/10 by sorted topic)."""
    from pydoc_data.topics import topics

    keys = sorted(topics)
    cut = int(0.9 * len(keys))
    train = "\n".join(topics[k] for k in keys[:cut])
    held = "\n".join(topics[k] for k in keys[cut:])
    return encode(train), encode(held)


def text_windows(src: torch.Tensor, n: int, length: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` random windows ``[n, length]`` of ``src`` (ids), drawn from ``gen``."""
    check_int("n", n, 1)
    check_int("length", length, 2, len(src))
    start = torch.randint(len(src) - length + 1, (n,), generator=gen)
    return src[start[:, None] + torch.arange(length)]


def hop_sequences(n: int, hops: int, gen: torch.Generator) -> torch.Tensor:
    """``n`` full hop sequences ``[n, PROMPT_LEN + hops]`` (prompt, then the chain)."""
    check_int("hops", hops, 1, MAX_HOPS)
    b = hop_batch(n, hops, SYMBOLS, gen)
    head = torch.tensor([HOP, HOPS0 + hops - 1]).expand(n, 2)
    sep = torch.full((n, 1), SEP)
    return torch.cat([head, b.prompt + SYMBOL0, sep, b.chain + SYMBOL0], 1)


def mixed_hop_batch(n: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Hop sequences with 1..MAX_HOPS hops (padded with SEP) and the mask of their chain
    targets: ``(seq [n, PROMPT_LEN + MAX_HOPS], target_mask [n, PROMPT_LEN + MAX_HOPS - 1])``
    where ``target_mask[:, i]`` says whether ``seq[:, i + 1]`` is a chain symbol."""
    hops = torch.randint(1, MAX_HOPS + 1, (n,), generator=gen)
    length = PROMPT_LEN + MAX_HOPS
    seq = torch.full((n, length), SEP)
    mask = torch.zeros(n, length - 1, dtype=torch.bool)
    for h in range(1, MAX_HOPS + 1):
        rows = (hops == h).nonzero()[:, 0]
        if len(rows):
            seq[rows, :PROMPT_LEN + h] = hop_sequences(len(rows), h, gen)
            mask[rows, PROMPT_LEN - 1:PROMPT_LEN - 1 + h] = True
    return seq, mask
