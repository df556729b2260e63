"""Bootstrap confidence intervals over images (numpy only).

Images are drawn with replacement; each replicate re-accumulates the one
matching pass with the images' multiplicities, so a replicate costs an
accumulation, not a re-match.  With the same seed, image set and count, two
runs draw the same replicates, which makes deltas against a baseline paired.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Bootstrap:
    """Replicates of summary metrics.

    Attributes:
        n, seed: how many replicates, drawn from which seed.
        level: the interval's coverage, e.g. 0.95.
        images_digest: a digest of the image ids, so a paired comparison can
            check that both runs resampled the same images.
        replicates: summary metric -> ``[n]`` float64 (NaN where undefined).
        class_ap: ``[n, K]`` per-class AP of each replicate (NaN where undefined).
    """

    n: int
    seed: int
    level: float
    images_digest: str
    replicates: dict[str, np.ndarray]
    class_ap: np.ndarray

    def interval(self, metric: str) -> tuple[float, float] | None:
        return percentile_interval(self.replicates[metric], self.level)


def images_digest(image_ids: Sequence[object]) -> str:
    text = "\n".join(sorted(repr(i) for i in image_ids))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def image_weights(n_images: int, n: int, seed: int) -> np.ndarray:
    """``[n, I]`` int64 multiplicities: each row draws ``I`` images with replacement."""
    rng = np.random.default_rng(seed)
    if n_images == 0:
        return np.zeros((n, 0), dtype=np.int64)
    return rng.multinomial(n_images, np.full(n_images, 1.0 / n_images), size=n).astype(np.int64)


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float] | None:
    """The central ``level`` percentile interval of the defined values."""
    v = values[~np.isnan(values)]
    if v.size == 0:
        return None
    lo, hi = np.percentile(v, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return float(lo), float(hi)


def run_bootstrap(
    replicate: Callable[[np.ndarray], tuple[dict[str, float | None], np.ndarray]],
    image_ids: Sequence[object],
    n: int,
    seed: int,
    level: float = 0.95,
    progress: Callable[[int], None] | None = None,
    executor: Any = None,
) -> Bootstrap:
    """Evaluate ``replicate(image_weight[I]) -> (summary, class_ap[K])`` on ``n`` resampled sets.

    ``executor`` (a :class:`~iou_eval.partition.PartExecutor`, e.g. a Dask
    cluster) shares the replicates out in contiguous runs; the draws are
    made here, from the one seed, so the replicates are the same.
    """
    weights = image_weights(len(image_ids), n, seed)
    if executor is None:
        outcomes = []
        for i in range(n):
            outcomes.append(replicate(weights[i]))
            if progress is not None:
                progress(1)
    else:
        outcomes = replicates_in_parts(executor, replicate, weights, progress)
    collected: dict[str, list[float]] = {}
    per_class: list[np.ndarray] = []
    for stats, ap in outcomes:
        for k, v in stats.items():
            collected.setdefault(k, []).append(np.nan if v is None else float(v))
        per_class.append(ap)
    return Bootstrap(
        n=n,
        seed=seed,
        level=level,
        images_digest=images_digest(image_ids),
        replicates={k: np.asarray(v, dtype=np.float64) for k, v in collected.items()},
        class_ap=np.asarray(per_class, dtype=np.float64).reshape(n, -1),
    )


# Runs of replicates per executor slot: enough to balance, few enough to be cheap.
RUNS_PER_SLOT = 4


def replicates_in_parts(
    executor: Any,
    replicate: Callable[[np.ndarray], tuple[dict[str, float | None], np.ndarray]],
    weights: np.ndarray,
    progress: Callable[[int], None] | None = None,
) -> list[tuple[dict[str, float | None], np.ndarray]]:
    """``[replicate(w) for w in weights]`` (``weights[n, I]``) in contiguous runs on ``executor``.

    ``replicate`` (with the evaluation it belongs to) is shared once per
    place; each run travels as the smallest integer type that holds its
    multiplicities.
    """
    n = len(weights)
    if n == 0:
        return []
    bounds = np.linspace(0, n, min(n, executor.slots * RUNS_PER_SLOT) + 1).astype(np.int64)
    runs = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]
    small = np.min_scalar_type(int(weights.max(initial=0)))
    parts = [weights[a:b].astype(small) for a, b in runs]

    def done(i: int) -> None:
        if progress is not None:
            progress(runs[i][1] - runs[i][0])

    results = executor.run(replicate_rows, replicate, parts, progress=done)
    return [outcome for run in results for outcome in run]


def replicate_rows(
    replicate: Callable[[np.ndarray], tuple[dict[str, float | None], np.ndarray]],
    rows: np.ndarray,
) -> list[tuple[dict[str, float | None], np.ndarray]]:
    """``replicate(w)`` for each row of ``rows[b, I]``, as int64 multiplicities (one part's work)."""
    return [replicate(w) for w in rows.astype(np.int64)]
