"""The claims of ``gsrq``: the claim rows and how each is measured from the experiments.

Binding (expected on seeds 0-4 at quick scale): k-means shrinkage, GSKM's better direction at
matched l2 on equal-norm data.  Reported: the per-token gain on heavy-tailed data (expected:
it held on seeds 0-4) and the tiny-LM headline.

Second design of ``tiny_lm_one_bit`` (issue 47, CLAIMS_VERSION 2; written before the fresh
seeds).  The first design failed on 0/32 seeds (16-seed mean -0.0071): head dim 32, a passkey
saturated near 1.0 for both quantizers, and the cluster-gain GSKM, which loses l2 on
heavy-tailed norms (F2).  Diagnosis on seeds 0-1: ``benchmarks/gsrq/gsrq_lm_diagnosis.py``.
Now: head dim 128 (one head of 128 on a 128-wide residual), 4 keys x 4 digits recalled over
96 characters (chance 0.1 and the fp32 ceiling reported), GSRQ with the per-token gain against
RQ-kmeans at an equal rate (its M stages of K = 256 plus one K = 16 stage: the gain code's 4
bits), at the largest M in {4, 8, 16} where RQ-kmeans' recall on seeds 0-1 sits >= 0.05 below
the ceiling (the baseline alone picks it).  The threshold (> 0) is unchanged.  The rule found
no such M (recall within 0.012 of the fp32 ceiling, 0.77, down to 1/16 bit), so M = 4,
the synthetic claims' K = 256 x 4 stages at d = 128 (0.25 bit; perplexity moves most there).
The diagnosis also refuted two premises: the tiny LM's K/V norms are not heavy-tailed (std of
log-norms 0.08-0.20, against 0.8 in F2), and on its K/V RQ-kmeans keeps a higher cosine than
both GSRQs at every rate and both head dims.
"""

from __future__ import annotations

import math

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.gsrq.experiments import (
    EQUAL_RATE,
    PAPER,
    GSRQConfig,
    config_for,
    figure_rate_distortion_data,
    figure_tiny_lm_data,
    lm_config,
)
from icml26.gsrq.quantizer import bits_per_element

CLAIMS_VERSION = 2  # 2: issue 47's second design of tiny_lm_one_bit

#: name: ClaimSpec; ``{...}`` fields are completed from the config. Roles: the abstract's
#: results are GSKM's "improves directional fidelity while matching ... l2 distortion" and
#: GSRQ's 1-bit win over a KV-cache RQ baseline (headlines); the shrinkage it "identif[ies]"
#: is what the method rests on (mechanism); the per-token gain variant is the spec's
#: extension (finding: the abstract names no per-token gain).
GSKM = ("a drop-in replacement for $K$-means that improves directional fidelity while matching, "
        "and in some regimes improving, $\\ell_2$ distortion")
CLAIM_SPECS = {
    "kmeans_shrinks": ClaimSpec(
        statement="l2 k-means reconstructions shrink (\"Euclidean centroid averaging can induce "
                  "centroid shrinkage\"): mean ||x_hat||/||x|| < 0.9 at K={codes}, one stage, "
                  "d={dim}",
        op="<", threshold=0.9, expected=True, role="mechanism", unit="each",
        source="Euclidean centroid averaging can induce centroid shrinkage"),
    "gskm_direction": ClaimSpec(
        statement="GSKM \"improves directional fidelity\": on equal-norm data (K={codes}, "
                  "{stages} stages) GSKM's mean cosine is >= k-means' + 0.005",
        op=">=", threshold=0.005, expected=True, role="headline", unit="mean", source=GSKM),
    "gskm_l2_matched": ClaimSpec(
        statement="GSKM improves direction \"while matching, and in some regimes improving, l2 "
                  "distortion\": on equal-norm data (K={codes}, {stages} stages) GSKM's "
                  "relative l2 is <= 1.02x k-means'",
        op="<=", threshold=1.02, expected=True, role="headline", unit="mean", source=GSKM),
    "per_token_gain_heavy_tail": ClaimSpec(  # holds on seeds 0-6 (held-out l2 ratio 0.90-0.93)
        statement="With heavy-tailed norms a per-token gain keeps relative l2 within 1.05x of "
                  "k-means while raising the cosine (measured: min(1.05 - l2 ratio, cosine "
                  "gain))",
        op=">", threshold=0.0, expected=True, role="finding", unit="mean", source=""),
    "tiny_lm_one_bit": ClaimSpec(
        statement="\"At 1-bit\" GSRQ \"substantially improves over strong KV cache quantization "
                  "baselines\": on the tiny LM (head dim {head_dim}) at {bits:.3g} bit per "
                  "element GSRQ ({variant}) beats RQ-kmeans at an equal rate on perplexity and "
                  "multi-key recall accuracy (measured: min(log ppl gap, accuracy gap))",
        op=">", threshold=0.0, expected=False, role="headline", unit="mean",
        source="GSRQ substantially improves over strong KV cache quantization baselines across "
               "bit rates"),
}
SYNTHETIC_CLAIMS = ("kmeans_shrinks", "gskm_direction", "gskm_l2_matched",
                    "per_token_gain_heavy_tail")


def check_held_out(rows: list[dict]) -> None:
    """Raise unless every row was scored on rows its codebooks were not fitted on."""
    shared = max(r["shared_rows"] for r in rows)
    if shared:
        raise ValueError(f"{shared} scored rows were also fitting rows: a KV codebook must be "
                         "scored on new tokens (in-sample scoring)")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (data and
    windows drawn on the CPU generator, then moved there; ``impl="auto"`` picks the Triton
    assignment kernel on CUDA)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, device=dev)


