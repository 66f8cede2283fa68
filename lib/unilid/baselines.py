"""The baselines of ``unilid``, each tuned on the validation samples (never on the test set).

* fastText's supervised classifier (the ``fasttext`` module of the ``fasttext-wheel``
  package, one thread, a fixed seed): a small grid of configurations, among them the
  defaults and a character n-gram LID configuration (spec); predictions through the batch
  ``predict`` (the single-string path of fasttext 0.9.2 calls ``np.array(..., copy=False)``,
  which numpy 2 rejects);
* multinomial naive Bayes on character 1-4-gram counts (smoothing tuned);
* logistic regression on character 1-4-gram tf-idf (inverse regularisation tuned).

Each takes ``train`` / ``valid`` as ``{label: [texts]}``: the configuration with the best
validation accuracy is refitted on ``train`` alone (the k-shot budget) and predicts the test
texts.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable

FASTTEXT_GRID = {  # name: train_supervised keyword arguments
    "defaults": {},
    "defaults, 50 epochs": {"epoch": 50},
    "char 2-5-grams, dim 64, 50 epochs": {"minn": 2, "maxn": 5, "dim": 64, "epoch": 50},
}
NB_ALPHAS = (0.01, 0.1, 1.0)
LR_CS = (1.0, 10.0, 100.0)
METHODS = ("UniLID", "UniLID (characters)", "char NB", "char LR", "fastText")


def _flat(d: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    texts = [t for code, ts in d.items() for t in ts]
    labels = [code for code, ts in d.items() for _ in ts]
    return texts, labels


def _accuracy(pred: list[str], gold: list[str]) -> float:
    return sum(p == g for p, g in zip(pred, gold)) / max(1, len(gold))


def tune(make: Callable[[object], Callable[[list[str]], list[str]]], grid,
         valid: dict[str, list[str]]) -> tuple[object, float]:
    """The grid value whose fitted predictor is most accurate on ``valid`` (first on ties)."""
    texts, gold = _flat(valid)
    best, best_acc = None, -1.0
    for value in grid:
        acc = _accuracy(make(value)(texts), gold)
        if acc > best_acc:
            best, best_acc = value, acc
    return best, best_acc


def char_nb(train, valid, test_texts: list[str], seed: int = 0) -> tuple[list[str], str]:
    """Multinomial NB on char 1-4-gram counts: predictions and the chosen setting."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.pipeline import make_pipeline

    texts, labels = _flat(train)

    def make(a):
        clf = make_pipeline(CountVectorizer(analyzer="char", ngram_range=(1, 4),
                                            lowercase=False), MultinomialNB(alpha=a))
        return clf.fit(texts, labels).predict

    a, _ = tune(make, NB_ALPHAS, valid)
    return list(make(a)(test_texts)), f"alpha {a:g}"


def char_lr(train, valid, test_texts: list[str], seed: int = 0) -> tuple[list[str], str]:
    """Logistic regression on char 1-4-gram tf-idf: predictions and the chosen setting."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts, labels = _flat(train)

    def make(c):
        clf = make_pipeline(TfidfVectorizer(analyzer="char", ngram_range=(1, 4),
                                            sublinear_tf=True, lowercase=False),
                            LogisticRegression(C=c, max_iter=2000, random_state=seed))
        with warnings.catch_warnings():  # k = 1: one sample per class is the experiment
            warnings.filterwarnings("ignore", message="The number of unique classes")
            return clf.fit(texts, labels).predict

    c, _ = tune(make, LR_CS, valid)
    return list(make(c)(test_texts)), f"C {c:g}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def fasttext_clf(train, valid, test_texts: list[str], seed: int = 0
                 ) -> tuple[list[str], str]:
    """fastText's supervised classifier (grid tuned on ``valid``): predictions, setting."""
    import fasttext

    texts, labels = _flat(train)
    fd, path = tempfile.mkstemp(suffix=".txt")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for t, lab in zip(texts, labels):
                f.write(f"__label__{lab} {_one_line(t)}\n")

        models = {}  # one thread and a fixed seed: refitting the chosen config is identical

        def make(name):
            if name not in models:
                models[name] = fasttext.train_supervised(path, thread=1, seed=seed, verbose=0,
                                                         **FASTTEXT_GRID[name])
            model = models[name]

            def predict(xs):
                if not xs:
                    return []
                out, _ = model.predict([_one_line(x) for x in xs], k=1)
                return [lab[0].removeprefix("__label__") for lab in out]
            return predict

        name, _ = tune(make, FASTTEXT_GRID, valid)
        return make(name)(test_texts), name
    finally:
        os.unlink(path)


BASELINES = {"char NB": char_nb, "char LR": char_lr, "fastText": fasttext_clf}
