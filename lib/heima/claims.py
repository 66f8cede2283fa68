"""The claims of ``heima``: the claim rows and how each is measured from the trained models.

Binding (the issue; 2 hops): the interpreter reads the thinking states, shuffled states read at
chance, the decoder loss is what fills the states (Heima vs pause tokens), Heima keeps CoT's
accuracy and beats no-CoT. In the first design (every model from scratch, 600 steps) only the
shuffled-state control and the token reduction held: the thinking tokens never learnt the
lookups (``benchmarks/heima/heima_seeds_first_design.csv``). The second design (issue 34, fixed
before its seeds ran): Heima and pause tokens start from the trained CoT model and Heima's
thinking states get the dense target (the CoT model's state where it writes the stage's
result); ``NOT_REPRODUCED`` lists what still fails (``benchmarks/heima/heima_seeds.csv``). Reported:
the 3-hop row (the limit). The progressive schedule is a figure (F1, F4), not a claim: the issue
names none for it, and its model would add ~17 s of CPU per seed.
"""

from __future__ import annotations

from icml26.claims import Claim, ClaimSpec, ClaimTable
from icml26.common import resolve_device
from icml26.heima.experiments import PAPER, HeimaConfig, config_for, trained

#: 2 (issue 34): the claims measure the second design (Heima and pause tokens from the CoT
#: model, the dense target, CoT 1200 steps); the statements, targets and flags are unchanged,
#: so the first design's hold rates must not stand for them.
CLAIMS_VERSION = 2

#: the abstract's sentence the accuracy rows quote (``source``)
ACCURACY = ("Heima improves reasoning efficiency, while maintaining or even achieving better "
            "zero-shot accuracy")
#: name: ClaimSpec; ``{...}`` fields are completed from the config.
CLAIM_SPECS = {
    "interpreter_reads_thinking": ClaimSpec(
        statement="At {hops} hops the interpreter reconstructs every stage's content from its "
                  "thinking state (\"the interpreter reconstructs coherent reasoning progresses "
                  "from compressed thinking tokens\"; min over stages of content-token accuracy "
                  ">= 0.75)",
        op=">=", threshold=0.75, expected=True, role="headline", unit="each",
        source="the interpreter reconstructs coherent reasoning progresses from compressed "
               "thinking tokens"),
    "information_gap_control": ClaimSpec(
        statement="From thinking states shuffled across prompts the interpreter is at chance "
                  "(max over stages of accuracy - 1/M <= 0.05)",
        op="<=", threshold=0.05, expected=True, role="check", unit="each", source=""),
    "thinking_needs_decoder": ClaimSpec(
        statement="The interpreter loss is what makes thinking tokens reason: answer accuracy "
                  "of Heima - pause tokens (same tokens, no decoder loss) >= 0.25 at {hops} "
                  "hops",
        op=">=", threshold=0.25, expected=True, role="finding", unit="mean", source=""),
    "accuracy_maintained": ClaimSpec(
        statement="At {hops} hops Heima's answer accuracy is within 5 points of full CoT's "
                  "(\"while maintaining or even achieving better zero-shot accuracy\"; Heima - "
                  "CoT >= -0.05)",
        op=">=", threshold=-0.05, expected=True, role="headline", unit="mean",
        source=ACCURACY),
    "beats_no_cot": ClaimSpec(
        statement="At {hops} hops Heima's answer accuracy beats no-CoT's by >= 25 points (the "
                  "thinking tokens carry reasoning: \"preserving essential reasoning\")",
        op=">=", threshold=0.25, expected=True, role="mechanism", unit="mean",
        source="preserving essential reasoning while removing redundancy"),
    "token_reduction": ClaimSpec(
        statement="Heima emits >= 4x fewer tokens than verbose CoT up to the answer (greedy "
                  "decoding, {hops} hops): fixed by the two token formats, so a check that "
                  "both emit their format, not the efficiency headline",
        op=">=", threshold=4.0, expected=True, role="check", unit="each", source=""),
    "efficiency_at_accuracy": ClaimSpec(
        statement="Heima spends >= 4x fewer tokens per correct answer than CoT (\"Heima "
                  "improves reasoning efficiency\"; tokens emitted up to the answer divided "
                  "by answer accuracy, {hops} hops: a compression that loses the answers "
                  "gains nothing)",
        op=">=", threshold=4.0, expected=True, role="headline", unit="mean",
        source="Heima improves reasoning efficiency"),
    "accuracy_maintained_3hops": ClaimSpec(
        statement="At {limit} hops Heima's answer accuracy is within 5 points of full CoT's "
                  "(\"while maintaining or even achieving better zero-shot accuracy\")",
        op=">=", threshold=-0.05, expected=False, role="headline", unit="mean",
        source=ACCURACY),
}

#: checks no realistic injected bug can make fail at this scale (tests/test_status.py): none
#: since the second design, whose states carry their stages' results, so dropping the shuffle
#: (each prompt reads its own state) fails information_gap_control (a mutation test)
NO_REALISTIC_FAILURE: dict[str, str] = {}
#: Binding claims that fail on the CI seeds 0 and 1 (second design; evidence in the notebook's
#: closing section and ``benchmarks/heima/heima_seeds.csv``, seeds 0-6). The thinking states now
#: hold each stage's result ``b = x_k`` (seed 0: 1.00 / 0.96) but not its input ``a = x_{k-1}``
#: (0.13 / 0.16): the dense target is CoT's state where it writes ``b``, which need not carry
#: ``a``, so the interpreter's content accuracy is about 0.56 < 0.75 on every seed.
#: ``thinking_needs_decoder`` fails on seeds 0, 1, 4, 6: the CoT start alone lets pause tokens
#: answer (seed 0: 0.902); on seeds 1 and 6 CoT itself did not learn the lookups in 1200 steps
#: (0.178, 0.248), so Heima, pause and no-CoT are all at ~0.25 (``beats_no_cot`` fails there).
#: ``accuracy_maintained`` holds on seeds 0-3 and 6 and fails on 4 and 5 (-0.400, -0.098).
NOT_REPRODUCED = ("interpreter_reads_thinking", "thinking_needs_decoder", "beats_no_cot")
BINDING = ("interpreter_reads_thinking", "information_gap_control", "thinking_needs_decoder",
           "accuracy_maintained", "beats_no_cot", "token_reduction", "efficiency_at_accuracy")