def statement(name: str, cfg: GSRQConfig) -> str:
    """The claim row's statement with the config's codebook, stages and dimension."""
    q, head_dim = cfg.quant(cfg.lm_variant, cfg.lm_codes, cfg.lm_stages), lm_config(cfg).head_dim
    lm_bits = bits_per_element(q.n_codes, q.stages, head_dim, q.gain, q.gain_bits)
    return CLAIM_SPECS[name].statement.format(
        codes=cfg.n_codes, stages=cfg.claim_stages, dim=cfg.data.dim, bits=lm_bits,
        head_dim=head_dim, variant=cfg.lm_variant.removeprefix("GSRQ (").rstrip(")"))


def claims_for(cfg: GSRQConfig, seed: int = 0, lm: bool = True,
               device: str = "cpu") -> list[Claim]:
    """The claims for an explicit config (the mutation test sets ``gain_update``)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)

    def add(name, measured, note):
        table.add(name, measured, note, statement=statement(name, cfg))

    with table.guard(SYNTHETIC_CLAIMS):
        rows = figure_rate_distortion_data(cfg, seed, sweep=False, device=dev)
        check_held_out(rows)
        at = {(r["data"], r["variant"], r["stage"]): r for r in rows}
        s = cfg.claim_stages
        km_eq, gs_eq = at[("equal-norm", "RQ-kmeans", s)], at[("equal-norm",
                                                                "GSRQ (cluster gain)", s)]
        held = (f"codebooks fitted on {km_eq['n_fit']} rows, scored on {km_eq['n_scored']} "
                "held-out rows")
        ratios = [at[(d, "RQ-kmeans", 1)]["norm_ratio"] for d in ("equal-norm", "heavy-tailed")]
        add("kmeans_shrinks", max(ratios), f"worst of equal-norm {ratios[0]:.3f} and "
            f"heavy-tailed {ratios[1]:.3f}; {held}; spec probe 0.60 (in-sample)")
        add("gskm_direction", gs_eq["cos"] - km_eq["cos"],
            f"cos {km_eq['cos']:.4f} -> {gs_eq['cos']:.4f} at {gs_eq['bits']:.3g} bit/element; "
            f"{held} (in-sample {km_eq['fit_cos']:.4f} -> {gs_eq['fit_cos']:.4f}); spec probe "
            "0.834 -> 0.843 (in-sample)")
        add("gskm_l2_matched", gs_eq["rel_l2"] / km_eq["rel_l2"],
            f"relative l2 {km_eq['rel_l2']:.4f} -> {gs_eq['rel_l2']:.4f}; {held} (in-sample "
            f"{km_eq['fit_rel_l2']:.4f} -> {gs_eq['fit_rel_l2']:.4f}); gain update "
            f"{cfg.gain_update!r}; spec probe 0.293 -> 0.285 (in-sample)")
        km_h = at[("heavy-tailed", "RQ-kmeans", s)]
        tok_h = at[("heavy-tailed", "GSRQ (per-token gain)", s)]
        ratio, gain = tok_h["rel_l2"] / km_h["rel_l2"], tok_h["cos"] - km_h["cos"]
        add("per_token_gain_heavy_tail", min(1.05 - ratio, gain),
            f"l2 ratio {ratio:.3f}, cosine {km_h['cos']:.3f} -> {tok_h['cos']:.3f} "
            f"(lognormal sigma {cfg.heavy_tail}); {held}; the gain code costs "
            f"{tok_h['bits'] - km_h['bits']:.3g} extra bit/element; reported (not binding)")
    if lm:
        with table.guard(["tiny_lm_one_bit"]):
            rows = figure_tiny_lm_data(cfg, seed, device=dev)
            one = {r["variant"]: r for r in rows if r["stages"] == cfg.lm_stages}
            gs = one[cfg.lm_variant]
            km = next(r for r in rows if r["variant"] == EQUAL_RATE)
            ppl_gap = math.log(km["ppl"]) - math.log(gs["ppl"])
            acc_gap = gs["passkey"] - km["passkey"]
            base = rows[0]
            add("tiny_lm_one_bit", min(ppl_gap, acc_gap),
                f"{cfg.lm_variant} at {gs['bits']:.3g} bit vs the equal-rate {EQUAL_RATE} "
                f"({km['bits']:.3g} bit): ppl {km['ppl']:.3f} -> {gs['ppl']:.3f}, recall "
                f"{km['passkey']:.3f} -> {gs['passkey']:.3f} (chance {base['chance']:.2f}, "
                f"fp32 ceiling {base['passkey']:.3f}, fp32 ppl {base['ppl']:.3f}); K/V "
                f"log-norm std {base['k_log_norm_std']:.2f}/{base['v_log_norm_std']:.2f}; "
                f"second design (issue 47): head dim {lm_config(cfg).head_dim}, "
                f"{cfg.lm_keys} keys x {cfg.lm_digits} digits over {cfg.lm_context} "
                "characters; operating point: the rule on the baseline (seeds 0-1) found no M "
                "with recall below the ceiling, fallback M = 4 (the synthetic claims' K, "
                "stages and d); "
                "scale gap: a 2-layer char LM, not LLaMA-3-8B / LongBench; codebooks "
                "calibrated on training-split windows, scored on validation windows; the LM "
                f"is trained once (training seed {lm_config(cfg).train_seed}, "
                f"{cfg.lm_steps} steps) and cached, the same model for every seed")
    return table.claims
