"""The sequences of ``heima``: the hop task written as no-CoT, verbose CoT and hidden thinking.

Every sequence starts with the shared hop prompt (``icml26.tinylm.hop_batch``: the permutation
``P`` of ``M`` symbols in key order, then ``x0``) and a query token ``Q``; what follows is what
the model generates:

* no-CoT:  ``ANS y``                                         (2 tokens)
* CoT:     ``stage_1 .. stage_h ANS y``                      (``h * STAGE_LEN + 2`` tokens)
* Heima:   ``T_1 .. T_h ANS y``                              (``h + 2`` tokens)
* partly compressed (the progressive schedule): stages ``1 .. c`` as ``T_k``, the rest as text.

A stage's text is verbose on purpose (the paper's stages are 30-70 tokens each):
``STEP k FROM a APPLY P GIVES b DONE ;`` with ``a = x_{k-1}``, ``b = x_k`` (``STAGE_LEN`` = 10
tokens; ``a`` and ``b`` are its content, the rest is template). The interpreter reconstructs
exactly this text from the thinking state of ``T_k``. Pause tokens use the same sequence as
Heima; only the training loss differs.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from icml26.common import check_int
from icml26.tinylm import HopBatch

MAX_HOPS = 4
STAGE_WORDS = ("STEP", "FROM", "APPLY", "P", "GIVES", "DONE", ";")
STAGE_LEN = 10  # STEP k FROM a APPLY P GIVES b DONE ;
CONTENT = (3, 7)  # positions of a and b in a stage's text
FORMATS = ("nocot", "cot", "heima")


@dataclass(frozen=True)
class Vocab:
    """Token ids: symbols ``0 .. M-1``, then ``Q``, ``ANS``, thinking tokens ``T_1 .. T_H``,
    stage numbers ``D_1 .. D_H`` and the stage template words."""

    symbols: int

    @property
    def q(self) -> int:
        return self.symbols

    @property
    def ans(self) -> int:
        return self.symbols + 1

    def think(self, k: int) -> int:
        """``T_k``, ``k`` in ``1 .. MAX_HOPS``."""
        return self.symbols + 1 + k

    def digit(self, k: int) -> int:
        return self.symbols + 1 + MAX_HOPS + k

    def word(self, w: str) -> int:
        return self.symbols + 2 + 2 * MAX_HOPS + STAGE_WORDS.index(w)

    @property
    def size(self) -> int:
        return self.symbols + 2 + 2 * MAX_HOPS + len(STAGE_WORDS)


def stage_text(vocab: Vocab, k: int, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``[B, STAGE_LEN]`` token ids of stage ``k``'s text for ``a -> b``."""
    n = a.shape[0]

    def const(t: int) -> torch.Tensor:
        return torch.full((n,), t, dtype=torch.long)

    w = vocab.word
    cols = [const(w("STEP")), const(vocab.digit(k)), const(w("FROM")), a, const(w("APPLY")),
            const(w("P")), const(w("GIVES")), b, const(w("DONE")), const(w(";"))]
    return torch.stack(cols, 1)


def stage_texts(vocab: Vocab, batch: HopBatch) -> torch.Tensor:
    """``[B, h, STAGE_LEN]``: every stage's text (what the interpreter must reconstruct)."""
    x0 = batch.prompt[:, -1]
    prev = torch.cat([x0[:, None], batch.chain[:, :-1]], 1)
    return torch.stack([stage_text(vocab, k + 1, prev[:, k], batch.chain[:, k])
                        for k in range(batch.chain.shape[1])], 1)


def generated_len(fmt: str, hops: int, compressed: int | None = None) -> int:
    """Tokens a model of this format generates after ``Q`` (its inference cost)."""
    if fmt == "nocot":
        return 2
    c = 0 if fmt == "cot" else (hops if compressed is None else compressed)
    return c + (hops - c) * STAGE_LEN + 2


@dataclass(frozen=True)
class Sequences:
    """``tokens [B, T]``; ``start`` = index of the first generated token (after ``Q``);
    ``think_pos [c]`` = positions of ``T_1 .. T_c`` (empty when nothing is compressed);
    ``texts [B, h, STAGE_LEN]`` the stage texts; ``answer [B]``."""

    tokens: torch.Tensor
    start: int
    think_pos: tuple[int, ...]
    texts: torch.Tensor
    answer: torch.Tensor

    def to(self, device) -> Sequences:
        """The same sequences with their tensors on ``device``."""
        return Sequences(self.tokens.to(device), self.start, self.think_pos,
                         self.texts.to(device), self.answer.to(device))

    @property
    def gen_mask(self) -> torch.Tensor:
        """``[B, T-1]``: True where ``tokens[:, 1:]`` is generated (the next-token CE mask)."""
        mask = torch.zeros(self.tokens.shape[1] - 1, dtype=torch.bool,
                           device=self.tokens.device)
        mask[self.start - 1:] = True
        return mask.expand(self.tokens.shape[0], -1)


def build(vocab: Vocab, batch: HopBatch, fmt: str, compressed: int | None = None) -> Sequences:
    """The full training sequence of ``batch`` in format ``fmt``; for ``"heima"``,
    ``compressed`` stages (default all) are thinking tokens and the rest stay text."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    hops = batch.chain.shape[1]
    check_int("hops", hops, 1, MAX_HOPS)
    if batch.perm.shape[1] != vocab.symbols:
        raise ValueError(f"batch has {batch.perm.shape[1]} symbols, vocab {vocab.symbols}")
    n = batch.prompt.shape[0]
    texts = stage_texts(vocab, batch)
    c = {"nocot": 0, "cot": 0, "heima": hops if compressed is None else compressed}[fmt]
    check_int("compressed", c, 0, hops)
    parts = [batch.prompt, torch.full((n, 1), vocab.q)]
    start = batch.prompt.shape[1] + 1
    think_pos = []
    pos = start
    if fmt != "nocot":
        for k in range(hops):
            if k < c:
                parts.append(torch.full((n, 1), vocab.think(k + 1)))
                think_pos.append(pos)
                pos += 1
            else:
                parts.append(texts[:, k])
                pos += STAGE_LEN
    parts += [torch.full((n, 1), vocab.ans), batch.answer[:, None]]
    return Sequences(torch.cat(parts, 1), start, tuple(think_pos), texts, batch.answer)


def cot_writing_positions(start: int, hops: int) -> list[int]:
    """Positions in a CoT sequence where stage ``k``'s result is written: the ``GIVES`` token
    whose next token is ``b = x_k``."""
    return [start + k * STAGE_LEN + CONTENT[1] - 1 for k in range(hops)]


def context_len(symbols: int, hops: int) -> int:
    """Longest sequence of the task (the CoT format): the encoder's ``n_ctx``."""
    return symbols + 2 + generated_len("cot", hops)
