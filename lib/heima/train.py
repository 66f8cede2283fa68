"""Training and evaluation of one Heima-family model on the hop task.

``train`` draws fresh prompts every step from a generator seeded by the run's seed, so two runs
with the same seed and config are identical; the progressive schedule (the paper's configs
``2_1 .. 2_5``) trains full CoT first and then compresses one more stage per phase, each phase
with its own one-cycle schedule. ``evaluate`` scores answer accuracy by greedy generation and
the interpreter's reconstruction of each stage from real and from shuffled thinking states.
"""

from __future__ import annotations

import torch

from icml26.common import generator, resolve_device
from icml26.heima.model import Heima, TrainConfig, content_accuracy, read_answer
from icml26.heima.task import build, cot_writing_positions, generated_len
from icml26.tinylm import hop_batch, one_cycle


def phases(cfg: TrainConfig) -> list[tuple[str, int | None, int]]:
    """``(format, compressed stages, steps)`` of each training phase."""
    if cfg.kind != "progressive":
        return [(cfg.fmt, None, cfg.steps)]
    first = max(1, round(cfg.steps * cfg.cot_frac))
    rest = cfg.steps - first
    if rest < cfg.hops:
        raise ValueError(f"progressive needs at least {cfg.hops} steps after the CoT phase")
    per = [rest // cfg.hops + (1 if k < rest % cfg.hops else 0) for k in range(cfg.hops)]
    return [("cot", None, first)] + [("heima", k + 1, per[k]) for k in range(cfg.hops)]


def train_generator(seed: int) -> torch.Generator:
    return generator(1_000 + seed)


def eval_generator(seed: int) -> torch.Generator:
    """Prompts for evaluation, drawn apart from the training stream."""
    return generator(900_001 + seed)


def _from_teacher(model: Heima, teacher: dict | None, dev) -> Heima | None:
    """Second design: copy the trained CoT model's encoder into ``model``; the frozen CoT
    model (for the dense targets) when ``dense_weight`` asks for one."""
    if teacher is None or teacher["cfg"].kind != "cot":
        raise ValueError("from_cot needs the trained CoT model (teacher=trained(cfg, 'cot'))")
    model.encoder.load_state_dict({k.removeprefix("encoder."): v for k, v in
                                   teacher["state"].items() if k.startswith("encoder.")})
    c = model.cfg
    if not (c.dense_weight > 0 and c.trains_interpreter and not c.detach and c.kind != "pause"):
        return None
    frozen = load(teacher, dev)
    frozen.requires_grad_(False)
    return frozen


def train(cfg: TrainConfig, seed: int = 0, progress=None, eval_n: int = 200,
          device="cpu", checkpoints: tuple[int, ...] = (), teacher: dict | None = None
          ) -> dict:
    """Train a model; returns ``{"state": state_dict, "curve": [...], "cfg": cfg}``.

    The curve (every ``cfg.eval_every`` steps) holds the step, the phase's format, the encoder
    CE and the answer accuracy of greedy generation on ``eval_n`` held-out prompts in the
    phase's format. ``progress(done, total)`` is called every 50 steps. Trained on ``device``
    (parameters initialised and prompts drawn on the CPU, then moved); the returned state is
    on the CPU. ``checkpoints``: steps at which a CPU copy of the state is kept (returned as
    ``"checkpoints": {step: state}``; the diagnosis probes them). ``teacher``: the trained
    CoT model (``train``'s output) that a ``from_cot`` model starts from and whose states at
    the stages' writing positions are the dense targets.
    """
    cfg.validate()
    dev = resolve_device(device)
    torch.manual_seed(seed)  # parameter init (TinyLM draws from the global generator)
    model = Heima(cfg).to(dev)
    frozen = _from_teacher(model, teacher, dev) if cfg.from_cot else None
    gen = train_generator(seed)
    curve, done, snaps = [], 0, {}
    for fmt, compressed, steps in phases(cfg):
        # foreach: one multi-tensor update instead of a loop over the tensors (torch picks the
        # loop on the CPU by default); the same arithmetic, bit for bit, at half the time
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01, foreach=True)
        sched = one_cycle(opt, steps, cfg.lr)
        for _ in range(steps):
            batch = hop_batch(cfg.batch, cfg.hops, cfg.symbols, gen)
            seq = build(model.vocab, batch, fmt, compressed).to(dev)
            target = None
            if frozen is not None:
                tseq = build(model.vocab, batch, "cot").to(dev)
                with torch.no_grad():
                    hid = frozen.encoder(tseq.tokens)[1][-1]
                target = hid[:, cot_writing_positions(tseq.start, cfg.hops)[:len(seq.think_pos)]]
            loss, enc = model.loss(seq, target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            done += 1
            if cfg.eval_every and (done % cfg.eval_every == 0 or done == cfg.steps):
                acc = answer_accuracy(model, seed, eval_n, fmt, compressed)
                curve.append({"step": done, "format": fmt if compressed is None else
                              f"{fmt}:{compressed}", "encoder_ce": enc, "accuracy": acc})
            if done in checkpoints:
                snaps[done] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            if progress is not None and done % 50 == 0:
                progress(done, cfg.steps)
    model.eval()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    out = {"state": state, "curve": curve, "cfg": cfg}
    if checkpoints:
        out["checkpoints"] = snaps
    return out


def load(trained: dict, device="cpu") -> Heima:
    """The trained model of ``trained`` (its state on the CPU) on ``device``."""
    model = Heima(trained["cfg"])
    model.load_state_dict(trained["state"])
    return model.to(resolve_device(device)).eval()


def _device(model: Heima) -> torch.device:
    return next(model.parameters()).device


@torch.no_grad()
def answer_accuracy(model: Heima, seed: int, n: int, fmt: str | None = None,
                    compressed: int | None = None) -> float:
    """Greedy-generation answer accuracy on ``n`` held-out prompts."""
    cfg = model.cfg
    fmt = fmt or cfg.fmt
    seq = build(model.vocab, hop_batch(n, cfg.hops, cfg.symbols, eval_generator(seed)), fmt,
                compressed).to(_device(model))
    was = model.training
    model.eval()
    out = model.generate(seq.tokens[:, :seq.start], seq.tokens.shape[1] - seq.start)
    model.train(was)
    return float((read_answer(out, model.vocab.ans) == seq.answer).float().mean())


def derangement(n: int, seed: int) -> torch.Tensor:
    """``[n]`` a permutation without a fixed point (a cyclic shift of a random order), drawn
    from ``seed``: prompt ``i`` is given the thinking state of prompt ``derangement[i]``."""
    g = generator(77 + seed)
    shift = torch.randint(1, n, (1,), generator=g)
    order = torch.randperm(n, generator=g)
    derange = torch.empty(n, dtype=torch.long)
    derange[order] = order.roll(int(shift))
    return derange


def tokens_to_answer(generated: torch.Tensor, ans_token: int) -> float:
    """Mean tokens emitted up to and including the answer (the whole output where no ``ANS``
    was emitted): the inference cost the paper counts."""
    is_ans = generated[:, :-1] == ans_token
    n = torch.where(is_ans.any(1), is_ans.float().argmax(1) + 2,
                    torch.full((generated.shape[0],), generated.shape[1],
                               device=generated.device))
    return float(n.float().mean())


@torch.no_grad()
def evaluate(model: Heima, seed: int, n: int = 500) -> dict:
    """Answer accuracy, generated tokens and (for thinking models) the interpreter's content
    accuracy per stage from real states and from states shuffled across prompts.

    ``shuffled`` gives prompt ``i`` the thinking state of prompt ``perm(i)`` (a derangement),
    so the interpreter sees a well-formed state that carries another prompt's reasoning.
    """
    cfg = model.cfg
    model.eval()
    seq = build(model.vocab, hop_batch(n, cfg.hops, cfg.symbols, eval_generator(seed)),
                cfg.fmt).to(_device(model))
    out = model.generate(seq.tokens[:, :seq.start], seq.tokens.shape[1] - seq.start)
    pred = read_answer(out, model.vocab.ans)
    res = {"kind": cfg.kind, "hops": cfg.hops, "accuracy": float((pred == seq.answer).float()
                                                                  .mean()),
           "generated_tokens": generated_len(cfg.fmt, cfg.hops),
           "tokens_to_answer": tokens_to_answer(out, model.vocab.ans), "emitted_thinking": None,
           "real": [], "shuffled": [], "chance": 1.0 / cfg.symbols}
    if not cfg.thinks:
        return res
    res["emitted_thinking"] = float((out[:, :cfg.hops] == seq.tokens[:, seq.start:seq.start +
                                                                      cfg.hops]).float().mean())
    states = model.thinking_states(seq)
    derange = derangement(n, seed).to(states.device)
    for k in range(cfg.hops):
        texts = seq.texts[:, k]
        res["real"].append(content_accuracy(model.interpret(states[:, k]), texts))
        res["shuffled"].append(content_accuracy(model.interpret(states[derange, k]), texts))
    return res
