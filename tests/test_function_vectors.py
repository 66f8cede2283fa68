"""Tests for icml26.function_vectors (toy D, Todd et al.'s pipeline, the decomposition).

Fast tests use an untrained model with large random weights (so attention is far from
uniform); the slow tests train (or load from the run's cache) the quick-scale models.
"""

from __future__ import annotations

import dataclasses
import importlib
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from icml26 import function_vectors as fv
from icml26.function_vectors import model as fm
from icml26.function_vectors import prompts as fp
from icml26.function_vectors import training as ft

N_LAYERS, N_HEADS = 3, 4
QUICK = fv.config_for("quick")


def sharp_model(positions: str = "slots") -> fm.FVTransformer:
    """An untrained model with std-0.3 weights: sharp, non-trivial attention patterns."""
    g = torch.Generator().manual_seed(5)
    m = fm.FVTransformer(fm.ModelConfig(positions=positions))
    with torch.no_grad():
        for p in m.parameters():
            if p.ndim > 1:
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    return m.eval().requires_grad_(False)


@pytest.fixture(scope="module")
def model():
    return sharp_model()


@pytest.fixture
def prompts():
    g = torch.Generator().manual_seed(1)
    return fp.make_prompts(fp.tasks_for(24, g), 6, g, p_uninformative=0.4)


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm().clamp_min(1e-30))


# --------------------------------------------------------------------------- tasks, prompts
def test_tasks_are_shifts_with_fixed_points():
    x = torch.tensor([[0, 5, 15, fp.Z_TOKENS[0], fp.Z_TOKENS[1]]])
    assert fp.apply_task(torch.tensor([3]), x).tolist() == [[3, 8, 2, 16, 17]]


@given(st.integers(1, 8), st.integers(0, 6), st.floats(0, 1), st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None)
def test_prompt_structure(task, n, p_unf, seed):
    g = torch.Generator().manual_seed(seed)
    p = fp.make_prompts(torch.full((5,), task), n, g, p_unf)
    assert p.tokens.shape == (5, fp.N_CTX)
    assert (p.present.sum(1) == n).all() and (p.present[:, fp.MAX_SHOTS - n:]).all()
    assert (p.target == (p.query + task) % 16).all()
    assert (p.tokens[:, -1] == fp.ARROW).all() and (p.tokens[:, -2] == p.query).all()
    inf = p.kinds == fp.KIND_INFORMATIVE
    assert (p.ys[inf] == (p.xs[inf] + task) % 16).all()
    assert (p.xs[inf] != p.query[:, None].expand_as(p.xs)[inf]).all()  # never copied
    unf = p.kinds == fp.KIND_UNINFORMATIVE
    assert (p.xs[unf] >= 16).all() and (p.ys[unf] == p.xs[unf]).all()
    assert (p.tokens[:, : 3 * fp.MAX_SHOTS][~p.present.repeat_interleave(3, 1)] == fp.PAD).all()


@given(st.integers(0, 2**31 - 1), st.integers(1, 6))
@settings(max_examples=30, deadline=None)
def test_shuffle_permutes_outputs_within_prompt(seed, n):
    g = torch.Generator().manual_seed(seed)
    p = fp.make_prompts(fp.tasks_for(6, g), n, g)
    s = fp.shuffle_labels(p, g)
    assert torch.equal(s.xs, p.xs) and torch.equal(s.target, p.target)
    for i in range(len(p)):
        assert sorted(s.ys[i].tolist()) == sorted(p.ys[i].tolist())


def test_bad_prompt_inputs_raise():
    g = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="0..6"):
        fp.make_prompts(torch.tensor([1]), 7, g)
    with pytest.raises(ValueError, match="1..8"):
        fp.make_prompts(torch.tensor([9]), 2, g)
    with pytest.raises(ValueError, match="1..8"):
        fp.make_prompts(torch.tensor([0]), 2, g)
    with pytest.raises(ValueError, match="at most 20"):
        fm.FVTransformer()(torch.zeros(1, 23, dtype=torch.long))


