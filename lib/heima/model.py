"""Heima's two models and their training loss: the encoder that thinks in hidden tokens and
the interpreter that decodes each thinking state back into its stage's text.

* encoder: ``icml26.tinylm.TinyLM`` over the task sequences (``task.build``);
* thinking state of stage ``k``: the encoder's last-layer residual stream at ``T_k``
  (``hidden[-1]``, as the authors' code takes the last hidden state of the thinking token);
* ``proj``: the code's ``abstract_projection`` (``d_model -> interp_d``);
* interpreter, two kinds: ``"mlp"`` (default) emits the stage's ``STAGE_LEN`` tokens at once
  from the projected state (``interp_layers`` layers, the last one a linear map to
  ``STAGE_LEN x V`` logits; the spec's prototype read the state with linear heads), or
  ``"lm"``, a small ``TinyLM`` fed ``[proj(state), text[:-1]]`` as input embeddings and
  decoded greedily (the paper's decoder LLM in miniature; about 1.5x the training cost);
* joint loss (the paper's): ``CE(encoder's generated tokens) + w * mean_k CE(interpreter, k)``.

Variants by two switches of :class:`TrainConfig`: ``interp_weight = 0`` trains no interpreter
(pause tokens without any decoder); ``detach`` feeds the interpreter ``state.detach()``, so it
is trained but the encoder gets no gradient from it. ``kind="pause"`` always detaches: its
interpreter is a probe of states the encoder was never asked to fill.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from icml26.common import check_choice, check_int
from icml26.heima.task import CONTENT, MAX_HOPS, STAGE_LEN, Sequences, Vocab, context_len
from icml26.tinylm import LMConfig, TinyLM, masked_ce

KINDS = ("nocot", "cot", "heima", "pause", "progressive")
INTERPRETERS = ("mlp", "lm")


@dataclass(frozen=True)
class TrainConfig:
    """One model's training. Defaults: the spec's calibrated prototype (d=32, 4 layers, 2
    heads, AdamW 3e-3 one-cycle, 8 symbols) at a CI-sized step budget."""

    kind: str = "heima"  # one of KINDS
    hops: int = 2  # binding claims at 2 hops; 3 is the limit figure
    symbols: int = 8  # the permutation of 8 symbols
    d_model: int = 32
    n_layers: int = 4
    n_heads: int = 2
    interp_d: int = 32  # the interpreter: 2 layers (spec)
    interp_layers: int = 2
    interp_weight: float = 1.0  # 0 drops the interpreter loss (mutation)
    detach: bool = False  # True: no gradient from the interpreter into the encoder (always
    # so for "pause": its interpreter only reads states the encoder was never asked to fill)
    interpreter: str = "mlp"  # "mlp" (stage text at once) or "lm" (autoregressive)
    batch: int = 64
    steps: int = 600  # total steps (progressive: CoT phase + one phase per stage)
    cot_frac: float = 0.4  # progressive: share of steps spent on full CoT first
    lr: float = 3e-3
    eval_every: int = 0  # record a training curve every n steps (0: none)
    from_cot: bool = False  # second design (issue 34): heima / pause start from the trained
    # CoT model's encoder (the paper's progressive encoding starts from the CoT model)
    dense_weight: float = 0.0  # second design: weight of the dense target, each thinking
    # state pulled towards the CoT model's last-layer state where it writes the stage's result

    @property
    def fmt(self) -> str:
        return {"pause": "heima", "progressive": "heima"}.get(self.kind, self.kind)

    @property
    def thinks(self) -> bool:
        return self.fmt == "heima"

    @property
    def trains_interpreter(self) -> bool:
        return self.thinks and self.interp_weight > 0

    def validate(self) -> None:
        check_choice("kind", self.kind, KINDS)
        check_choice("interpreter", self.interpreter, INTERPRETERS)
        check_int("hops", self.hops, 1, MAX_HOPS)
        check_int("symbols", self.symbols, 2, 64)
        check_int("steps", self.steps, 1)
        check_int("batch", self.batch, 1)
        check_int("interp_layers", self.interp_layers, 1, 8)
        check_int("eval_every", self.eval_every, 0)
        if self.interp_weight < 0 or self.dense_weight < 0:
            raise ValueError("interp_weight and dense_weight must be >= 0, got "
                             f"{self.interp_weight}, {self.dense_weight}")
        if not 0 < self.cot_frac < 1:
            raise ValueError(f"cot_frac must be in (0, 1), got {self.cot_frac}")
        if self.d_model % self.n_heads or self.interp_d % 2:
            raise ValueError("d_model must be divisible by n_heads and interp_d by 2")


class Heima(nn.Module):
    """The encoder, the ``abstract_projection`` and the interpreter of one model."""

    def __init__(self, cfg: TrainConfig):
        super().__init__()
        cfg.validate()
        self.cfg, self.vocab = cfg, Vocab(cfg.symbols)
        self.encoder = TinyLM(LMConfig(self.vocab.size, context_len(cfg.symbols, cfg.hops),
                                       cfg.d_model, cfg.n_layers, cfg.n_heads))
        self.proj = nn.Linear(cfg.d_model, cfg.interp_d)
        if cfg.interpreter == "lm":
            self.interpreter = TinyLM(LMConfig(self.vocab.size, 1 + STAGE_LEN, cfg.interp_d,
                                               cfg.interp_layers, 2))
        else:
            layers: list[nn.Module] = []
            for _ in range(cfg.interp_layers - 1):
                layers += [nn.Linear(cfg.interp_d, cfg.interp_d), nn.GELU()]
            self.interpreter = nn.Sequential(*layers,
                                             nn.Linear(cfg.interp_d, STAGE_LEN * self.vocab.size))

    def thinking_states(self, seq: Sequences) -> torch.Tensor:
        """``[B, c, d_model]``: the last-layer state at each thinking token of ``seq``."""
        _, hidden = self.encoder(seq.tokens)
        return hidden[-1][:, list(seq.think_pos)]

    def interpret_logits(self, states: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Teacher-forced interpreter logits ``[B, STAGE_LEN, V]`` for ``states [B, d]`` and
        their stage ``texts [B, STAGE_LEN]`` (``logits[:, i]`` predicts ``texts[:, i]``)."""
        if self.cfg.interpreter == "mlp":
            return self.interpreter(self.proj(states)).view(-1, STAGE_LEN, self.vocab.size)
        prefix = self.proj(states)[:, None]
        emb = torch.cat([prefix, self.interpreter.tok(texts[:, :-1])], 1)
        return self.interpreter(embeds=emb)[0]

    @torch.no_grad()
    def interpret(self, states: torch.Tensor) -> torch.Tensor:
        """Greedy reconstruction ``[B, STAGE_LEN]`` of stage texts from ``states [B, d]``."""
        if self.cfg.interpreter == "mlp":
            return self.interpret_logits(states, None).argmax(-1)
        prefix = self.proj(states)[:, None]
        emb = prefix
        out = []
        for _ in range(STAGE_LEN):
            nxt = self.interpreter(embeds=emb)[0][:, -1].argmax(-1)
            out.append(nxt)
            emb = torch.cat([emb, self.interpreter.tok(nxt)[:, None]], 1)
        return torch.stack(out, 1)

    def loss(self, seq: Sequences, target: torch.Tensor | None = None
             ) -> tuple[torch.Tensor, float]:
        """Joint loss and the encoder CE alone (for the curves). ``target [B, c, d]``: the
        dense target of each thinking state (the CoT model's state where it writes stage
        ``k``'s result), added as ``w * dense_weight * MSE / mean(target^2)`` (second design;
        scaled by ``interp_weight`` and cut by ``detach`` like the interpreter loss: both are
        the state supervision the pause model lacks)."""
        logits, hidden = self.encoder(seq.tokens[:, :-1])
        enc = masked_ce(logits, seq.tokens[:, 1:], seq.gen_mask)
        total = enc
        c = len(seq.think_pos)
        if self.cfg.trains_interpreter and c:
            # the state at T_k is hidden[-1] at position think_pos[k] (the input side)
            states = hidden[-1][:, list(seq.think_pos)]
            if self.cfg.detach or self.cfg.kind == "pause":
                states = states.detach()
            b = states.shape[0]
            lg = self.interpret_logits(states.reshape(b * c, -1),
                                       seq.texts[:, :c].reshape(b * c, STAGE_LEN))
            tgt = seq.texts[:, :c].reshape(b * c, STAGE_LEN)
            interp = nn.functional.cross_entropy(lg.reshape(-1, lg.shape[-1]), tgt.reshape(-1))
            total = total + self.cfg.interp_weight * interp
            if target is not None and self.cfg.dense_weight > 0:
                dense = (states - target).square().mean() / target.square().mean()
                total = total + self.cfg.interp_weight * self.cfg.dense_weight * dense
        return total, float(enc.detach())

    @torch.no_grad()
    def generate(self, prefix: torch.Tensor, n: int) -> torch.Tensor:
        """Greedy continuation ``[B, n]`` of ``prefix [B, T]``."""
        seq = prefix
        for _ in range(n):
            nxt = self.encoder(seq)[0][:, -1].argmax(-1)
            seq = torch.cat([seq, nxt[:, None]], 1)
        return seq[:, prefix.shape[1]:]


def read_answer(generated: torch.Tensor, ans_token: int) -> torch.Tensor:
    """``[B]`` the token after the first ``ANS`` of each row (-1 where there is none)."""
    is_ans = generated[:, :-1] == ans_token
    has = is_ans.any(1)
    first = is_ans.float().argmax(1)
    pred = generated.gather(1, (first + 1)[:, None])[:, 0]
    return torch.where(has, pred, torch.full_like(pred, -1))


def content_accuracy(pred: torch.Tensor, texts: torch.Tensor) -> float:
    """Share of the content tokens (``a`` and ``b``) of ``texts [N, STAGE_LEN]`` that ``pred``
    reproduces; the template tokens are not counted (they are free)."""
    idx = list(CONTENT)
    return float((pred[:, idx] == texts[:, idx]).float().mean())
