"""The generator zoo's language models: character n-gram LMs and tiny GRU LMs.

Every model maps a batch of id sequences ``[B, L]`` to next-character log-probabilities
``[B, L-1, V]`` (position ``t`` predicts ``x[t+1]``) and samples continuations of prefixes at a
temperature.  The same objects are the *sources* (generating machine text) and the
*surrogates* (scoring text for the zero-shot criterion).

N-gram LM (order ``n``): interpolated absolute discounting (Kneser-Ney without continuation
counts), ``p_k(c|h) = max(C(h c) - D, 0) / C(h) + D N1+(h .) / C(h) p_{k-1}(c|h')`` with
``h'`` the context shortened by one, down to an add-one unigram; a context never seen falls back
to the shorter one.  Contexts are packed into ``int64`` keys (7 bits per character), counts kept
in a CSR matrix ``[contexts, V]`` and looked up with ``searchsorted``, so scoring and sampling
are vectorised over positions.

GRU LM: embedding -> one GRU layer -> linear, trained with Adam on random windows of its
corpus for a fixed number of steps (seconds on one CPU core).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from icml26.common import global_rng_from, resolve_device
from icml26.detectrouter.corpus import VOCAB

DISCOUNT = 0.75  # Kneser-Ney's customary D


# --------------------------------------------------------------------------- n-gram
def _keys(windows: np.ndarray) -> np.ndarray:
    """Pack ``[..., k]`` ids into int64 keys (7 bits each; k <= 8)."""
    key = np.zeros(windows.shape[:-1], dtype=np.int64)
    for j in range(windows.shape[-1]):
        key = (key << 7) | windows[..., j].astype(np.int64)
    return key


class NgramLM:
    """Character n-gram LM of ``order`` (context length ``order - 1``) on ``train [n, L]``."""

    def __init__(self, order: int, train: np.ndarray):
        if not 1 <= order <= 8:
            raise ValueError(f"order must be in [1, 8], got {order}")
        self.order = order
        flat = np.asarray(train, dtype=np.uint8)
        uni = np.bincount(flat.ravel(), minlength=VOCAB).astype(np.float64)[:VOCAB] + 1.0
        uni[0] = 1e-3  # the unknown id keeps a little mass, never zero
        self.unigram = uni / uni.sum()
        self.tables = []  # per context length k = 1..order-1: (sorted keys, CSR counts)
        for k in range(1, order):
            win = np.lib.stride_tricks.sliding_window_view(flat, k + 1, axis=1).reshape(-1, k + 1)
            ctx = _keys(win[:, :k])
            keys, inv = np.unique(ctx, return_inverse=True)
            counts = sp.csr_matrix((np.ones(len(ctx), dtype=np.float32),
                                    (inv.ravel(), win[:, k].astype(np.int64))),
                                   shape=(len(keys), VOCAB))
            counts.sum_duplicates()
            self.tables.append((keys, counts))

    def next_probs(self, contexts: np.ndarray) -> np.ndarray:
        """``[N, order-1]`` ids (most recent last; 0-padded) -> probabilities ``[N, V]``."""
        n = contexts.shape[0]
        p = np.broadcast_to(self.unigram, (n, VOCAB)).astype(np.float32)
        for k, (keys, counts) in enumerate(self.tables, start=1):
            ctx = _keys(contexts[:, contexts.shape[1] - k:])
            pos = np.minimum(np.searchsorted(keys, ctx), len(keys) - 1)
            seen = keys[pos] == ctx
            if not seen.any():
                continue
            rows = counts[pos[seen]].toarray()
            total = rows.sum(1, keepdims=True)
            distinct = (rows > 0).sum(1, keepdims=True)
            p = p.copy()
            p[seen] = (np.maximum(rows - DISCOUNT, 0) + DISCOUNT * distinct * p[seen]) / total
        return p

    def log_probs(self, x: np.ndarray, chunk: int = 8192) -> torch.Tensor:
        """``x [B, L]`` -> log p of the next char at every position, ``[B, L-1, V]``."""
        x = np.asarray(x, dtype=np.uint8)
        b, length = x.shape
        pad = np.concatenate([np.zeros((b, max(self.order - 1, 1)), np.uint8), x], axis=1)
        c = max(self.order - 1, 1)
        ctx = np.lib.stride_tricks.sliding_window_view(pad, c, axis=1)[:, 1: length]
        ctx = ctx.reshape(-1, c)
        if self.order == 1:
            ctx = ctx[:, :0]
        out = np.empty((len(ctx), VOCAB), np.float32)
        for lo in range(0, len(ctx), chunk):
            out[lo: lo + chunk] = self.next_probs(ctx[lo: lo + chunk])
        return torch.from_numpy(np.log(out)).reshape(b, length - 1, VOCAB)

    def sample(self, prefix: np.ndarray, n_new: int, temperature: float,
               gen: torch.Generator) -> np.ndarray:
        """Continue every row of ``prefix [B, P]`` by ``n_new`` characters -> ``[B, P+n_new]``."""
        x = np.asarray(prefix, dtype=np.uint8)
        c = self.order - 1
        for _ in range(n_new):
            p = self.next_probs(x[:, x.shape[1] - c:] if c else x[:, :0])
            x = np.concatenate([x, _draw(torch.from_numpy(np.log(p)), temperature, gen)], 1)
        return x


def _draw(log_p: torch.Tensor, temperature: float, gen: torch.Generator) -> np.ndarray:
    """One id per row of ``log_p [B, V]`` at ``temperature`` (id 0 never drawn)."""
    logits = log_p.cpu() / temperature  # drawn on the CPU generator whatever the device
    logits[:, 0] = -torch.inf
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=gen).numpy().astype(
        np.uint8)


# --------------------------------------------------------------------------- GRU
class GRULM(nn.Module):
    """Character GRU LM: ``[B, L]`` ids -> next-char logits ``[B, L, V]``."""

    def __init__(self, hidden: int, embed: int = 32):
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Embedding(VOCAB, embed)
        self.rnn = nn.GRU(embed, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None):
        y, h = self.rnn(self.emb(x), h)
        return self.out(y), h

    @torch.no_grad()
    def log_probs(self, x: np.ndarray) -> torch.Tensor:
        """``x [B, L]`` -> log p of the next char at every position, ``[B, L-1, V]``."""
        ids = torch.as_tensor(np.asarray(x, dtype=np.int64))[:, :-1]
        logits, _ = self(ids.to(self.out.weight.device))
        return torch.log_softmax(logits.float(), -1)

    @torch.no_grad()
    def sample(self, prefix: np.ndarray, n_new: int, temperature: float,
               gen: torch.Generator) -> np.ndarray:
        """Continue every row of ``prefix [B, P]`` by ``n_new`` characters."""
        dev = self.out.weight.device
        x = torch.as_tensor(np.asarray(prefix, dtype=np.int64))
        logits, h = self(x.to(dev))
        out = [x.numpy().astype(np.uint8)]
        for _ in range(n_new):
            nxt = _draw(torch.log_softmax(logits[:, -1].float(), -1), temperature, gen)
            out.append(nxt)
            logits, h = self(torch.as_tensor(nxt, dtype=torch.int64).to(dev), h)
        return np.concatenate(out, 1)


@dataclass(frozen=True)
class GRUTrain:
    """Training of a tiny GRU LM (defaults: seconds on one CPU core)."""

    steps: int = 300
    batch: int = 32
    window: int = 64
    lr: float = 3e-3


def train_gru(train: np.ndarray, hidden: int, cfg: GRUTrain, gen: torch.Generator,
              device="cpu") -> GRULM:
    """Fit a :class:`GRULM` on random windows of ``train [n, L]`` (flattened) on ``device``
    (initialised and batches drawn on the CPU, then moved)."""
    dev = resolve_device(device)
    flat = torch.as_tensor(np.asarray(train, dtype=np.int64).ravel())
    with global_rng_from(gen):  # the initial parameters: the same draws as a seed alone
        model = GRULM(hidden).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for _ in range(cfg.steps):
        start = torch.randint(0, len(flat) - cfg.window - 1, (cfg.batch,), generator=gen)
        idx = start[:, None] + torch.arange(cfg.window + 1)
        seq = flat[idx].to(dev)
        logits, _ = model(seq[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    return model