# --------------------------------------------------------------------------- hooks
def test_compacted_prompts_compute_the_same_outputs(model, prompts):
    full = model(prompts.tokens)
    for n in (0, 1, 3):
        sub = prompts.with_slots(torch.arange(6) >= 6 - n)
        assert rel_err(fv.run(model, sub), model(sub.tokens)) < 1e-5
    assert rel_err(fv.run(model, prompts), full) < 1e-5
    one = prompts.with_slots(torch.arange(6) == 2)  # slot 2 alone, positions kept
    assert fp.compact(one)[1][0].tolist() == [6, 7, 8, 18, 19]
    assert rel_err(fv.run(model, one), model(one.tokens)) < 1e-5


@pytest.mark.parametrize("positions", ["slots", "packed"])
def test_training_forward_in_groups_equals_the_full_forward(positions):
    """Training's compacted two-group forward gives the full forward's final residuals."""
    m = sharp_model(positions)
    g = torch.Generator().manual_seed(3)
    n = torch.randint(0, 7, (48,), generator=g)
    p = fp.make_prompts(fp.tasks_for(48, g), n, g, 0.3, slots="random")
    last, src = ft.grouped_forward(m, p, n, 1, include_zero_shot=True)
    x = m.embed_tokens(p.tokens)
    allowed = fp.attention_mask(p.tokens)
    for layer, block in enumerate(m.blocks):
        x = block(x, allowed, layer)
        if layer == 1:
            mid = x[:, -1]
    assert rel_err(last, x[:, -1]) < 1e-5 and rel_err(src, mid) < 1e-5
    last1, _ = ft.grouped_forward(m, p, n, 1, include_zero_shot=False)
    assert (last1[n == 0] == 0).all() and rel_err(last1[n > 0], x[n > 0, -1]) < 1e-5


def test_packed_positions_delete_absent_slots(prompts):
    """positions="packed" (the spec's variable-length prompts): a masked slot is deleted, so
    the masked prompt equals the same demonstrations packed into contiguous slots."""
    packed = sharp_model("packed")
    sub = prompts.with_slots(torch.arange(6) != 2)
    order = torch.tensor([2, 0, 1, 3, 4, 5])  # the empty slot first, the rest in order
    contiguous = fp.assemble(sub.xs[:, order], sub.ys[:, order], sub.kinds[:, order],
                              sub.task, sub.query)
    assert rel_err(packed(contiguous.tokens), packed(sub.tokens)) < 1e-5
    assert rel_err(fv.run(packed, sub), packed(sub.tokens)) < 1e-5
    slots = sharp_model("slots")  # fixed slot positions: moving demonstrations matters
    assert rel_err(slots(contiguous.tokens), slots(sub.tokens)) > 1e-3


def test_forward_last_equals_full_forward_with_patches(model, prompts):
    b = len(prompts)
    g = torch.Generator().manual_seed(3)
    mask = torch.rand(b, N_LAYERS, N_HEADS, generator=g) < 0.3
    values = torch.randn(b, N_LAYERS, N_HEADS, 16, generator=g)
    add = torch.randn(b, N_LAYERS, 64, generator=g)
    patch = fm.HeadPatch(mask, values)
    pre = fv.Prefix.of(model, prompts)
    assert rel_err(pre.patched(model), model(prompts.tokens)) < 1e-5
    assert rel_err(pre.patched(model, head_patch=patch),
                   model(prompts.tokens, head_patch=patch)) < 1e-5
    assert rel_err(pre.patched(model, resid_add=add), model(prompts.tokens, resid_add=add)) < 1e-5
    # the patch really changes the output (the test above cannot pass vacuously)
    assert rel_err(model(prompts.tokens, head_patch=patch), model(prompts.tokens)) > 1e-2


@pytest.mark.parametrize("layer,head", [(0, 0), (1, 2), (2, 3)], ids=["L0H0", "L1H2", "L2H3"])
def test_block_decomposition_identity_is_exact(model, prompts, layer, head):
    """W_O z_h = sum_i sum_{t in B_i} a_t W_O v_t + query terms (relative error <= 1e-5)."""
    prompts = prompts.with_slots(torch.arange(6) >= 2)  # 4 shots: two masked blocks
    parts = fv.block_decomposition(model, prompts, layer, head)  # [B, S+1, D]
    _, rec = model(prompts.tokens, record=True)
    direct = rec.z[layer][:, -1, head] @ model.blocks[layer].w_o()[head]
    assert parts.shape == (len(prompts), fp.MAX_SHOTS + 1, 64)
    assert rel_err(parts.sum(1), direct) <= 1e-5
    absent = ~prompts.present
    assert parts[:, :-1][absent].abs().max() == 0  # masked blocks contribute exactly nothing