def claims(seed: int = 0, scale: str = "quick", device: str = "cpu") -> list[Claim]:
    """Every claim of the paper at ``scale``, recomputed for ``seed`` on ``device`` (models
    trained and evaluated there; prompts drawn on the CPU generator)."""
    dev = resolve_device(device)
    return claims_for(config_for(scale), seed, dev)


def _fmt(xs) -> str:
    return " / ".join(f"{x:.3f}" for x in xs)


def claims_for(cfg: HeimaConfig, seed: int = 0, device: str = "cpu", reported: bool = True,
               progress=None) -> list[Claim]:
    """The claims for an explicit config (the mutation tests set ``interp_weight`` /
    ``detach``); ``reported=False`` skips the 3-hop row (and its two models)."""
    dev = resolve_device(device)
    table = ClaimTable(PAPER, CLAIM_SPECS)
    limit = max(cfg.limit_hops)
    design = (f"second design: Heima and pause start from the CoT model ({cfg.cot_steps} "
              f"steps), then {cfg.steps} steps, Heima with the dense target towards CoT's "
              f"writing-position states (weight {cfg.dense_weight:g})" if cfg.from_cot else
              f"first design: every model from scratch, {cfg.steps} steps")
    budget = (f"d={cfg.d_model}, {cfg.n_layers} layers, batch {cfg.batch}, seed {seed}; "
              f"{design}; {cfg.eval_n} held-out prompts; models cached")

    def add(name, measured, note):
        table.add(name, measured, note,
                  statement=CLAIM_SPECS[name].statement.format(hops=cfg.hops, limit=limit))

    with table.guard(BINDING):
        ev = {k: trained(cfg, k, seed, progress=progress, device=dev)["eval"]
              for k in ("nocot", "cot", "heima", "pause")}
        h, p, c, n = ev["heima"], ev["pause"], ev["cot"], ev["nocot"]
        mut = ""
        if cfg.interp_weight == 0 or cfg.detach:
            mut = (f"; MUTATED Heima (interp_weight={cfg.interp_weight:g}, "
                   f"detach={cfg.detach})")
        add("interpreter_reads_thinking", min(h["real"]),
            f"content accuracy per stage {_fmt(h['real'])} (greedy reconstruction of the "
            f"stage text; template tokens not counted); {budget}{mut}")
        add("information_gap_control", max(h["shuffled"]) - h["chance"],
            f"shuffled {_fmt(h['shuffled'])} vs chance {h['chance']:.3f} (real "
            f"{_fmt(h['real'])}){mut}")
        add("thinking_needs_decoder", h["accuracy"] - p["accuracy"],
            f"Heima {h['accuracy']:.3f}, pause tokens {p['accuracy']:.3f} (a probe "
            f"interpreter on the pause states reads {_fmt(p['real'])}; both from the same "
            f"start, so the difference is the state supervision){mut}")
        add("accuracy_maintained", h["accuracy"] - c["accuracy"],
            f"Heima {h['accuracy']:.3f}, CoT {c['accuracy']:.3f}; {budget}{mut}")
        add("beats_no_cot", h["accuracy"] - n["accuracy"],
            f"Heima {h['accuracy']:.3f}, no-CoT {n['accuracy']:.3f} (no-CoT trains "
            f"{cfg.steps} steps from scratch"
            + (f"; Heima's training includes the CoT model's {cfg.cot_steps}, so it had more "
               "compute" if cfg.from_cot else "") + f"){mut}")
        add("token_reduction", c["tokens_to_answer"] / h["tokens_to_answer"],
            f"CoT {c['tokens_to_answer']:.2f} tokens, Heima {h['tokens_to_answer']:.2f} "
            f"(the paper: 100-200 CoT tokens -> 13-16); a design quantity once both emit "
            f"their format; reported")
        # tokens per correct answer: token_reduction scaled by the accuracy ratio, so the
        # efficiency only counts answers the model gets right (issue 46)
        per_correct = [m["tokens_to_answer"] / m["accuracy"] if m["accuracy"] > 0
                       else float("inf") for m in (c, h)]
        add("efficiency_at_accuracy", per_correct[0] / per_correct[1],
            f"tokens per correct answer: CoT {per_correct[0]:.2f} ({c['tokens_to_answer']:.2f} "
            f"tokens / accuracy {c['accuracy']:.3f}), Heima {per_correct[1]:.2f} "
            f"({h['tokens_to_answer']:.2f} / {h['accuracy']:.3f}){mut}")
    if not reported:
        return table.claims
    with table.guard(["accuracy_maintained_3hops"]):
        h3, c3 = (trained(cfg, k, seed, hops=limit, progress=progress, device=dev)["eval"]
                  for k in ("heima", "cot"))
        add("accuracy_maintained_3hops", h3["accuracy"] - c3["accuracy"],
            f"Heima {h3['accuracy']:.3f}, CoT {c3['accuracy']:.3f}; Heima's interpreter per "
            f"stage {_fmt(h3['real'])}: a thinking token adds a position, not depth, so the "
            f"last hop must fit in {cfg.n_layers} layers; reported (the limit, not binding)")
    return table.claims
