"""Bootstrap confidence intervals over images (numpy only).

Images are drawn with replacement; each replicate re-accumulates the one
matching pass with the images' multiplicities (for COCO as weighted sums
over what :mod:`iou_eval.protocols.resample` fixed once), so a replicate costs a few
prefix sums, not a re-match.  The draws are made before any replicate runs,
so worker processes may share them without changing a bit.  With the same
seed, image set and count, two runs draw the same replicates, which makes
deltas against a baseline paired.  Replicates that release the GIL (the
compiled COCO core) run in threads instead, each drawing its next run of
rows in turn: the same rows, drawn while other threads compute.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
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


def weight_runs(n_images: int, n: int, seed: int, size: int) -> Iterator[np.ndarray]:
    """:func:`image_weights`' rows in runs of up to ``size`` ``[b, I]``, each drawn when asked for.

    The generator draws row after row from the one seed, so the runs end to
    end are :func:`image_weights` (``n`` rows), bit for bit.
    """
    rng = np.random.default_rng(seed)
    pvals = np.full(n_images, 1.0 / n_images) if n_images else None
    for lo in range(0, n, size):
        b = min(size, n - lo)
        if pvals is None:
            yield np.zeros((b, 0), dtype=np.int64)
        else:
            yield rng.multinomial(n_images, pvals, size=b).astype(np.int64)


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float] | None:
    """The central ``level`` percentile interval of the defined values."""
    v = values[~np.isnan(values)]
    if v.size == 0:
        return None
    lo, hi = np.percentile(v, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return float(lo), float(hi)


# Below this many predictions x replicates, one process is quicker than forking.
PARALLEL_MIN_WORK = 20_000_000
# Replicates a worker computes before reporting back (progress moves per round).
ROUND = 40
# Rows a thread draws and computes at a time (replicates in threads).
THREAD_RUN = 10

Replicate = Callable[[np.ndarray], tuple[dict[str, float | None], np.ndarray]]


ZERO_WIDTH = (
    "the interval has zero width: the metric does not vary under resampling, no evidence either way"
)


def zero_width(interval: tuple[float, float] | None) -> bool:
    """A defined interval whose ends are equal (never significant: no evidence either way)."""
    return interval is not None and interval[0] == interval[1]


def run_bootstrap(
    replicate: Replicate,
    image_ids: Sequence[object],
    n: int,
    seed: int,
    level: float = 0.95,
    progress: Callable[[int], None] | None = None,
    workers: int = 1,
    executor: Any = None,
    threads: bool = False,
) -> Bootstrap:
    """Evaluate ``replicate(image_weight[I]) -> (summary, class_ap[K])`` on ``n`` resampled sets.

    ``workers`` processes share the replicates (forked after the first one,
    so whatever it caches is shared), or ``executor`` (a
    :class:`~iou_eval.protocols.partition.PartExecutor`, e.g. a Dask cluster) runs them
    in contiguous runs; the draws are made here beforehand, from the one
    seed, so the replicates do not depend on where they ran.  ``threads``:
    ``replicate`` releases the GIL, so the ``workers`` run in threads (and
    draw their rows as they go, in the same order).
    """
    if executor is None and threads and workers > 1 and n > THREAD_RUN:
        outcomes = _outcomes_in_threads(replicate, len(image_ids), n, seed, workers, progress)
    elif executor is not None:
        weights = image_weights(len(image_ids), n, seed)
        outcomes = replicates_in_parts(executor, replicate, weights, progress)
    else:
        weights = image_weights(len(image_ids), n, seed)
        outcomes = _outcomes(replicate, weights, workers, progress)
    collected: dict[str, list[float]] = {}
    for stats, _ in outcomes:
        for k, v in stats.items():
            collected.setdefault(k, []).append(np.nan if v is None else float(v))
    return Bootstrap(
        n=n,
        seed=seed,
        level=level,
        images_digest=images_digest(image_ids),
        replicates={k: np.asarray(v, dtype=np.float64) for k, v in collected.items()},
        class_ap=np.asarray([ap for _, ap in outcomes], dtype=np.float64).reshape(n, -1),
    )


def _outcomes(
    replicate: Replicate,
    weights: np.ndarray,
    workers: int,
    progress: Callable[[int], None] | None,
) -> list[tuple[dict[str, float | None], np.ndarray]]:
    """``replicate`` of each row of ``weights[n, I]``, in order, in up to ``workers`` processes."""
    from iou_eval.engine.parallel import run_parts

    tick = progress or (lambda _k: None)
    out = []
    n = len(weights)
    done = 0
    if workers > 1 and n > 1:
        # The first here: the workers then share what it caches.
        out.append(replicate(weights[0]))
        tick(1)
        done = 1
    while done < n:
        if workers <= 1:
            out.append(replicate(weights[done]))
            tick(1)
            done += 1
            continue
        take = min(n - done, ROUND * workers)
        bounds = np.linspace(done, done + take, workers + 1).astype(int)
        parts = [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]
        for chunk in run_parts(lambda p: [replicate(w) for w in weights[p[0] : p[1]]], parts):
            out.extend(chunk)
        tick(take)
        done += take
    return out


Outcome = tuple[dict[str, float | None], np.ndarray]


def _outcomes_in_threads(
    replicate: Replicate,
    n_images: int,
    n: int,
    seed: int,
    workers: int,
    progress: Callable[[int], None] | None,
) -> list[Outcome]:
    """``replicate`` of each of the ``n`` drawn rows, in order, in ``workers`` threads.

    Each thread takes the next run of rows, drawn as it is taken (the rows
    come in seed order whichever thread draws them), then computes it while
    another draws or computes.  The first run is computed here first, so
    that what the replicates cache is made once.
    """
    from iou_eval.engine.parallel import run_in_turn

    tick = progress or (lambda _k: None)
    runs = weight_runs(n_images, n, seed, THREAD_RUN)
    first = next(runs)
    out = [replicate(w) for w in first]
    tick(len(first))
    for chunk in run_in_turn(
        lambda rows: [replicate(w) for w in rows], runs, workers, lambda c: tick(len(c))
    ):
        out.extend(chunk)
    return out


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
