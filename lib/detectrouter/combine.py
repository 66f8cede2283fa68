"""Fixed combinations of the pool's z-scores: the baseline at the router's cost (issue 46).

The router's encoder reads every text's statistics under every surrogate (second design,
``RouterConfig.stats``), so routing one text runs the whole pool. At that cost the fair
baseline is not one fixed surrogate but a fixed combination of the same scores:

* ``mean-z``: the mean over the K surrogates of the criterion's z-score (the score ensemble);
* ``max-z``: their maximum;
* ``logistic``: logistic regression on the statistics the router's encoder reads (both
  criteria under every surrogate, z-scored on human reference text, ``[K * C]``), features
  standardised on the training split, balanced class weights, ``C`` from :data:`C_GRID` by
  cross-validated AUROC (ties to the smaller ``C``).

Splits (fixed before any result was seen):

* training: the router's own training texts (machine text of every source: its stage-1 and
  stage-2 texts) against the human reference passages (the human text the pipeline already
  fits on: every surrogate's z-normalisation);
* validation: :data:`FOLDS`-fold stratified cross-validation on that training split (the
  router has no separate validation split, and carving one would change the router's own
  training data). ``mean-z`` and ``max-z`` have no parameters: their validation AUROC is their
  AUROC on the whole training split; the logistic regression's is the AUROC of its pooled
  out-of-fold scores at the chosen ``C``;
* test: the router's headline test set (held-out human passages against the machine test
  texts of every source); the metric is the router's headline metric, AUROC.

Rule: the combination with the highest validation AUROC is *the* combination; ties go to the
simpler one (order of :data:`COMBINATIONS`). The folds are shuffled with a ``random_state``
derived from the seed (numpy's own generator, not a global one); lbfgs draws nothing.
"""

from __future__ import annotations

import numpy as np

from icml26.detectrouter.detect import auroc

COMBINATIONS = ("mean-z", "max-z", "logistic")
C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)  # inverse L2 strength: five decades (the router's
# tuning tried three score temperatures on seed 0: this grid is at least as fine)
FOLDS = 5


def _logistic(c: float):
    from sklearn.linear_model import LogisticRegression  # heavy: not at import
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(
        C=c, class_weight="balanced", max_iter=2000))


def out_of_fold(x: np.ndarray, y: np.ndarray, c: float, seed: int) -> np.ndarray:
    """Pooled out-of-fold decision scores ``[n]`` of the logistic regression at ``c``
    (stratified :data:`FOLDS` folds, shuffled from ``seed``)."""
    from sklearn.model_selection import StratifiedKFold

    out = np.empty(len(y))
    folds = StratifiedKFold(FOLDS, shuffle=True, random_state=20_011 + int(seed))
    for tr, va in folds.split(x, y):
        out[va] = _logistic(c).fit(x[tr], y[tr]).decision_function(x[va])
    return out


def _auc(score: np.ndarray, y: np.ndarray) -> float:
    return auroc(score[y == 0], score[y == 1])


def combinations(train_h: tuple, train_m: tuple, test_h: tuple, test_m: tuple,
                 seed: int) -> dict:
    """Every combination's validation and test AUROC and the one the rule chooses.

    Each argument is ``(z [n, K], stats [n, K * C])``: the criterion's z-scores under the pool
    and the router's statistics, for the training human / machine texts and the test human /
    machine texts. Returns ``{"val": {name: auc}, "test": {name: auc}, "chosen": name,
    "C": the logistic regression's C, "auroc": the chosen one's test AUROC}``."""
    y = np.r_[np.zeros(len(train_h[0])), np.ones(len(train_m[0]))].astype(int)
    z_tr, x_tr = np.concatenate([train_h[0], train_m[0]]), np.concatenate([train_h[1],
                                                                            train_m[1]])
    val = {"mean-z": _auc(z_tr.mean(1), y), "max-z": _auc(z_tr.max(1), y)}
    cv = [_auc(out_of_fold(x_tr, y, c, seed), y) for c in C_GRID]
    best_c = C_GRID[int(np.argmax(cv))]  # argmax: the first (smallest C) of equal ones
    val["logistic"] = max(cv)
    lr = _logistic(best_c).fit(x_tr, y)
    test = {"mean-z": auroc(test_h[0].mean(1), test_m[0].mean(1)),
            "max-z": auroc(test_h[0].max(1), test_m[0].max(1)),
            "logistic": auroc(lr.decision_function(test_h[1]),
                              lr.decision_function(test_m[1]))}
    chosen = max(COMBINATIONS, key=lambda k: (val[k], -COMBINATIONS.index(k)))
    return {"val": val, "test": test, "chosen": chosen, "C": best_c, "cv": dict(zip(C_GRID, cv)),
            "auroc": test[chosen]}
