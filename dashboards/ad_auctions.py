"""Explorer for "Autobidding Auctions with LLM-Powered Creatives" (ad_auctions).

The market model is derived from the abstract (see ``icml26.ad_auctions``).  Live views,
recomputed on every slider move from a short simulation (``LIVE_MARKETS`` episodes of
``LIVE_HORIZON`` rounds, ~0.1 s): the platform's net revenue and gross payments vs the creative
investment ``z`` (F1), each bidder's spend / budget through a mid-episode value shift at the
chosen ``z`` (F3) and the budget-bound bidders' duals with and without the ODDB-R regulariser
(F4).  Behind the Run button (with progress): the grid optimum and the heuristics at the full
horizon, then TTSL-PPO's training in chunks (F2).  The module also holds the plot functions
the notebook uses.

Serve alone with ``panel serve dashboards/ad_auctions.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import param

from icml26 import ad_auctions as aa
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

BIDDER_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
NET, GROSS, HEUR = "#1f77b4", "#7f7f7f", "#d62728"
LIVE_HORIZON = 100   # rounds of the live views (the claims use 300)
LIVE_MARKETS = 8     # episodes per point of the live views (the claims use 64)
LIVE_GRID = 11       # z points of the live curve (the claims use 21)
CHUNKS = 4           # the Run trains PPO in this many chunks (one progress step each)


# --------------------------------------------------------------------------- plot functions
def curve_chart(d: dict, z_now: float | None = None, title: str | None = None) -> Chart:
    """F1: net revenue and gross payments per round vs z; the optimum (and the chosen z)."""
    series = [Series(NET, d["z"], d["net"], "net"),
              Series(GROSS, d["z"], d["payments"], "payments", dash="dashed"),
              Series(NET, [d["z_star"]], [d["net_star"]], "z*", kind="scatter")]
    if z_now is not None:
        series.append(Series("black", kind="vline", at=z_now, dash="dotted", width=1))
    return Chart(title or f"Net revenue vs z (z* = {d['z_star']:.2f})",
                 "creative investment z", "per round", series)


def spend_chart(s: dict, beta: float, title: str | None = None) -> Chart:
    """F3: each bidder's spend / budget over the episode (dotted: the shift)."""
    run = s["runs"][beta]
    path = np.asarray(run["spend_ratio_path"])
    t = np.arange(1, len(path) + 1)
    series = [Series("lightgrey", kind="hline", at=1.0, dash="dashed", width=1),
              Series("black", kind="vline", at=s["shift_round"], dash="dotted", width=1)]
    for i in range(path.shape[1]):
        tag = "bound" if s["bound"][i] else "free"
        series.append(Series(BIDDER_COLORS[i % 5], t, path[:, i], f"bidder {i} ({tag})"))
    return Chart(title or f"Spend / budget (beta = {beta:g})", "round", "spend / budget",
                 series)


def dual_chart(s: dict, title: str | None = None) -> Chart:
    """F4: budget-bound bidders' duals mu over rounds, regularised (solid) vs plain (dashed)."""
    reg, plain = (np.asarray(s["runs"][b]["mu_path"]) for b in aa.BETAS)
    t = np.arange(1, len(reg) + 1)
    series = [Series("black", kind="vline", at=s["shift_round"], dash="dotted", width=1)]
    for i, bound in enumerate(s["bound"]):
        if bound:
            c = BIDDER_COLORS[i % 5]
            series += [Series(c, t, reg[:, i], f"bidder {i}, beta={aa.BETAS[0]:g}"),
                       Series(c, t, plain[:, i], f"bidder {i}, beta=0", dash="dashed")]
    return Chart(title or "Duals through the shift", "round", "dual mu", series)


def ppo_chart(d: dict) -> Chart:
    """F2: TTSL-PPO's mean z per iteration vs the grid optimum and the myopic rule's z."""
    it = np.arange(1, len(d["z_path"]) + 1)
    return Chart(f"TTSL-PPO z -> {d['z_ppo']:.2f} (z* = {d['z_star']:.2f})", "PPO iteration",
                 "creative investment z", [
                     Series(NET, kind="hline", at=d["z_star"], dash="dashed", width=1),
                     Series(HEUR, kind="hline", at=d["heuristics"]["myopic"]["z"],
                            dash="dotted", width=1),
                     Series(NET, it, d["z_path"], "policy mean z")])