def test_attention_override(model, prompts):
    _, rec = model(prompts.tokens, record=True)
    heads = torch.tensor([False, True, False, True])
    same = model(prompts.tokens, attn_override={1: (heads, rec.attn[1])})
    assert rel_err(same, model(prompts.tokens)) < 1e-6
    uniform = torch.softmax(rec.scores[1].clamp(min=-1e9) * 0, -1)
    other = model(prompts.tokens, attn_override={1: (heads, uniform)})
    assert rel_err(other, model(prompts.tokens)) > 1e-3


def test_cie_batched_matches_looped(model):
    g = torch.Generator().manual_seed(2)
    p = fp.make_prompts(fp.tasks_for(16, g), 6, g, shuffle=True)
    means = torch.randn(8, N_LAYERS, N_HEADS, 16, generator=g)
    looped = fv.causal_indirect_effect(model, means, p, mode="looped")
    for mode in ("prefix", "batched"):
        assert rel_err(fv.causal_indirect_effect(model, means, p, mode=mode), looped) < 1e-4
    assert looped.abs().max() > 1e-4


def test_hybrids_reduce_to_the_two_runs(model, prompts):
    heads = [(1, 0), (1, 3), (2, 1)]
    h = fv.hybrid_head_outputs(model, prompts, heads)
    _, z_ctx = fv.final_state(model, prompts)
    _, z_iso = fv.final_state(model, prompts, isolate_blocks=True)
    for layer, head in heads:
        assert rel_err(h["both"][:, layer, head], z_ctx[:, layer, head]) < 1e-5
    # layer-1 queries see layer-0 outputs of the query tokens, identical in both runs
    assert rel_err(h["neither"][:, 1, 0], z_iso[:, 1, 0]) < 1e-5
    assert rel_err(h["qk"][:, 1, 0], h["v"][:, 1, 0]) > 1e-4


def test_isolated_masses_are_one_shot_runs(model, prompts):
    heads = [(1, 1)]
    iso = fv.isolated_masses(model, prompts, heads)
    i = 4
    one = prompts.with_slots(torch.arange(6) == i)
    _, rec = model(one.tokens, record=True)
    direct = rec.attn[1][:, 1, -1, 3 * i: 3 * i + 3].sum(-1)
    rows = prompts.present[:, i]
    assert rel_err(iso[rows, i], direct[rows]) < 1e-5


@given(st.integers(0, 2**31 - 1))
@settings(max_examples=20, deadline=None)
def test_slot_masses_partition_attention(seed):
    g = torch.Generator().manual_seed(seed)
    a = torch.softmax(torch.randn(3, 20, generator=g), -1)
    pos = torch.arange(20).expand(3, 20)
    parts = fv.by_slot(a, pos, query=True)
    assert torch.allclose(parts.sum(1), torch.ones(3), atol=1e-6)
    assert (parts >= 0).all()


# --------------------------------------------------------------------------- statistics
@given(st.integers(2, 6), st.integers(0, 2**31 - 1))
@settings(max_examples=25, deadline=None)
def test_shared_fit_recovers_exactly_additive_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    subs = torch.randn(80, n, 16, generator=g, dtype=torch.float64)
    alpha = torch.rand(n, generator=g, dtype=torch.float64) + 0.1
    c = torch.randn(16, generator=g, dtype=torch.float64)
    fvs = torch.einsum("i,pid->pd", alpha, subs) + c
    out = fv.fit_additive(fvs, subs, "shared")
    assert out["r2"] > 1 - 1e-9
    assert torch.allclose(out["alpha"].double(), alpha, atol=1e-5)
    noise = torch.randn(80, 16, generator=g, dtype=torch.float64)
    assert fv.fit_additive(noise, subs, "shared")["r2"] < 0.5
    assert fv.fit_additive(noise, subs, "per_prompt")["r2"] <= 1 + 1e-9


