"""Toy "D" for ``icml26.function_vectors``: tasks, prompts, a small pre-LN decoder, training.

See :mod:`icml26.function_vectors` for the paper, the figures and the claims. This module is
the substrate they run on; everything here is ours (the paper studies LLMs; no LLM weights can
be loaded in this project), following the spec's prototype "D".

Tasks and prompts
-----------------
* Vocabulary: 16 numbers ``0..15``, two fixed-point tokens ``Z1, Z2``, the arrow ``->`` and a
  padding token (``PAD``, never attended to).
* Task ``k in 1..8``: ``f_k(x) = (x + k) mod 16`` on numbers, and ``f_k(Z) = Z`` on the
  fixed-point tokens, so a ``Z -> Z`` demonstration is consistent with every task
  (uninformative) while a number demonstration identifies ``k`` (informative).
* A prompt has ``S = 6`` demonstration slots and the query: ``x_1 -> y_1 ... x_6 -> y_6 x_q ->``
  (length ``3 S + 2 = 20``), slot ``s`` at positions ``3s, 3s+1, 3s+2``; the query at 18, 19.
  Absent slots hold ``PAD`` and are masked out of every attention, so an ``n``-shot prompt
  is the same sequence with ``6 - n`` slots absent. Positions therefore never move: a
  demonstration "seen in isolation" is the full prompt with the other slots masked, which is
  exactly a 1-shot prompt with that demonstration in that slot (and training covers it,
  because training draws random subsets of present slots).
* Demonstration inputs and the query are 7 distinct numbers, so the query is never copied.

Model: pre-LN decoder (3 layers, d = 64, 4 heads of 16, MLP 4x, learned absolute positions,
untied unembedding; about 0.15 M parameters). Attention is written out head by head so that
per-head outputs ``z_h`` (before ``W_O``), pre-softmax scores, attention weights and values are
recorded, head outputs at the final token can be replaced (``head_patch``), attention weights
can be supplied from outside (``attn_override``) and vectors added to the residual stream after
any layer (``resid_add``).

Training (toy-only device, after Yang et al. 2025, arXiv 2501.09240): cross-entropy on
``f_k(x_q)`` at the final position of prompts with ``n = 0..6`` demonstrations (random subsets
of the slots), plus the task-vector-prompting (TVP) auxiliary loss: the residual after layer
``tvp_layer`` at the final position of the n-shot prompt, minus a batch mean of that residual,
is added at the same site of a zero-shot prompt of the same task with another query ``x'``,
and the cross-entropy on ``f_k(x')`` is added to the loss. It forces a query-independent task
code at a prescribed site; LLMs do not need it, and without it tiny models form weak or
unlocalised task vectors (the spec's prototype C; our mutation test). The batch mean is taken
over the n-shot prompts (``TrainConfig.tvp_center = "icl"``), so the injected delta carries
the task only, not the "demonstrations present" offset (see :class:`TrainConfig`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

N_VALUES = 16  # numbers 0..15
Z_TOKENS = (16, 17)  # fixed points of every task
ARROW = 18
PAD = 19
VOCAB = 20
N_TASKS = 8  # shifts k = 1..8
MAX_SHOTS = 6
N_CTX = 3 * MAX_SHOTS + 2  # 20
Q_POS = N_CTX - 2  # position of x_q; the arrow after it (the final token) is at N_CTX - 1
KIND_ABSENT, KIND_INFORMATIVE, KIND_UNINFORMATIVE = 0, 1, 2


# --------------------------------------------------------------------------- configs
@dataclass(frozen=True)
class ModelConfig:
    """The spec's prototype architecture (3 layers, d = 64, 4 heads, MLP 4x)."""

    n_layers: int = 3
    d_model: int = 64
    n_heads: int = 4
    d_mlp: int = 256
    positions: str = "slots"  # "slots": fixed slot positions (ours); "packed": 0.. over the
    #                           present tokens (the spec's variable-length prompts)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "d_mlp"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.positions not in ("slots", "packed"):
            raise ValueError(f"positions must be 'slots' or 'packed', got {self.positions!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                             f"({self.n_heads})")


@dataclass(frozen=True)
class TrainConfig:
    """Toy D training. Defaults: the spec's prototype (batch 64, Adam 3e-3, p(Z-demo) = 0.3,
    n in 0..6, TVP loss after the middle layer); cosine decay, warm-up and clipping are ours.

    ``steps = 3000`` fits the quick budget (ICL emerges after ~1000-2000 steps here).
    ``tvp_center = "icl"`` (ours, see the notebook): the spec subtracts the mean residual of
    the zero-shot prompts, so the injected delta also carries the difference between "six
    demonstrations" and "none" that the layer-0 heads write. The model then read the task
    only together with that signal: on seed 0 (zero-shot-centred TVP, zero-shot prompts out
    of the main loss), replacing all four middle-layer heads with their task means
    transferred the task to shuffled prompts (0.21 -> 0.91) but not to zero-shot ones
    (0.14 -> 0.19) unless the layer-0 heads were replaced as well (1.00).
    Centring on the n-shot prompts leaves the zero-shot state in place, so the downstream
    layer learns to read the task code on top of it.
    """

    steps: int = 3000
    batch: int = 64
    lr: float = 3e-3
    warmup: int = 100
    min_lr_frac: float = 0.1  # cosine decay to 10% of lr
    grad_clip: float = 1.0
    weight_decay: float = 0.0
    p_uninformative: float = 0.3  # spec: p(Z-demo) = 0.3
    tvp: bool = True  # False = the pitfall "tiny models need not form Todd-style FVs"
    tvp_layer: int = 1  # residual after the middle layer (0-based)
    tvp_weight: float = 1.0
    tvp_center: str = "icl"  # subtract the n-shot batch mean (ours) or "zero_shot" (spec)
    zero_shot_loss: bool = True  # main loss on n = 0 prompts too (spec: n in 0..6)
    slots: str = "random"  # present slots: a random subset (ours) or the last n ("last")
    adam_betas: tuple[float, float] = (0.9, 0.98)
    eval_every: int = 250

    def validate(self, model: ModelConfig | None = None) -> None:
        for name in ("steps", "batch", "eval_every"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if not 0 <= self.p_uninformative < 1:
            raise ValueError(f"p_uninformative must be in [0, 1), got {self.p_uninformative}")
        if self.tvp_center not in ("zero_shot", "icl"):
            raise ValueError(f"tvp_center must be 'zero_shot' or 'icl', got {self.tvp_center!r}")
        if model is not None and not 0 <= self.tvp_layer < model.n_layers:
            raise ValueError(f"tvp_layer must be in 0..{model.n_layers - 1}, got "
                             f"{self.tvp_layer}")


# --------------------------------------------------------------------------- tasks, prompts
def _check_tasks(task: torch.Tensor) -> None:
    if task.numel() and (int(task.min()) < 1 or int(task.max()) > N_TASKS):
        raise ValueError(f"task (shift k) must be in 1..{N_TASKS}, got values in "
                         f"[{int(task.min())}, {int(task.max())}]")


def apply_task(task: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``f_k(x)``: shift numbers by ``k`` mod 16, keep ``Z`` tokens: ``[B], [B, ...] -> same``."""
    task = torch.as_tensor(task)
    _check_tasks(task)
    k = task.reshape(task.shape + (1,) * (x.ndim - task.ndim)).to(x.device)
    return torch.where(x < N_VALUES, (x + k) % N_VALUES, x)


@dataclass
class Prompts:
    """A batch of prompts, all of length ``N_CTX`` (absent slots hold PAD).

    ``tokens [B, 20]``, ``kinds [B, 6]`` (0 absent, 1 informative, 2 uninformative Z demo),
    ``task [B]`` (shift k in 1..8), ``query [B]`` (x_q), ``target [B]`` (f_k(x_q)),
    ``xs, ys [B, 6]`` (demonstration tokens; PAD where absent).
    """

    tokens: torch.Tensor
    kinds: torch.Tensor
    task: torch.Tensor
    query: torch.Tensor
    target: torch.Tensor
    xs: torch.Tensor
    ys: torch.Tensor

    def __len__(self) -> int:
        return self.tokens.shape[0]

    @property
    def present(self) -> torch.Tensor:
        return self.kinds != KIND_ABSENT

    def to(self, device) -> Prompts:
        return Prompts(*(getattr(self, f).to(device) for f in
                         ("tokens", "kinds", "task", "query", "target", "xs", "ys")))

    def tile(self, reps: int) -> Prompts:
        """Repeat the batch ``reps`` times (block-wise: ``[P; P; ...]``)."""
        return Prompts(*(getattr(self, f).repeat(reps, *([1] * (getattr(self, f).ndim - 1)))
                         for f in ("tokens", "kinds", "task", "query", "target", "xs", "ys")))

    def with_slots(self, keep: torch.Tensor) -> Prompts:
        """Mask slots out (``keep [B, 6]`` or ``[6]`` bool): the same positions, fewer shots."""
        keep = keep.expand_as(self.kinds).to(self.kinds.device)
        kinds = torch.where(keep, self.kinds, torch.zeros_like(self.kinds))
        xs = torch.where(kinds > 0, self.xs, torch.full_like(self.xs, PAD))
        ys = torch.where(kinds > 0, self.ys, torch.full_like(self.ys, PAD))
        return _assemble(xs, ys, kinds, self.task, self.query)

    def with_ys(self, ys: torch.Tensor) -> Prompts:
        return _assemble(self.xs, torch.where(self.kinds > 0, ys, self.ys), self.kinds,
                         self.task, self.query)


def _assemble(xs, ys, kinds, task, query) -> Prompts:
    b = xs.shape[0]
    demo = torch.stack([xs, torch.full_like(xs, ARROW), ys], -1).reshape(b, 3 * MAX_SHOTS)
    demo = torch.where(kinds.repeat_interleave(3, 1) > 0, demo, torch.full_like(demo, PAD))
    tokens = torch.cat([demo, query[:, None], torch.full_like(query[:, None], ARROW)], 1)
    return Prompts(tokens, kinds, task, query, apply_task(task, query), xs, ys)


def make_prompts(task, n_shots: int | torch.Tensor, generator: torch.Generator,
                 p_uninformative: float = 0.0, shuffle: bool = False,
                 kinds: torch.Tensor | None = None, slots: str = "last") -> Prompts:
    """Draw prompts of the given tasks.

    ``task [B]`` shifts in 1..8 (or an int with ``kinds`` / an int ``n_shots`` giving B via
    ``task`` as a tensor); ``n_shots`` an int or ``[B]`` in 0..6. Present slots are the last
    ``n`` (``slots="last"``, the usual prompt) or a uniformly random subset (``"random"``,
    training). Each present demonstration is a ``Z -> Z`` demo with probability
    ``p_uninformative``; ``kinds [B, 6]`` overrides both (1 informative, 2 Z, 0 absent).
    ``shuffle`` permutes the outputs across the present demonstrations (Todd et al.'s
    corrupted prompts, :func:`shuffle_labels`).
    """
    g = generator
    task = torch.as_tensor(task, dtype=torch.long)
    if task.ndim != 1:
        raise ValueError(f"task must be a 1-D tensor of shifts, got shape {tuple(task.shape)}")
    _check_tasks(task)
    b = task.shape[0]
    if kinds is None:
        n = torch.as_tensor(n_shots, dtype=torch.long).expand(b)
        if n.numel() and (int(n.min()) < 0 or int(n.max()) > MAX_SHOTS):
            raise ValueError(f"n_shots must be in 0..{MAX_SHOTS} (the trained context), got "
                             f"{n_shots}")
        if not 0 <= p_uninformative <= 1:
            raise ValueError(f"p_uninformative must be in [0, 1], got {p_uninformative}")
        if slots == "last":
            present = torch.arange(MAX_SHOTS)[None, :] >= (MAX_SHOTS - n)[:, None]
        elif slots == "random":
            rank = torch.rand(b, MAX_SHOTS, generator=g).argsort(1).argsort(1)
            present = rank < n[:, None]
        else:
            raise ValueError(f"slots must be 'last' or 'random', got {slots!r}")
        unf = torch.rand(b, MAX_SHOTS, generator=g) < p_uninformative
        kinds = torch.where(present, torch.where(unf, KIND_UNINFORMATIVE, KIND_INFORMATIVE),
                            KIND_ABSENT)
    else:
        kinds = torch.as_tensor(kinds, dtype=torch.long).expand(b, MAX_SHOTS).clone()
        if int(kinds.min()) < 0 or int(kinds.max()) > 2:
            raise ValueError("kinds must hold 0 (absent), 1 (informative), 2 (uninformative)")
    perm = torch.rand(b, N_VALUES, generator=g).argsort(1)[:, : MAX_SHOTS + 1]
    xs, query = perm[:, :MAX_SHOTS], perm[:, MAX_SHOTS]
    z = torch.tensor(Z_TOKENS)[torch.randint(0, len(Z_TOKENS), (b, MAX_SHOTS), generator=g)]
    xs = torch.where(kinds == KIND_UNINFORMATIVE, z, xs)
    ys = apply_task(task, xs)
    xs = torch.where(kinds > 0, xs, torch.full_like(xs, PAD))
    ys = torch.where(kinds > 0, ys, torch.full_like(ys, PAD))
    prompts = _assemble(xs, ys, kinds, task, query)
    return shuffle_labels(prompts, g) if shuffle else prompts


def shuffle_labels(prompts: Prompts, generator: torch.Generator) -> Prompts:
    """Todd et al.'s corrupted prompts: permute the outputs ``y`` across the present
    demonstrations of each prompt (inputs, query and target unchanged)."""
    kinds = prompts.kinds
    b = kinds.shape[0]
    absent = (kinds == KIND_ABSENT).float()
    # present slots in random order (absent ones last) ...
    order = (torch.rand(b, MAX_SHOTS, generator=generator) + 2.0 * absent).argsort(1)
    # ... are read by the present slots in ascending order (absent ones last)
    ascending = (2.0 * absent + torch.arange(MAX_SHOTS) / MAX_SHOTS).argsort(1)
    src = torch.empty_like(order).scatter_(1, ascending, order)
    return prompts.with_ys(prompts.ys.gather(1, src))


def tasks_for(count: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``count`` tasks, balanced over 1..8 (``[count]``), shuffled when a generator is given."""
    t = torch.arange(count) % N_TASKS + 1
    if generator is not None:
        t = t[torch.randperm(count, generator=generator)]
    return t


def other_tasks(task: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random task different from ``task`` (per element)."""
    off = torch.randint(1, N_TASKS, task.shape, generator=generator)
    return (task - 1 + off) % N_TASKS + 1


# --------------------------------------------------------------------------- masks
def attention_mask(tokens: torch.Tensor, isolate_blocks: bool = False,
                   positions: torch.Tensor | None = None) -> torch.Tensor:
    """``allowed [B, T, T]``: causal, PAD keys masked (a PAD query sees itself only).

    ``isolate_blocks``: every demonstration token attends only inside its own slot (each
    block is processed as if alone), while the query tokens still see every present token.
    ``positions [B, T]`` (default right-aligned) locate the slots of compacted prompts.
    """
    b, t = tokens.shape
    i = torch.arange(t, device=tokens.device)
    causal = i[None, :] <= i[:, None]
    valid = tokens != PAD
    allowed = causal[None] & (valid[:, None, :] | torch.eye(t, dtype=torch.bool,
                                                            device=tokens.device)[None])
    if isolate_blocks:
        pos = default_positions(b, t, tokens.device) if positions is None else positions
        ids = torch.where(pos >= Q_POS, -1, pos // 3)  # [B, T]
        same = (ids[:, :, None] == ids[:, None, :]) | (ids[:, :, None] < 0)
        allowed = allowed & same
    return allowed


def default_positions(batch: int, length: int, device=None) -> torch.Tensor:
    """Right-aligned positions ``[B, T]``: the final token sits at position 19."""
    if length > N_CTX:
        raise ValueError(f"prompts must have at most {N_CTX} tokens (6 shots), got {length}")
    return torch.arange(N_CTX - length, N_CTX, device=device).expand(batch, length)


def compact(prompts: Prompts) -> tuple[torch.Tensor, torch.Tensor]:
    """Drop the absent slots: ``(tokens [B, 3m+2], positions [B, 3m+2])`` for prompts that all
    hold ``m`` demonstrations. Masked keys carry exactly zero attention, so the compacted
    prompt computes the same final-token outputs with fewer tokens."""
    present = prompts.present
    m = int(present[0].sum()) if len(prompts) else 0
    if len(prompts) and not bool((present.sum(1) == m).all()):
        raise ValueError("compact() needs the same number of demonstrations in every prompt")
    keep = torch.cat([present.repeat_interleave(3, 1),
                      torch.ones(len(prompts), 2, dtype=torch.bool)], 1)
    pos = torch.arange(N_CTX).expand(len(prompts), N_CTX)
    return (prompts.tokens[keep].view(len(prompts), 3 * m + 2),
            pos[keep].view(len(prompts), 3 * m + 2))


# --------------------------------------------------------------------------- model
@dataclass
class HeadPatch:
    """Replace head outputs ``z`` at the final token: ``values [B, L, H, dh]`` where
    ``mask [B, L, H]`` is True."""

    mask: torch.Tensor
    values: torch.Tensor


@dataclass
class Record:
    """Per-layer tensors of one forward pass (lists indexed by layer).

    ``q, k, v [B, T, H, dh]``; ``scores [B, H, T, T]`` (pre-softmax, masked entries -inf);
    ``attn [B, H, T, T]``; ``z [B, T, H, dh]`` (head outputs before ``W_O``);
    ``resid [B, T, D]`` (residual after each layer); ``resid_mid`` (after attention).
    """

    q: list
    k: list
    v: list
    scores: list
    attn: list
    z: list
    resid: list
    resid_mid: list
    embed: torch.Tensor | None = None


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)  # W_O, no bias (exact
        self.ln2 = nn.LayerNorm(cfg.d_model)                           # decomposition)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_mlp), nn.GELU(),
                                 nn.Linear(cfg.d_mlp, cfg.d_model))

    def w_o(self) -> torch.Tensor:
        """``W_O`` per head: ``[H, dh, D]`` (head output ``z_h`` maps to ``z_h @ W_O[h]``)."""
        c = self.cfg
        return self.out.weight.T.reshape(c.n_heads, c.d_head, c.d_model)

    def forward(self, x, allowed, layer, head_patch=None, attn_override=None, rec=None):
        c = self.cfg
        b, t, _ = x.shape
        qh, kh, vh = self.qkv(self.ln1(x)).view(b, t, 3, c.n_heads, c.d_head).permute(
            2, 0, 3, 1, 4)  # 3 x [B, H, T, dh]
        scores = (qh * (1 / math.sqrt(c.d_head))) @ kh.transpose(-1, -2)
        scores = scores.masked_fill(~allowed[:, None], -math.inf)
        a = torch.softmax(scores, -1)
        if attn_override is not None and layer in attn_override:
            heads, weights = attn_override[layer]
            a = torch.where(heads.to(x.device)[None, :, None, None], weights, a)
        z = (a @ vh).transpose(1, 2)  # [B, T, H, dh]
        q, k, v = (u.transpose(1, 2) for u in (qh, kh, vh))
        if head_patch is not None:
            m = head_patch.mask[:, layer]  # [B, H]
            last = torch.where(m[:, :, None], head_patch.values[:, layer], z[:, -1])
            z = torch.cat([z[:, :-1], last[:, None]], 1)
        x = x + self.out(z.reshape(b, t, c.d_model))
        mid = x
        x = x + self.mlp(self.ln2(x))
        if rec is not None:
            for name, val in (("q", q), ("k", k), ("v", v), ("scores", scores), ("attn", a),
                              ("z", z), ("resid_mid", mid), ("resid", x)):
                getattr(rec, name).append(val)
        return x


class FVTransformer(nn.Module):
    """Pre-LN decoder with head hooks. Input ``tokens [B, T]`` (T <= 20, right-aligned:
    the final token is always at position 19), output logits ``[B, T, V]``."""

    def __init__(self, cfg: ModelConfig = ModelConfig()):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.embed = nn.Embedding(VOCAB, cfg.d_model)
        self.pos = nn.Embedding(N_CTX, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, VOCAB, bias=False)

    def init_weights(self, generator: torch.Generator) -> FVTransformer:
        """GPT-2 style init from ``generator`` (std 0.02, residual projections / sqrt(2L))."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.ndim == 1:
                    p.copy_(torch.ones_like(p) if name.endswith("weight") else
                            torch.zeros_like(p))
                else:
                    std = 0.02
                    if name.endswith("out.weight") or name.endswith("mlp.2.weight"):
                        std /= math.sqrt(2 * self.cfg.n_layers)
                    p.copy_(torch.randn(p.shape, generator=generator) * std)
        return self

    def embed_tokens(self, tokens: torch.Tensor, positions: torch.Tensor | None = None
                     ) -> torch.Tensor:
        b, t = tokens.shape
        if positions is None and self.cfg.positions == "packed":
            if t > N_CTX:
                raise ValueError(f"prompts must have at most {N_CTX} tokens (6 shots), got {t}")
            positions = ((tokens != PAD).long().cumsum(1) - 1).clamp(min=0)
        elif positions is None:
            positions = default_positions(b, t, tokens.device)
        elif positions.shape != tokens.shape or int(positions.max()) >= N_CTX:
            raise ValueError(f"positions must match tokens {tuple(tokens.shape)} and lie in "
                             f"0..{N_CTX - 1}")
        return self.embed(tokens) + self.pos(positions)

    def forward(self, tokens, allowed=None, head_patch: HeadPatch | None = None,
                resid_add: torch.Tensor | None = None, attn_override: dict | None = None,
                record: bool = False, last_only: bool = True,
                positions: torch.Tensor | None = None):
        """Logits ``[B, V]`` at the final token (``last_only``) or ``[B, T, V]``.

        ``allowed [B, T, T]`` (default :func:`attention_mask`); ``head_patch`` replaces head
        outputs at the final token; ``resid_add [B, L, D]`` is added to the residual after
        layer ``l`` at the final token; ``attn_override {layer: (heads [H] bool,
        weights [B, H, T, T])}`` replaces those heads' attention weights. With ``record``
        returns ``(logits, Record)``. ``positions [B, T]`` for compacted prompts.
        """
        if allowed is None:
            allowed = attention_mask(tokens)
        rec = Record([], [], [], [], [], [], [], []) if record else None
        x = self.embed_tokens(tokens, positions)
        if rec is not None:
            rec.embed = x
        for layer, block in enumerate(self.blocks):
            x = block(x, allowed, layer, head_patch, attn_override, rec)
            if resid_add is not None:
                x = torch.cat([x[:, :-1], (x[:, -1] + resid_add[:, layer])[:, None]], 1)
                if rec is not None:
                    rec.resid[-1] = x
        h = x[:, -1] if last_only else x
        logits = self.unembed(self.ln_f(h))
        return (logits, rec) if record else logits

    def forward_last(self, cache: Record, allowed_last: torch.Tensor,
                     rows: torch.Tensor | None = None, head_patch: HeadPatch | None = None,
                     resid_add: torch.Tensor | None = None) -> torch.Tensor:
        """Final-token logits ``[B', V]`` re-using the prefix of an unpatched run.

        Interventions at the final token never change earlier positions, so only the final
        token is recomputed: its queries attend to the cached keys/values of ``cache``
        (recorded on the base prompts), row ``rows[i]`` for output ``i`` (default identity).
        ``allowed_last [B, T]`` is the final row of the base prompts' attention mask. Equal
        to :meth:`forward` with the same patch (a test checks it); ~T times cheaper.
        """
        c = self.cfg
        rows = torch.arange(cache.embed.shape[0]) if rows is None else rows
        x = cache.embed[rows, -1]  # [B', D]
        allowed = allowed_last[rows]  # [B', T]
        for layer, blk in enumerate(self.blocks):
            q, k, v = blk.qkv(blk.ln1(x)).view(-1, 3, c.n_heads, c.d_head).unbind(1)
            keys = torch.cat([cache.k[layer][rows, :-1], k[:, None]], 1)  # [B', T, H, dh]
            vals = torch.cat([cache.v[layer][rows, :-1], v[:, None]], 1)
            scores = torch.einsum("bhd,bthd->bht", q, keys) / math.sqrt(c.d_head)
            a = torch.softmax(scores.masked_fill(~allowed[:, None], -math.inf), -1)
            z = torch.einsum("bht,bthd->bhd", a, vals)
            if head_patch is not None:
                m = head_patch.mask[:, layer]
                z = torch.where(m[:, :, None], head_patch.values[:, layer], z)
            x = x + blk.out(z.reshape(-1, c.d_model))
            x = x + blk.mlp(blk.ln2(x))
            if resid_add is not None:
                x = x + resid_add[:, layer]
        return self.unembed(self.ln_f(x))

    def run_from(self, x: torch.Tensor, start: int, allowed: torch.Tensor) -> torch.Tensor:
        """Continue from the residual ``x [B, T, D]`` after layer ``start - 1``; final logits."""
        for layer in range(start, self.cfg.n_layers):
            x = self.blocks[layer](x, allowed, layer)
        return self.unembed(self.ln_f(x[:, -1]))

    def run_to(self, tokens: torch.Tensor, stop: int, allowed=None) -> torch.Tensor:
        """The residual ``[B, T, D]`` after layer ``stop`` (``stop = -1``: the embedding)."""
        allowed = attention_mask(tokens) if allowed is None else allowed
        x = self.embed_tokens(tokens)
        for layer in range(stop + 1):
            x = self.blocks[layer](x, allowed, layer)
        return x


# --------------------------------------------------------------------------- training
def _lr_at(step: int, cfg: TrainConfig) -> float:
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (cfg.min_lr_frac + (1 - cfg.min_lr_frac) * 0.5 * (1 + math.cos(math.pi
                                                                                   * frac)))


@torch.no_grad()
def accuracy(model: FVTransformer, prompts: Prompts, batch: int = 4096, **kw) -> float:
    """Top-1 accuracy of ``f_k(x_q)`` at the final token."""
    hits = 0
    for i in range(0, len(prompts), batch):
        logits = model(prompts.tokens[i: i + batch], **kw)
        hits += int((logits.argmax(-1) == prompts.target[i: i + batch]).sum())
    return hits / max(1, len(prompts))


def _grouped_forward(model: FVTransformer, p: Prompts, n: torch.Tensor, tvp_layer: int,
                     include_zero_shot: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Final-position residuals after the last layer and after ``tvp_layer`` (the TVP
    source), ``[B, D]`` each, computed in two compacted groups (n <= 3 at length 11, n >= 4
    at length 20) so padding costs nothing. Identical to one full-length forward (masked
    keys carry exactly zero weight), about 1.4x cheaper; zero-shot rows are skipped when they
    carry no loss."""
    b = n.shape[0]
    last = torch.zeros(b, model.cfg.d_model, device=n.device)
    src = torch.zeros(b, model.cfg.d_model, device=n.device)
    lo = 0 if include_zero_shot else 1
    for a, m in ((lo, 3), (4, MAX_SHOTS)):
        rows = ((n >= a) & (n <= m)).nonzero()[:, 0]
        if rows.numel() == 0:
            continue
        present = p.kinds[rows] > 0
        absent = ~present
        # keep every present slot and pad with the first absent ones up to m slots
        fill = absent & (absent.long().cumsum(1) <= (m - present.sum(1, keepdim=True)))
        keep = torch.cat([(present | fill).repeat_interleave(3, 1),
                          torch.ones(rows.numel(), 2, dtype=torch.bool, device=n.device)], 1)
        tokens = p.tokens[rows][keep].view(rows.numel(), 3 * m + 2)
        pos = torch.arange(N_CTX, device=n.device).expand(rows.numel(), N_CTX)[keep].view(
            rows.numel(), 3 * m + 2)
        allowed = attention_mask(tokens)
        x = model.embed_tokens(tokens, pos if model.cfg.positions == "slots" else None)
        for layer, block in enumerate(model.blocks):
            x = block(x, allowed, layer)
            if layer == tvp_layer:
                src = src.index_copy(0, rows, x[:, -1])
        last = last.index_copy(0, rows, x[:, -1])
    return last, src


def train_model(mcfg: ModelConfig, tcfg: TrainConfig, seed: int, progress: bool = True,
                device="cpu") -> dict:
    """Train toy D from ``seed``; returns ``{"state": state_dict (cpu), "history": [...],
    "model_config": ..., "train_config": ..., "seed": seed}``.

    Every draw (init and data) comes from generators seeded from ``seed``. ``history`` holds
    ``(step, loss, tvp_loss, clean 6-shot accuracy, zero-shot accuracy)`` every
    ``eval_every`` steps, on a fixed evaluation set.
    """
    mcfg.validate()
    tcfg.validate(mcfg)
    g_init = torch.Generator().manual_seed(1_000_003 * seed + 17)
    g = torch.Generator().manual_seed(1_000_003 * seed + 29)
    g_eval = torch.Generator().manual_seed(1_000_003 * seed + 31)
    model = FVTransformer(mcfg).init_weights(g_init).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tcfg.lr, betas=tuple(tcfg.adam_betas),
                            weight_decay=tcfg.weight_decay)
    ev6 = make_prompts(tasks_for(512, g_eval), MAX_SHOTS, g_eval).to(device)
    ev0 = make_prompts(tasks_for(512, g_eval), 0, g_eval).to(device)
    history = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=tcfg.steps, desc=f"train toy D (seed {seed})", leave=False)
    run_loss = run_tvp = 0.0
    for step in range(tcfg.steps):
        for group in opt.param_groups:
            group["lr"] = _lr_at(step, tcfg)
        task = torch.randint(1, N_TASKS + 1, (tcfg.batch,), generator=g)
        n = torch.randint(0, MAX_SHOTS + 1, (tcfg.batch,), generator=g)
        p = make_prompts(task, n, g, tcfg.p_uninformative, slots=tcfg.slots).to(device)
        last, src = _grouped_forward(model, p, n.to(device), tcfg.tvp_layer,
                                     tcfg.zero_shot_loss)
        ce_main = F.cross_entropy(model.unembed(model.ln_f(last)), p.target, reduction="none")
        keep = torch.ones_like(ce_main) if tcfg.zero_shot_loss else (n >= 1).to(device).float()
        loss = (ce_main * keep).sum() / keep.sum().clamp_min(1)
        tvp_loss = torch.zeros(())
        if tcfg.tvp:
            # zero-shot prompts of the same task with another query x' != x_q
            xq2 = (p.query + torch.randint(1, N_VALUES, p.query.shape, generator=g)
                   .to(device)) % N_VALUES
            tok0 = torch.stack([xq2, torch.full_like(xq2, ARROW)], 1)
            allowed0 = attention_mask(tok0)
            use = (n >= 1).to(device).float()
            r0 = model.run_to(tok0, tcfg.tvp_layer, allowed0)
            if tcfg.tvp_center == "zero_shot":
                delta = src - r0[:, -1].mean(0, keepdim=True)
            else:  # centre on the n-shot prompts: the delta carries only task information
                delta = src - (src * use[:, None]).sum(0, keepdim=True) / use.sum().clamp_min(1)
            r0 = torch.cat([r0[:, :-1], (r0[:, -1] + delta)[:, None]], 1)
            logits0 = model.run_from(r0, tcfg.tvp_layer + 1, allowed0)
            ce = F.cross_entropy(logits0, apply_task(p.task, xq2), reduction="none")
            tvp_loss = (ce * use).sum() / use.sum().clamp_min(1)
            loss = loss + tcfg.tvp_weight * tvp_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if tcfg.grad_clip:
            nn.utils.clip_grad_norm_(model.parameters(), tcfg.grad_clip)
        opt.step()
        run_loss += float(loss.detach())
        run_tvp += float(tvp_loss.detach())
        if (step + 1) % tcfg.eval_every == 0 or step + 1 == tcfg.steps:
            model.eval()
            a6, a0 = accuracy(model, ev6), accuracy(model, ev0)
            model.train()
            k = (step % tcfg.eval_every) + 1
            history.append((step + 1, run_loss / k, run_tvp / k, a6, a0))
            run_loss = run_tvp = 0.0
            if bar is not None:
                bar.set_postfix(loss=f"{history[-1][1]:.3f}", acc6=f"{a6:.3f}")
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    model.eval()
    return {"state": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            "history": history, "model_config": asdict(mcfg), "train_config": asdict(tcfg),
            "seed": seed}


def model_from_state(blob: dict, device="cpu") -> FVTransformer:
    """Rebuild an eval-mode model from :func:`train_model`'s output."""
    model = FVTransformer(ModelConfig(**blob["model_config"]))
    model.load_state_dict({k: v.float() for k, v in blob["state"].items()})
    return model.to(device).eval()
