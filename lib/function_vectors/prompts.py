"""Tasks and prompts of toy "D" (:mod:`icml26.function_vectors`): vocabulary, shift tasks,
demonstration slots, Todd et al.'s shuffled-label corruption, attention masks.

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

Everything here is ours (the paper studies LLMs), following the spec's prototype "D".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

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


# --------------------------------------------------------------------------- tasks, prompts
def check_tasks(task: torch.Tensor) -> None:
    if task.numel() and (int(task.min()) < 1 or int(task.max()) > N_TASKS):
        raise ValueError(f"task (shift k) must be in 1..{N_TASKS}, got values in "
                         f"[{int(task.min())}, {int(task.max())}]")


def apply_task(task: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``f_k(x)``: shift numbers by ``k`` mod 16, keep ``Z`` tokens: ``[B], [B, ...] -> same``."""
    task = torch.as_tensor(task)
    check_tasks(task)
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
        return assemble(xs, ys, kinds, self.task, self.query)

    def with_ys(self, ys: torch.Tensor) -> Prompts:
        return assemble(self.xs, torch.where(self.kinds > 0, ys, self.ys), self.kinds,
                         self.task, self.query)


def assemble(xs, ys, kinds, task, query) -> Prompts:
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
    check_tasks(task)
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
    prompts = assemble(xs, ys, kinds, task, query)
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