def test_per_prompt_weights_fit_anything_with_enough_coefficients():
    """The pitfall in miniature: with as many free weights per prompt as dimensions, the
    per-prompt fit explains pure noise perfectly while the shared fit explains nothing."""
    g = torch.Generator().manual_seed(0)
    subs = torch.randn(200, 6, 6, generator=g, dtype=torch.float64)
    target = torch.randn(200, 6, generator=g, dtype=torch.float64)
    assert fv.fit_additive(target, subs, "per_prompt")["r2"] > 1 - 1e-9
    assert fv.fit_additive(target, subs, "shared")["r2"] < 0.1


@given(st.integers(0, 2**31 - 1))
@settings(max_examples=20, deadline=None)
def test_permutation_test_p_values(seed):
    g = torch.Generator().manual_seed(seed)
    p_null = fv.paired_permutation_test(torch.randn(50, generator=g, dtype=torch.float64),
                                        500, g)
    assert 1 / 501 <= p_null <= 1
    p_strong = fv.paired_permutation_test(torch.rand(50, generator=g, dtype=torch.float64) + 1,
                                          500, g)
    assert p_strong == pytest.approx(1 / 501)


@given(st.floats(0.1, 10), st.integers(0, 2**31 - 1))
@settings(max_examples=20, deadline=None)
def test_matched_ratio_is_scale_invariant(scale, seed):
    g = torch.Generator().manual_seed(seed)
    mass = torch.rand(40, 6, generator=g) + 0.01
    kinds = torch.randint(1, 3, (40, 6), generator=g)
    r, _ = fv.matched_ratio(mass, kinds)
    r2, _ = fv.matched_ratio(mass * scale, kinds)
    assert r == pytest.approx(r2, rel=1e-5)
    boosted = torch.where(kinds == 1, 3 * mass, mass)
    assert fv.matched_ratio(boosted, kinds)[0] == pytest.approx(3 * r, rel=1e-5)


# --------------------------------------------------------------------------- bad input
def test_bad_analysis_inputs_raise(model, prompts):
    means = torch.zeros(8, N_LAYERS, N_HEADS, 16)
    with pytest.raises(ValueError, match="out of range"):
        fv.intervene(model, prompts, means, [(3, 0)])
    with pytest.raises(ValueError, match="out of range"):
        fv.intervene(model, prompts, means, [(0, 4)])
    with pytest.raises(ValueError, match="intervention"):
        fv.intervene(model, prompts, means, [(1, 0)], kind="swap")
    with pytest.raises(ValueError, match="layer"):
        fv.intervene(model, prompts, means, [(1, 0)], kind="add", layer=5)
    ranking = [(1, 0), (1, 1), (1, 2), (1, 3)]
    with pytest.raises(ValueError, match="0..6"):
        fv.live_data(model, means, ranking, n_shots=8)
    with pytest.raises(ValueError, match="1..8"):
        fv.live_data(model, means, ranking, task=0)
    with pytest.raises(ValueError, match="fv_heads"):
        fv.live_data(model, means, ranking, fv_heads=5)
    with pytest.raises(ValueError, match="scale"):
        fv.config_for("huge")
    with pytest.raises(ValueError, match="top_k"):
        dataclasses.replace(fv.config_for("quick"), top_k=13).validate()


def test_live_data_is_finite(model):
    means = torch.randn(8, N_LAYERS, N_HEADS, 16)
    ranking = fv.rank_heads(torch.randn(N_LAYERS, N_HEADS))
    for n, corr, kind in ((0, "shuffled", "add"), (6, "zero_shot", "random"),
                          (3, "shuffled", "other_task")):
        d = fv.live_data(model, means, ranking, n_shots=n, corruption=corr, intervention=kind,
                         count=8)
        for key in ("shift_corrupted", "shift_intervened", "attention_query", "mass_iso"):
            assert torch.isfinite(d[key]).all(), key
        assert 0 <= d["accuracy"]["intervened"] <= 1


def test_training_is_deterministic():
    tc = ft.TrainConfig(steps=3, batch=8, eval_every=3)
    a = ft.train_model(fm.ModelConfig(), tc, seed=4, progress=False)
    b = ft.train_model(fm.ModelConfig(), tc, seed=4, progress=False)
    for k in a["state"]:
        assert torch.equal(a["state"][k], b["state"][k]), k