def ppo_net_chart(d: dict) -> Chart:
    """F2: batch net revenue per iteration; dashed: the grid optimum, dotted: heuristics."""
    it = np.arange(1, len(d["net_path"]) + 1)
    h = d["heuristics"]
    marks = [Series(HEUR, kind="hline", at=v["net"], dash="dotted", width=1) for v in h.values()]
    return Chart(f"Net revenue: PPO {d['net_ppo']:.3f}, best rule "
                 f"{max(v['net'] for v in h.values()):.3f}", "PPO iteration", "per round", [
                     Series(NET, kind="hline", at=d["net_star"], dash="dashed", width=1),
                     *marks, Series(NET, it, d["net_path"], "batch net revenue")])


RULE_COLORS = {"TTSL-PPO": NET, "fixed z (tuned)": "#2ca02c", "myopic (tuned)": "#9467bd",
               "z = 0": HEUR, "z = z_max": "#ff7f0e", "myopic": "#8c564b"}


def rules_chart(d: dict, key: str = "net") -> Chart:
    """Every rule on the evaluation draws (``figure_ppo_data``): F1's curve of ``key`` (net
    revenue or net welfare) vs z, TTSL-PPO, the tuned heuristics and the untuned rules as
    points; for net revenue also what the fixed-z tuner saw (its training batches)."""
    word = {"net": "net revenue", "net_welfare": "welfare net of the inference cost"}[key]
    rules = {"TTSL-PPO": {"z": d["z_ppo"], key: d[f"{key}_ppo"]}, **d["tuned"],
             **d["heuristics"]}
    series = [Series(GROSS, d["curve"]["z"], d["curve"][key], "curve", width=1)]
    if key == "net":
        t = d["tuned"]["fixed z (tuned)"]
        series.append(Series("lightgrey", t["grid"], t["tune_net"], "tuning batches",
                             kind="scatter"))
    short = {"TTSL-PPO": "PPO", "fixed z (tuned)": "fixed tuned", "myopic (tuned)":
             "myopic tuned", "z = 0": "z=0", "z = z_max": "z_max", "myopic": "myopic"}
    series += [Series(RULE_COLORS[k], [v["z"]], [v[key]], f"{short[k]} {v[key]:.4f}",
                      kind="scatter") for k, v in rules.items()]
    tuned = max(d["tuned"].values(), key=lambda v: v[key])[key]
    return Chart(f"{word.capitalize()}: TTSL-PPO {d[f'{key}_ppo']:.4f}, best tuned "
                 f"heuristic {tuned:.4f}", "creative investment z", "per round", series)


def training_pacing_chart(d: dict) -> Chart:
    """Pacing while the leader moves: each budget-bound bidder's ``min(lasts, spent)`` per
    TTSL-PPO iteration (``figure_ppo_data``'s ``paced_path``), with the 0.95 target."""
    paced = np.asarray(d["paced_path"])
    it = np.arange(1, len(paced) + 1)
    series = [Series("lightgrey", kind="hline", at=0.95, dash="dashed", width=1)]
    series += [Series(BIDDER_COLORS[i % 5], it, paced[:, i], f"bidder {i} (bound)")
               for i, bound in enumerate(d["train_bound"]) if bound]
    return Chart("Pacing while TTSL-PPO's z moves (target >= 0.95, dashed)",
                 "PPO iteration", "min(t_exhaust / T, spend / B)", series)


# --------------------------------------------------------------------------- live compute
@functools.lru_cache(maxsize=64)
def _live(market: aa.MarketConfig, z: float, seed: int) -> dict:
    """The live curve and the shift runs on a short horizon (cached per setting)."""
    cfg = aa.AuctionConfig(market=market, grid_points=LIVE_GRID, eval_markets=LIVE_MARKETS,
                           shift_markets=LIVE_MARKETS)
    return {"curve": aa.figure_curve_data(cfg, seed),
            "shift": aa.figure_shift_data(cfg, seed, z)}


LIVE_CAPTION = (
    f"*Live views* ({LIVE_MARKETS} episodes of {LIVE_HORIZON} rounds; the claims use 64 x "
    "300). *Top left:* net revenue (payments - kappa z) and gross payments per round vs the "
    "creative investment z at the bidders' ODDB-R response; the dot marks the optimum, "
    "the dotted line the chosen z. *Top right:* spend / budget of each bidder at z; values "
    "shift at the dotted line (bidders 0 and 1 x1.6, bidder 2 x0.7); 'bound' bidders would "
    "overspend without pacing. *Bottom:* their duals mu with the regulariser (solid) and "
    "without (dashed). The market model is derived from the paper's abstract.")


