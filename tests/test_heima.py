"""Tests for icml26.heima: the sequences, the joint loss, training, evaluation and the claims."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace

import pytest
import torch

from icml26 import heima
from icml26.heima import (
    CONTENT,
    STAGE_LEN,
    Heima,
    HeimaConfig,
    TrainConfig,
    Vocab,
    build,
    generated_len,
)
from icml26.tinylm import hop_batch

TINY = dict(d_model=16, n_layers=2, interp_d=16, interp_layers=1, batch=8, steps=4)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


# --------------------------------------------------------------------------- sequences
def test_vocab_ids_are_distinct():
    v = Vocab(8)
    ids = [v.q, v.ans, *(v.think(k) for k in range(1, heima.MAX_HOPS + 1)),
           *(v.digit(k) for k in range(1, heima.MAX_HOPS + 1)),
           *(v.word(w) for w in ("STEP", "FROM", "APPLY", "P", "GIVES", "DONE", ";"))]
    assert len(set(ids)) == len(ids) and min(ids) == 8 and max(ids) == v.size - 1


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_formats_have_their_lengths_and_contents(hops):
    v = Vocab(8)
    b = hop_batch(5, hops, 8, gen())
    for fmt in heima.FORMATS:
        s = build(v, b, fmt)
        assert s.tokens.shape == (5, 9 + 1 + generated_len(fmt, hops))
        assert s.start == 10 and (s.tokens[:, 9] == v.q).all()
        assert (s.tokens[:, -1] == b.answer).all() and (s.tokens[:, -2] == v.ans).all()
    assert generated_len("cot", hops) == 10 * hops + 2 and generated_len("heima", hops) == hops + 2
    s = build(v, b, "heima")
    assert s.think_pos == tuple(range(10, 10 + hops))
    assert [int(s.tokens[0, p]) for p in s.think_pos] == [v.think(k + 1) for k in range(hops)]
    # stage k's text: a = x_{k-1}, b = x_k; the CoT sequence spells the stages out
    prev = torch.cat([b.prompt[:, -1:], b.chain[:, :-1]], 1)
    assert torch.equal(s.texts[:, :, CONTENT[0]], prev)
    assert torch.equal(s.texts[:, :, CONTENT[1]], b.chain)
    cot = build(v, b, "cot")
    assert torch.equal(cot.tokens[:, 10:10 + STAGE_LEN * hops], s.texts.reshape(5, -1))


def test_partly_compressed_sequence_keeps_the_later_stages_as_text():
    v = Vocab(8)
    b = hop_batch(3, 3, 8, gen())
    s = build(v, b, "heima", compressed=1)
    assert s.think_pos == (10,) and s.tokens.shape[1] == 10 + generated_len("heima", 3, 1)
    assert torch.equal(s.tokens[:, 11:11 + STAGE_LEN], s.texts[:, 1])


def test_bad_inputs_raise():
    v = Vocab(8)
    with pytest.raises(ValueError, match="format"):
        build(v, hop_batch(2, 2, 8, gen()), "latent")
    with pytest.raises(ValueError, match="symbols"):
        build(v, hop_batch(2, 2, 6, gen()), "cot")
    with pytest.raises(ValueError, match="compressed"):
        build(v, hop_batch(2, 2, 8, gen()), "heima", compressed=3)
    with pytest.raises(ValueError, match="kind"):
        TrainConfig(kind="coconut").validate()
    with pytest.raises(ValueError, match="scale"):
        heima.config_for("huge")
    with pytest.raises(ValueError, match="mutation"):
        heima.with_mutation(HeimaConfig(), "typo")


def test_read_answer_and_tokens_to_answer():
    ans = 99
    out = torch.tensor([[1, 2, ans, 5, 0], [ans, 3, 4, 4, 4], [1, 1, 1, 1, ans]])
    assert heima.read_answer(out, ans).tolist() == [5, 3, -1]
    assert heima.tokens_to_answer(out, ans) == pytest.approx((4 + 2 + 5) / 3)


# --------------------------------------------------------------------------- the joint loss
def _encoder_grad_from_interpreter(**kw) -> float:
    """Norm of the encoder's gradient from the interpreter term alone (answer CE removed by
    differencing with interp_weight = 0 at the same weights)."""
    torch.manual_seed(0)
    cfg = TrainConfig(**{**TINY, **kw})
    model = Heima(cfg)
    seq = build(model.vocab, hop_batch(8, 2, 8, gen()), "heima")
    grads = []
    for w in (cfg.interp_weight, 0.0):
        model.cfg = replace(cfg, interp_weight=w)
        model.zero_grad()
        model.loss(seq)[0].backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.encoder.parameters()]))
    return float((grads[0] - grads[1]).norm())


def test_interpreter_gradient_reaches_the_encoder_only_in_heima():
    assert _encoder_grad_from_interpreter(kind="heima") > 1e-6
    assert _encoder_grad_from_interpreter(kind="heima", detach=True) == 0.0
    assert _encoder_grad_from_interpreter(kind="pause") == 0.0


def test_pause_still_trains_its_probe_interpreter():
    torch.manual_seed(0)
    model = Heima(TrainConfig(kind="pause", **TINY))
    seq = build(model.vocab, hop_batch(8, 2, 8, gen()), "heima")
    model.loss(seq)[0].backward()
    assert sum(float(p.grad.abs().sum()) for p in model.interpreter.parameters()) > 0


@pytest.mark.parametrize("interpreter", heima.INTERPRETERS)
def test_both_interpreters_train_through_the_joint_loss(interpreter):
    torch.manual_seed(0)
    model = Heima(TrainConfig(interpreter=interpreter, **TINY))
    seq = build(model.vocab, hop_batch(8, 2, 8, gen()), "heima")
    model.loss(seq)[0].backward()
    assert all(p.grad is not None for p in model.interpreter.parameters())
    assert model.interpret(torch.randn(3, 16)).shape == (3, STAGE_LEN)


@pytest.mark.parametrize("interpreter", heima.INTERPRETERS)
def test_interpreter_logits_match_greedy_decoding(interpreter):
    """Greedy reconstruction equals the argmax of teacher-forced logits fed its own output."""
    torch.manual_seed(1)
    model = Heima(TrainConfig(interpreter=interpreter, **TINY)).eval()
    states = torch.randn(6, 16)
    pred = model.interpret(states)
    with torch.no_grad():
        forced = model.interpret_logits(states, pred).argmax(-1)
    assert torch.equal(forced, pred)


# --------------------------------------------------------------------------- training
def test_progressive_phases_cover_the_steps():
    cfg = TrainConfig(kind="progressive", hops=3, steps=100, cot_frac=0.4)
    ph = heima.phases(cfg)
    assert [p[:2] for p in ph] == [("cot", None), ("heima", 1), ("heima", 2), ("heima", 3)]
    assert sum(p[2] for p in ph) == 100 and ph[0][2] == 40
    with pytest.raises(ValueError, match="progressive"):
        heima.phases(replace(cfg, steps=3))


def test_training_is_deterministic_per_seed_and_evaluates():
    cfg = TrainConfig(kind="heima", eval_every=2, **TINY)
    a, b, c = heima.train(cfg, 0, eval_n=8), heima.train(cfg, 0, eval_n=8), heima.train(cfg, 1,
                                                                                         eval_n=8)
    for k in a["state"]:
        assert torch.equal(a["state"][k], b["state"][k])
    assert any(not torch.equal(a["state"][k], c["state"][k]) for k in a["state"])
    assert [p["step"] for p in a["curve"]] == [2, 4]
    ev = heima.evaluate(heima.load(a), 0, n=16)
    assert ev["generated_tokens"] == 4 and len(ev["real"]) == len(ev["shuffled"]) == 2
    assert all(0 <= x <= 1 for x in ev["real"] + ev["shuffled"]) and ev["chance"] == 1 / 8


def test_progressive_training_runs_every_phase():
    cfg = TrainConfig(kind="progressive", eval_every=1, **{**TINY, "steps": 6})
    fmts = [p["format"] for p in heima.train(cfg, 0, eval_n=4)["curve"]]
    assert fmts[0] == "cot" and fmts[-1] == "heima:2" and "heima:1" in fmts


# --------------------------------------------------------------------------- second design
def test_from_cot_starts_from_the_cot_encoder_and_needs_it():
    cot = heima.train(TrainConfig(kind="cot", **TINY), 0)
    cfg = TrainConfig(kind="heima", from_cot=True, dense_weight=1.0, **{**TINY, "steps": 1})
    with pytest.raises(ValueError, match="CoT"):
        heima.train(cfg, 0)
    model = Heima(cfg)
    frozen = importlib.import_module("icml26.heima.train")._from_teacher(model, cot, "cpu")
    for k, v in model.encoder.state_dict().items():
        assert torch.equal(v, cot["state"][f"encoder.{k}"])
    assert frozen is not None and not any(p.requires_grad for p in frozen.parameters())
    # pause (states detached) and the no-interpreter-loss mutation need no teacher forward
    for kw in ({"kind": "pause"}, {"interp_weight": 0.0}):
        assert importlib.import_module("icml26.heima.train")._from_teacher(
            Heima(replace(cfg, **kw)), cot, "cpu") is None
    out = heima.train(cfg, 0, teacher=cot)
    assert out["cfg"].from_cot and set(out["state"]) == set(cot["state"])


def _encoder_grad_from_dense(**kw) -> float:
    torch.manual_seed(0)
    cfg = TrainConfig(**{**TINY, "dense_weight": 1.0, **kw})
    model = Heima(cfg)
    seq = build(model.vocab, hop_batch(8, 2, 8, gen()), "heima")
    target = torch.randn(8, 2, 16)
    grads = []
    for t in (target, None):
        model.zero_grad()
        model.loss(seq, t)[0].backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.encoder.parameters()]))
    return float((grads[0] - grads[1]).norm())


def test_dense_target_pulls_the_states_only_where_the_interpreter_loss_does():
    assert _encoder_grad_from_dense(kind="heima") > 1e-6
    assert _encoder_grad_from_dense(kind="heima", detach=True) == 0.0
    assert _encoder_grad_from_dense(kind="heima", interp_weight=0.0) == 0.0
    assert _encoder_grad_from_dense(kind="pause") == 0.0
    assert _encoder_grad_from_dense(kind="heima", dense_weight=0.0) == 0.0


def test_the_second_design_is_in_the_configs():
    cfg = HeimaConfig(from_cot=True, dense_weight=2.0)
    assert cfg.train_config("heima").from_cot and cfg.train_config("heima").dense_weight == 2
    assert cfg.train_config("pause").from_cot and cfg.train_config("pause").dense_weight == 0
    assert not cfg.train_config("cot").from_cot and not cfg.train_config("nocot").from_cot


# --------------------------------------------------------------------------- diagnosis
def test_probe_reads_a_linear_code_and_not_noise():
    diag = importlib.import_module("icml26.heima.diagnosis")
    g = gen(3)
    y = torch.randint(8, (300,), generator=g)
    codes = torch.randn(8, 16, generator=g)
    x = codes[y] + 0.1 * torch.randn(300, 16, generator=g)
    assert diag.probe_accuracy(x[:200], y[:200], x[200:], y[200:], 8) == 1.0
    noise = torch.randn(300, 16, generator=g)
    assert diag.probe_accuracy(noise[:200], y[:200], noise[200:], y[200:], 8) < 0.3


def test_writing_positions_are_cot_gives_and_heima_thinking_tokens():
    diag = importlib.import_module("icml26.heima.diagnosis")
    b = hop_batch(4, 2, 8, gen())
    cot = Heima(TrainConfig(kind="cot", **TINY))
    s = build(cot.vocab, b, "cot")
    pos = diag.writing_positions(cot, s)
    assert (s.tokens[:, pos] == cot.vocab.word("GIVES")).all()
    assert torch.equal(s.tokens[:, [p + 1 for p in pos]], b.chain)  # the next token is x_k
    hm = Heima(TrainConfig(kind="pause", **TINY))
    assert diag.writing_positions(hm, build(hm.vocab, b, "heima")) == [10, 11]


def test_probe_curves_cover_models_checkpoints_layers_and_targets():
    diag = importlib.import_module("icml26.heima.diagnosis")
    cfg = replace(heima.FIRST_DESIGN, steps=4, cot_steps=4, d_model=16, n_layers=2, batch=8)
    rows = diag.probe_curves(cfg, 0, hops=(1, 2), checkpoints=(2, 4, 9), n_train=24,
                             n_test=16, eval_n=8)
    keys = {(r["kind"], r["hops"], r["step"], r["stage"], r["layer"], r["target"])
            for r in rows}
    want = {(k, h, st, s, layer, f"x{j}") for k in diag.DIAG_KINDS for h in (1, 2)
            for st in (2, 4) for s in range(1, h + 1) for layer in range(3)
            for j in range(h + 1)}
    assert keys == want and len(rows) == len(want)
    assert all(0 <= r["probe_accuracy"] <= 1 and 0 <= r["answer_accuracy"] <= 1 for r in rows)
    # the second design's thinking models start from the CoT model trained first
    second = diag.probe_curves(replace(cfg, steps=2, cot_steps=2), 0, kinds=("heima",),
                               hops=(1,), checkpoints=(2,), n_train=24, n_test=16, eval_n=8)
    assert {r["kind"] for r in second} == {"heima"} and len(second) == 3 * 2


# --------------------------------------------------------------------------- claims
def expected_claims_hold(seed):
    out = heima.claims(seed)
    assert {c.name for c in out} == set(heima.CLAIM_SPECS)
    bad = [c for c in out if c.expected and not c.holds]
    assert not bad, [(c.name, c.measured, c.note) for c in bad]
    return out


# The binding claims the paper is blocked on (the registry's "blocked"; evidence in the
# notebook and benchmarks/heima/heima_seeds.csv for seeds 0-6). Strict: if they start to hold, the
# xfail fails and the status is revisited.
BLOCKED_ON = {0: "second design: the states hold each stage's result but not its input "
                 "(interpreter_reads_thinking 0.564) and pause tokens from the same CoT start "
                 "answer too (thinking_needs_decoder 0.092)",
              1: "CoT did not learn the lookups in 1200 steps (0.178): interpreter_reads_thinking, "
                 "thinking_needs_decoder and beats_no_cot fail"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(
    s in BLOCKED_ON, strict=True, reason=BLOCKED_ON.get(s, ""))) for s in (0, 1)])
def test_expected_claims_hold(seed):
    expected_claims_hold(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_only_the_listed_claims_fail(seed):
    """Every expected claim outside ``NOT_REPRODUCED`` holds (the information-gap control, the
    token reduction and, on seeds 0 and 1, accuracy_maintained); the blocked ones fail where
    benchmarks/heima/heima_seeds.csv says (beats_no_cot holds on seed 0: 0.884)."""
    out = heima.claims(seed)
    failing = {c.name for c in out if c.expected and not c.holds}
    assert failing and failing <= set(heima.NOT_REPRODUCED), failing
    want = {"interpreter_reads_thinking", "thinking_needs_decoder"} | (
        {"beats_no_cot"} if seed == 1 else set())
    assert failing == want, failing


# The mutations. At quick scale the unmutated claims fail too (the paper is blocked), so
# "the claim fails under the mutation" alone cannot discriminate; the tests also pin what each
# mutation does: without the interpreter loss Heima's encoder IS the pause model's (same
# seed, same data, same gradients), and with a detached state the whole model is.
@pytest.mark.slow
@pytest.mark.mutation("heima", "thinking_needs_decoder", "interpreter_reads_thinking")
def test_mutation_dropping_the_interpreter_loss_fails_the_decoder_claims():
    cfg = heima.with_mutation(heima.config_for("quick"), "no_interpreter_loss")
    out = {c.name: c for c in heima.claims_for(cfg, 0, reported=False)}
    for name in ("thinking_needs_decoder", "interpreter_reads_thinking"):
        assert out[name].expected and not out[name].holds, (name, out[name].measured)
    assert out["thinking_needs_decoder"].measured == 0.0  # Heima == pause tokens
    assert out["interpreter_reads_thinking"].measured <= 1 / 8 + 0.05  # an untrained reader


@pytest.mark.slow
@pytest.mark.mutation("heima", "interpreter_reads_thinking")
def test_mutation_detaching_the_thinking_state_fails_interpreter_reads_thinking():
    cfg = heima.with_mutation(heima.config_for("quick"), "detach")
    out = {c.name: c for c in heima.claims_for(cfg, 0, reported=False)}
    c = out["interpreter_reads_thinking"]
    assert c.expected and not c.holds, c.measured
    pause = heima.trained(cfg, "pause", 0)["eval"]
    assert c.measured == min(pause["real"])  # the detached model is the pause model


@pytest.mark.slow
@pytest.mark.mutation("heima", "token_reduction", "efficiency_at_accuracy", "accuracy_maintained",
                      "beats_no_cot")
def test_mutations_on_the_seed0_models(monkeypatch):
    """On the quick-scale models of seed 0 (cached by the claims tests): the Heima row
    evaluated on the CoT model (nothing compressed) fails token_reduction and
    efficiency_at_accuracy (ratios exactly 1);
    the Heima row evaluated on the pause model (what the no-interpreter-loss mutation trains)
    fails accuracy_maintained (pause from the CoT start answers 0.902 on seed 0, so it still
    beats no-CoT); the Heima model trained without the CoT start and the dense target (the
    first design: the bug of a teacher never loaded) fails accuracy_maintained and
    beats_no_cot. (information_gap_control's mutation, the shuffle left out, is its own test.)"""
    cfg = heima.config_for("quick")
    claims_mod = importlib.import_module("icml26.heima.claims")
    real_trained = claims_mod.trained

    def run(kinds, keys=None):
        def patched(c, kind, seed, **k):
            out = real_trained(c, kind, seed, **k)
            if kind not in kinds:
                return out
            sub = real_trained(c, kinds[kind], seed, **k)["eval"]
            return {**out, "eval": {**out["eval"], **{key: sub[key] for key in keys or sub}}}

        monkeypatch.setattr(claims_mod, "trained", patched)
        return {c.name: c for c in heima.claims_for(cfg, 0, reported=False)}

    assert run({})["token_reduction"].holds
    out = run({"heima": "cot"}, ("accuracy", "tokens_to_answer"))
    assert not out["token_reduction"].holds and out["token_reduction"].measured == 1.0
    assert out["efficiency_at_accuracy"].measured == 1.0
    out = run({"heima": "pause"})
    assert not out["accuracy_maintained"].holds, out["accuracy_maintained"].note
    first = real_trained(heima.FIRST_DESIGN, "heima", 0)["eval"]

    def no_teacher(c, kind, seed, **k):
        out = real_trained(c, kind, seed, **k)
        return {**out, "eval": first} if kind == "heima" else out

    monkeypatch.setattr(claims_mod, "trained", no_teacher)
    out = {c.name: c for c in heima.claims_for(cfg, 0, reported=False)}
    for name in ("accuracy_maintained", "beats_no_cot", "efficiency_at_accuracy"):
        assert not out[name].holds, (name, out[name].note)


@pytest.mark.slow
@pytest.mark.mutation("heima", "information_gap_control")
def test_mutation_dropping_the_shuffle_fails_information_gap_control(monkeypatch):
    """The realistic bug: the control gives each prompt its own thinking state (no shuffle).
    On the seed-0 models (cached by the claims tests) the second design's states carry their
    stages, so the "shuffled" reconstruction is the real one and the control fails."""
    train_mod = importlib.import_module("icml26.heima.train")
    claims_mod = importlib.import_module("icml26.heima.claims")
    real_trained = claims_mod.trained

    def patched(c, kind, seed, **k):
        out = real_trained(c, kind, seed, **k)
        if kind != "heima":
            return out
        with monkeypatch.context() as m:
            m.setattr(train_mod, "derangement", lambda n, s: torch.arange(n))
            return {**out, "eval": heima.evaluate(heima.load(out), seed, c.eval_n)}

    monkeypatch.setattr(claims_mod, "trained", patched)
    out = {c.name: c for c in heima.claims_for(heima.config_for("quick"), 0, reported=False)}
    c = out["information_gap_control"]
    assert c.expected and not c.holds, c.measured


def test_cuda_without_a_gpu_fails_fast_naming_the_flag():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="--device"):
        heima.claims(0, device="cuda")
    with pytest.raises(ValueError, match="--device"):
        heima.claims_for(HeimaConfig(), 0, device="cuda")


def test_a_failed_computation_gives_nan_claims(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("diverged")

    monkeypatch.setattr(importlib.import_module("icml26.heima.claims"), "trained", boom)
    out = heima.claims_for(HeimaConfig(), 0)
    assert {c.name for c in out} == set(heima.CLAIM_SPECS)
    assert all(math.isnan(c.measured) and not c.holds for c in out)
    assert "diverged" in out[0].note