def test_context_control_patches_layer0_with_the_task_agnostic_mean(model, prompts):
    g = torch.Generator().manual_seed(7)
    means = torch.randn(8, N_LAYERS, N_HEADS, 16, generator=g)
    heads = [(1, 2), (0, 3)]
    assert fv.context_heads(means, heads) == [(0, 0), (0, 1), (0, 2)]
    zero = prompts.with_slots(torch.zeros(6, dtype=torch.bool))
    got = fv.intervene(model, zero, means, heads, context=fv.context_heads(means, heads))
    mask = torch.zeros(len(zero), N_LAYERS, N_HEADS, dtype=torch.bool)
    mask[:, 0] = True
    mask[:, 1, 2] = True
    values = means[zero.task - 1].clone()
    values[:, 0, :3] = means.mean(0)[0, :3]  # (0, 3) is an FV head: it keeps its task mean
    assert rel_err(got, model(zero.tokens, head_patch=fm.HeadPatch(mask, values))) < 1e-5


def test_joint_effect_patches_the_heads_together(model):
    g = torch.Generator().manual_seed(2)
    p = fp.make_prompts(fp.tasks_for(16, g), 6, g, shuffle=True)
    means = torch.randn(8, N_LAYERS, N_HEADS, 16, generator=g)
    aie = fv.causal_indirect_effect(model, means, p)
    assert fv.joint_indirect_effect(model, means, p, [(1, 2)]) == pytest.approx(
        float(aie[1, 2]), abs=1e-6)
    heads = [(1, 2), (2, 0), (2, 3)]
    joint = fv.joint_indirect_effect(model, means, p, heads)
    assert abs(joint - sum(float(aie[h]) for h in heads)) > 1e-3  # not the single-head sum


def test_ranking_by_abs_is_the_pitfall():
    aie = torch.tensor([[-0.5, 0.0], [0.2, 0.1]])
    assert fv.rank_heads(aie)[:2] == [(1, 0), (1, 1)]
    assert fv.rank_heads(aie, "abs")[0] == (0, 0)


def test_cuda_without_a_gpu_fails_fast_naming_the_flag():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="--device"):
        fv.claims(0, device="cuda")
    with pytest.raises(ValueError, match="--device"):
        fv.claims_for(QUICK, 0, device="cuda")


def test_claim_specs_are_static_rows_of_the_quick_scale():
    assert list(fv.CLAIM_SPECS) == list(fv.SPECS)
    for name, row in fv.CLAIM_SPECS.items():
        assert (row.op, row.threshold, row.expected) == fv.SPECS[name][1:4] == (
            *fv.SPECS[name][1:3], fv.EXPECTED[name])
        assert row.statement.startswith(fv.SPECS[name].statement)
        assert (row.role == "headline") == ('("' in row.statement), name