# --------------------------------------------------------------------------- explorer
class AdAuctionsExplorer(ExplorerBase):
    """Turn the inference cost, the lift and the pacing; train the platform by Run."""

    kappa = param.Number(0.1, bounds=(0.0, 0.4), step=0.01,
                         doc="Inference cost kappa per unit of z per round (PIM).")
    theta_scale = param.Number(1.0, bounds=(0.0, 2.0), step=0.1,
                               doc="Multiplier of every bidder's creative lift theta_i.")
    budget_scale = param.Number(1.0, bounds=(0.3, 3.0), step=0.1,
                                doc="Multiplier of the three budget-bound bidders' budgets.")
    n_bidders = param.Integer(5, bounds=(2, 5), doc="Advertisers in the auction.")
    eta = param.Number(0.5, bounds=(0.05, 2.0), step=0.05,
                       doc="Dual step size eta of ODDB-R (the fast timescale).")
    beta = param.Number(0.05, bounds=(0.0, 0.5), step=0.01,
                        doc="ODDB-R regulariser weight beta (compared with beta = 0).")
    reserve = param.Number(0.05, bounds=(0.0, 1.0), step=0.05,
                           doc="Reserve score of the auction.")
    z_max = param.Number(4.0, bounds=(1.0, 6.0), step=0.5,
                         doc="The platform's largest investment (the grid's end).")
    z = param.Number(1.6, bounds=(0.0, 6.0), step=0.1,
                     doc="Investment of the spend and dual views (must be <= z_max).")
    ppo_lr = param.Number(0.05, bounds=(0.005, 0.2), step=0.005,
                          doc="TTSL-PPO's policy step (the slow timescale; Run).")
    ppo_iterations = param.Integer(40, bounds=(8, 120), step=4,
                                   doc="TTSL-PPO iterations of the Run (one batch of 32 "
                                       "episodes each).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of every draw.")
    run = param.Event(doc="Train TTSL-PPO and evaluate it against the heuristics.")
    RUN_LABEL, LIVE_CAPTION = "Run TTSL-PPO", LIVE_CAPTION

    INVALID_EXAMPLES = [{"z": 5.0, "z_max": 2.0}]

    def __init__(self, **params):
        super().__init__(**params)
        self._show_error()

    # ------------------------------------------------------------------ model
    def config(self) -> aa.AuctionConfig:
        """The lib config at the claims' horizon (raises ValueError when invalid)."""
        if self.z > self.z_max:
            raise ValueError(f"z ({self.z:g}) must be <= z_max ({self.z_max:g})")
        base, n = aa.MarketConfig(), self.n_bidders
        budget = tuple(b * self.budget_scale if b < 10 else b for b in base.budget)
        market = aa.MarketConfig(
            q0=base.q0[:n], theta=tuple(t * self.theta_scale for t in base.theta[:n]),
            value_mu=base.value_mu[:n], budget=budget[:n], shift=base.shift[:n],
            kappa=round(self.kappa, 6), reserve=round(self.reserve, 6), eta=round(self.eta, 6),
            beta=round(self.beta, 6), z_max=round(self.z_max, 6))
        market.validate()
        ppo = aa.PPOConfig(lr=round(self.ppo_lr, 6), iterations=self.ppo_iterations)
        cfg = aa.AuctionConfig(market=market, ppo=ppo)
        cfg.validate()
        return cfg

    @param.depends("kappa", "theta_scale", "budget_scale", "n_bidders", "eta", "beta",
                   "reserve", "z_max", "z", "ppo_lr", "ppo_iterations", watch=True)
    def _check(self) -> None:
        self._show_error()

    def live_data(self) -> dict | None:
        try:
            cfg = self.config()
        except ValueError:
            return None
        market = dataclasses.replace(cfg.market, horizon=LIVE_HORIZON)
        return _live(market, round(self.z, 6), self.seed)

    def plot_data(self) -> dict:
        """The numbers behind the views."""
        d = self.live_data()
        out = {}
        if d is not None:
            c, s = d["curve"], d["shift"]
            out = {"z": np.asarray(c["z"]), "net": np.asarray(c["net"]),
                   "payments": np.asarray(c["payments"]), "z_star": c["z_star"],
                   "spend_ratio": np.asarray(s["runs"][aa.BETAS[0]]["spend_ratio_path"]),
                   "mu_reg": np.asarray(s["runs"][aa.BETAS[0]]["mu_path"]),
                   "mu_plain": np.asarray(s["runs"][aa.BETAS[1]]["mu_path"])}
        if self._result is not None:
            out["z_path"] = np.asarray(self._result["z_path"])
            out["net_path"] = np.asarray(self._result["net_path"])
        return out

    # ------------------------------------------------------------------ live views
    MARKET = ("kappa", "theta_scale", "budget_scale", "n_bidders", "eta", "beta", "reserve",
              "z_max", "seed")

    @param.depends(*MARKET, "z")
    def net_chart(self) -> Chart | None:
        """F1 (live, short horizon): net revenue and payments vs z."""
        d = self.live_data()
        return None if d is None else curve_chart(d["curve"], self.z)

    @param.depends(*MARKET, "z")
    def spend_view(self) -> Chart | None:
        """F3 (live): spend / budget per bidder at z through the value shift."""
        d = self.live_data()
        return None if d is None else spend_chart(d["shift"], aa.BETAS[0])

    @param.depends(*MARKET, "z")
    def dual_view(self) -> Chart | None:
        """F4 (live): duals with and without the regulariser."""
        d = self.live_data()
        return None if d is None else dual_chart(d["shift"])

    def live_charts(self) -> list:
        return [self.net_chart, self.spend_view, self.dual_view]

    # ------------------------------------------------------------------ the Run
    @run_chart
    def ppo_z_view(self) -> Chart | None:
        """F2 (after Run): the policy's mean z per iteration."""
        return ppo_chart(self._result)

    @run_chart
    def ppo_net_view(self) -> Chart | None:
        """F2 (after Run): batch net revenue per iteration vs the optimum and heuristics."""
        return ppo_net_chart(self._result)

    def run_charts(self) -> list:
        return [self.ppo_z_view, self.ppo_net_view]

    def result_note(self) -> str:
        if self._result is None:
            return ("**TTSL-PPO:** press **Run** to compute the grid optimum and the "
                    "heuristics at T = 300 and train the platform's policy (its cost: under "
                    "the Run button).")
        r = self._result
        h = ", ".join(f"{k}: {v['net']:.4f}" for k, v in r["heuristics"].items())
        return (f"**TTSL-PPO** ({r['title']}): z = {r['z_ppo']:.2f}, net revenue "
                f"{r['net_ppo']:.4f} per round = {r['net_ppo'] / r['net_star']:.3f} x the grid "
                f"optimum {r['net_star']:.4f} (z* = {r['z_star']:.2f}); heuristics {h}. "
                "Dashed: the grid optimum; dotted: the myopic rule's z / each heuristic.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed, es, m = self.seed, aa.eval_seed(self.seed), cfg.eval_markets
        trainer = aa.PPOTrainer(cfg.market, cfg.ppo, seed)
        per = -(-cfg.ppo.iterations // CHUNKS)

        def grid():
            return aa.figure_curve_data(cfg, seed)

        def heuristics():
            zm = aa.myopic_z(cfg.market, cfg.zs(), m, es)
            rules = {"z = 0": 0.0, "z = z_max": cfg.market.z_max, "myopic": zm,
                     # tuned on TTSL-PPO's training budget and draws (the claims' baselines)
                     "fixed z (tuned)": aa.tune_fixed_z(cfg.market, cfg.ppo, seed)["z"],
                     "myopic (tuned)": aa.tune_myopic(cfg.market, cfg.ppo, seed)["z"]}
            return {k: {"z": z, "net": aa.evaluate(cfg.market, z, m, es)}
                    for k, z in rules.items()}

        def chunk():
            trainer.step(per)
            return trainer.result()

        def keep(results):
            curve, heur, *chunks = results
            ppo = chunks[-1]
            self._result = {**ppo, "z_ppo": ppo["z"],
                            "net_ppo": aa.evaluate(cfg.market, ppo["z"], m, es),
                            "heuristics": heur, "z_star": curve["z_star"],
                            "net_star": curve["net_star"],
                            "title": f"kappa {cfg.market.kappa:g}, {cfg.market.n_bidders} "
                                     f"bidders, lr {cfg.ppo.lr:g}, seed {seed}"}

        stages = [(f"grid optimum: {cfg.grid_points} values of z x {m} episodes", grid),
                  ("heuristics: z = 0, z = z_max, myopic, and fixed z and myopic tuned on "
                   "TTSL-PPO's budget", heuristics)]
        stages += [(f"TTSL-PPO iterations {i * per + 1}-{min((i + 1) * per, cfg.ppo.iterations)}"
                    f" of {cfg.ppo.iterations}", chunk) for i in range(CHUNKS)]
        self.run_stages(stages, keep)


Explorer = AdAuctionsExplorer
create_app = app_factory(Explorer, (
    "## Autobidding auctions with LLM-powered creatives (ad_auctions)\n\n"
    "*Autobidding Auctions with LLM-Powered Creatives*, ICML 2026 (poster 65017; no "
    "arXiv id or code found). A platform invests z in LLM creatives that lift "
    "click-through at an inference cost; budget-constrained autobidders pace by ODDB-R; "
    "the platform learns z by TTSL-PPO. **The market model is derived from the "
    "abstract.** Live: the net-revenue curve, spend and duals; **Run** trains TTSL-PPO."))

if __name__.startswith("bokeh"):
    create_app().servable()
