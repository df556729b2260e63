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
) -> Bootstrap:
    """Evaluate ``replicate(image_weight[I]) -> (summary, class_ap[K])`` on ``n`` resampled sets."""
    weights = image_weights(len(image_ids), n, seed)
    collected: dict[str, list[float]] = {}
    per_class: list[np.ndarray] = []
    for i in range(n):
        stats, ap = replicate(weights[i])
        for k, v in stats.items():
            collected.setdefault(k, []).append(np.nan if v is None else float(v))
        per_class.append(ap)
        if progress is not None:
            progress(1)
    return Bootstrap(
        n=n,
        seed=seed,
        level=level,
        images_digest=images_digest(image_ids),
        replicates={k: np.asarray(v, dtype=np.float64) for k, v in collected.items()},
        class_ap=np.asarray(per_class, dtype=np.float64).reshape(n, -1),
    )