@pytest.mark.mutation("function_vectors", "icl_emerged")
def test_tiny_training_feeds_the_whole_pipeline(tmp_path, monkeypatch):
    """Training is tested at tiny scale (the quick-scale models are shipped): a 30-step model
    goes through the cache and the claims; it has no ICL, so every claim fails, with reasons."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    tiny = dataclasses.replace(
        QUICK, weights="train", eval_prompts=64,
        train=dataclasses.replace(QUICK.train, steps=30, batch=16, eval_every=15))
    assert fv.weights_source(tiny, 0) == "trained"
    blob = fv.trained(tiny, 0, progress=False)
    assert [h[0] for h in blob["history"]] == [15, 30]
    assert any(tmp_path.rglob("model-*-s0.pt"))
    again = fv.trained(tiny, 0, progress=False)  # from the cache
    assert all(torch.equal(blob["state"][k], again["state"][k]) for k in blob["state"])
    claims = fv.claims_for(tiny, 0)
    assert [c.name for c in claims] == list(fv.SPECS)
    assert not any(c.holds for c in claims if c.expected)
    assert "did not emerge" in claims[1].note and "trained in this run" in claims[1].note


# --------------------------------------------------------------------------- claims (slow)


def test_shipped_weights_match_the_quick_config():
    for seed in fv.SHIPPED_SEEDS:
        blob = fv.shipped_blob(seed)
        assert blob is not None, f"lib/data/function_vectors_seed{seed}.pt is missing"
        assert blob["model_config"] == dataclasses.asdict(QUICK.model)
        assert blob["train_config"] == dataclasses.asdict(QUICK.train)
        assert blob["seed"] == seed
        assert fv.weights_source(QUICK, seed).startswith(f"shipped function_vectors_seed{seed}")
    model = fm.model_from_state(fv.shipped_blob(0))
    assert fv.clean_accuracy(model, QUICK, 0) >= QUICK.icl_threshold


# Seeds of the CI pair whose binding claims fail on the shipped model (the registry's
# "blocked", with the evidence in benchmarks/function_vectors/function_vectors_seeds.csv: every
# binding claim holds on 7 of seeds 0-16; seeds 1, 5, 12 and 16 fail the same way). Strict: a seed
# that starts to pass fails this test, so the status is revisited, never silently kept.
BLOCKED_ON = {1: "the FV heads' joint AIE is 0.12 < 0.3 (no function vector in the top-3 "
                 "heads; all four middle-layer heads together: 0.16), so the transfer and the "
                 "gated headline claims fail"}



@pytest.mark.slow
@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.xfail(
    s in BLOCKED_ON, strict=True, reason=BLOCKED_ON.get(s, ""))) for s in (0, 1)])
def test_expected_claims_hold(seed):
    claims = fv.claims(seed)
    names = [c.name for c in claims]
    assert names == list(fv.SPECS)
    bad = [(c.name, c.measured, c.note) for c in claims if c.expected and not c.holds]
    assert not bad, bad
    assert all(math.isfinite(c.measured) for c in claims if c.expected)
    assert all("shipped function_vectors_seed" in c.note for c in claims)  # the shortcut


@pytest.mark.slow
def test_claims_are_reproducible():
    a = {c.name: c.measured for c in fv.claims(0)}
    b = {c.name: c.measured for c in fv.claims(0)}
    assert a == b


@pytest.mark.slow
@pytest.mark.mutation("function_vectors", "additivity_margin")
def test_mutation_per_prompt_weights_break_the_margin():
    """Per-prompt alpha fits the other-task control too: additivity_margin must fail."""
    cfg = dataclasses.replace(QUICK, additivity_weights="per_prompt")
    by = {c.name: c for c in fv.claims_for(cfg, 0)}
    assert by["icl_emerged"].holds
    assert not by["additivity_margin"].holds, by["additivity_margin"]


@pytest.mark.slow
@pytest.mark.mutation("function_vectors", "zero_shot_context_control")
def test_mutation_leaky_context_control_fails_the_control_claim():
    """Giving the layer-0 heads their TASK means (instead of the task-agnostic mean) leaks the
    task into the zero-shot context control: the control alone then raises accuracy."""
    by = {c.name: c for c in fv.claims_for(dataclasses.replace(QUICK, context_control="task"),
                                           0)}
    assert by["icl_emerged"].holds and by["replacement_shuffled"].holds
    assert not by["zero_shot_context_control"].holds, by["zero_shot_context_control"]


@pytest.mark.slow
@pytest.mark.mutation("function_vectors", "cie_top_effect", "replacement_shuffled",
                      "replacement_zero_shot", "additivity_shared", "reweighting_in_context",
                      "reweighting_vs_isolated", "reweighting_p")
def test_mutation_abs_ranking_fails_the_joint_effect_and_gates_the_headline():
    """FV heads ranked by |AIE| (the layer-0 heads that erase x_q): their joint effect fails,
    so do the transfers, and the headline claims are not measured on them (the gate: NaN, so
    they fail)."""
    by = {c.name: c for c in fv.claims_for(dataclasses.replace(QUICK, ranking="abs"), 0)}
    assert by["icl_emerged"].holds
    for name in ("cie_top_effect", "replacement_shuffled", "replacement_zero_shot"):
        assert not by[name].holds, by[name]
    for name in fv.GATED:
        assert math.isnan(by[name].measured) and "gated" in by[name].note, by[name]


@pytest.mark.slow
def test_mutation_without_tvp_no_function_vector():
    """Training without the TVP loss (same steps; trains, several CPU minutes): no Todd-style
    FV, the joint effect fails."""
    cfg = dataclasses.replace(QUICK, train=dataclasses.replace(QUICK.train, tvp=False))
    by = {c.name: c for c in fv.claims_for(cfg, 0)}
    assert by["icl_emerged"].holds  # it learns ICL (1.00 on seed 0), but not an FV
    assert not by["cie_top_effect"].holds, by["cie_top_effect"]  # joint AIE -0.03 on seed 0
    assert all(math.isnan(by[name].measured) for name in fv.GATED)


@pytest.mark.slow
@pytest.mark.mutation("function_vectors", "other_task_no_gain", "random_no_gain")
def test_mutation_controls_that_install_the_task_fail_their_claims(monkeypatch):
    """The controls' bugs: the "other task" drawn as the prompt's own task (a shift of 0), and
    the "random" vectors skipped (the task mean itself installed): each control then raises
    accuracy like the replacement and its claim fails. The intervention figure is recomputed
    uncached; the claims are read with their spec rows."""
    fc, ff, fi = (importlib.import_module(f"icml26.function_vectors.{m}")
                  for m in ("claims", "figures", "interventions"))

    def measured(name):
        return spec_claim(name, fc._intervention_claims(QUICK, 0)[name][0])

    monkeypatch.setattr(fc, "figure_interventions_data", ff._figure_interventions_data)
    real = fi.intervene
    monkeypatch.setattr(fi, "other_tasks", lambda task, gen: task)
    other = measured("other_task_no_gain")
    assert not other.holds, other
    monkeypatch.setattr(fi, "other_tasks", fv.other_tasks)
    def no_random(model, prompts, means, heads, kind="replace", **k):
        return real(model, prompts, means, heads,
                    {"random": "replace", "add_random": "add"}.get(kind, kind), **k)

    monkeypatch.setattr(ff, "intervene", no_random)
    rand = measured("random_no_gain")
    assert not rand.holds, rand


def spec_claim(name, measured):
    """A claim measured outside ``claims_for``, read against its spec row."""
    from icml26.claims import ClaimTable

    return ClaimTable(fv.PAPER, fv.CLAIM_SPECS).add(name, measured)


@pytest.mark.slow
@pytest.mark.mutation("function_vectors", "cie_concentrated")
def test_mutation_reversed_ranking_fails_cie_concentrated(monkeypatch):
    """The head ranking sorted the wrong way (the 3 heads of lowest AIE taken as the FV heads):
    they carry none of the positive AIE and cie_concentrated fails (the cached CIE analysis
    is reused; the share is recomputed uncached)."""
    ff = importlib.import_module("icml26.function_vectors.figures")
    plain = spec_claim("cie_concentrated", ff._figure_cie_data(QUICK, 0)["share"])
    assert plain.holds, plain
    real = ff.fv_cached
    monkeypatch.setattr(ff, "fv_cached", lambda cfg, seed, model: {
        **real(cfg, seed, model), "ranking": real(cfg, seed, model)["ranking"][::-1]})
    bad = spec_claim("cie_concentrated", ff._figure_cie_data(QUICK, 0)["share"])
    assert not bad.holds, bad


# --------------------------------------------------------------------------- issue 31 diagnosis
def test_diagnosis_reads_every_site_of_one_model(model, monkeypatch):
    """Joint AIE for k = 1..L*H, a site AIE per MLP and residual, a probe per head, MLP and
    residual; the joint AIE at k is the claim's (fv_analysis), and the probes score in [0, 1]."""
    from icml26.function_vectors import diagnosis

    monkeypatch.setattr(diagnosis, "PROBE_PROMPTS", 160)
    small = dataclasses.replace(QUICK, cie_prompts=4, mean_prompts=8)
    rows = fv.diagnose(small, 0, model)
    n_heads = model.cfg.n_layers * model.cfg.n_heads
    joint = [r for r in rows if r["kind"] == "joint_aie"]
    assert [r["site"] for r in joint] == [f"top{k}" for k in range(1, n_heads + 1)]
    sites = {r["site"] for r in rows if r["kind"] == "site_aie"}
    assert sites == {f"{k}{layer}" for k in ("mlp", "resid") for layer in range(3)}
    probes = {r["site"]: r["value"] for r in rows if r["kind"] == "probe"}
    assert len(probes) == n_heads + 6 and all(0 <= v <= 1 for v in probes.values())
    a = fv_analysis_of(model, small)
    assert [r["value"] for r in joint[:3]] == [round(j, 4) for j in a["joint"][:3]]


def fv_analysis_of(model, cfg):
    from icml26.function_vectors.experiments import fv_analysis

    n_heads = model.cfg.n_layers * model.cfg.n_heads
    return fv_analysis(model, dataclasses.replace(cfg, top_k=n_heads), 0)


def test_recorded_diagnosis_covers_seeds_0_to_6_for_both_schedules():
    rows = fv.read_diagnosis()
    for steps in (3000, 4500):
        seeds = {r["seed"] for r in rows if r["steps"] == steps}
        assert seeds == set(range(7)), (steps, seeds)
    # what the notebook says it found: at 3000 steps seeds 1 and 5 reach no joint AIE >= 0.17
    for seed in (1, 5):
        best = max(r["value"] for r in rows if r["steps"] == 3000 and r["seed"] == seed
                   and r["kind"] == "joint_aie")
        assert best < 0.17, (seed, best)


# ----------------------------------------------------------------- issue 31's second designs
def test_attention_sublayer_is_what_the_block_adds_before_its_mlp(model, prompts):
    allowed = fp.attention_mask(prompts.tokens)
    x = model.embed_tokens(prompts.tokens)
    rec = fm.Record([], [], [], [], [], [], [], [])
    model.blocks[1](x, allowed, 1, rec=rec)
    attn = model.blocks[1].attention(x, allowed, 1)
    assert rel_err(x + attn, rec.resid_mid[0]) < 1e-6


@pytest.mark.parametrize("options", [dict(tvp_site="attn"), dict(tvp_site="attn",
                                                                  tvp_center="zero_shot")])
def test_tvp_at_the_attention_output_trains(options):
    tc = ft.TrainConfig(steps=3, batch=8, eval_every=3, **options)
    blob = ft.train_model(fm.ModelConfig(), tc, seed=2, progress=False)
    assert blob["history"][-1][0] == 3 and math.isfinite(blob["history"][-1][2])


def test_attention_only_layers_have_no_mlp():
    m = fm.FVTransformer(fm.ModelConfig(attn_only_layers=2))
    assert [b.mlp is None for b in m.blocks] == [True, True, False]
    blob = ft.train_model(m.cfg, ft.TrainConfig(steps=2, batch=8, eval_every=2), seed=1,
                          progress=False)
    assert not any(k.startswith(("blocks.0.mlp", "blocks.1.mlp")) for k in blob["state"])
    assert fm.model_from_state(blob).blocks[2].mlp is not None


def test_emergence_schedule_decays_only_after_emergence():
    tc = ft.TrainConfig(schedule="emergence", warmup=10, post_steps=100, lr=1e-3)
    assert ft._lr_at(500, tc) == pytest.approx(1e-3)  # not emerged: constant
    assert ft._lr_at(500, tc, emerged_at=500) == pytest.approx(1e-3)
    assert ft._lr_at(550, tc, emerged_at=500) == pytest.approx(1e-3 * (0.1 + 0.9 * 0.5))
    assert ft._lr_at(600, tc, emerged_at=500) == pytest.approx(1e-4)
    # "emerged" at the first check (any accuracy >= 1e-9): stops post_steps later
    tc = ft.TrainConfig(schedule="emergence", emergence_acc=1e-9, emergence_check=2,
                        post_steps=3, max_steps=50, batch=8, eval_every=100)
    blob = ft.train_model(fm.ModelConfig(), tc, seed=0, progress=False)
    assert blob["emerged_at"] == 2 and blob["history"][-1][0] == 5


@pytest.mark.parametrize("bad", [dict(tvp_site="mlp"), dict(schedule="cosine"),
                                 dict(post_steps=0), dict(emergence_acc=0.0)])
def test_bad_training_options_raise(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        ft.TrainConfig(**bad).validate()
    with pytest.raises(ValueError, match="attn_only_layers"):
        fm.ModelConfig(attn_only_layers=3).validate()


def test_recorded_designs_none_beats_the_design_on_the_diagnosis_seeds():
    rows = fv.read_designs()
    per = {}
    for r in rows:
        if r["seed"] <= 6:
            per.setdefault(r["design"], []).append(r["holds"])
    design = per.pop("3000 steps (the design)")
    assert len(design) == 7 and sum(design) == 5  # seeds 1 and 5 fail
    assert per and all(sum(v) < 5 for v in per.values()), per
