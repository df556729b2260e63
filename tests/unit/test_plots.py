"""Plots: files written whole, and what is drawn is the arrays the numbers come from."""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from iou_eval.errors import UsageError
from iou_eval.protocols.accumulate import CocoArrays, summarize_coco
from iou_eval.protocols.params import COCO_RECALL_THRESHOLDS
from iou_eval.protocols.tables import best_f1, f1_sweep

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

from iou_eval.reporters import plots  # noqa: E402

THR = tuple(np.linspace(0.5, 0.95, 10))
REC = np.asarray(COCO_RECALL_THRESHOLDS)
SVG = "{http://www.w3.org/2000/svg}"


def random_precision(rng, k: int, undefined: tuple[int, ...] = ()) -> np.ndarray:
    """``[T, R, K, A, M]`` shaped like pycocotools': non-increasing in recall, 0 past the reach."""
    p = np.zeros((len(THR), len(REC), k, 4, 3))
    for t in range(len(THR)):
        for c in range(k):
            env = np.maximum.accumulate(rng.uniform(0, 1, len(REC))[::-1])[::-1]
            env[rng.uniform(0.2, 1) < REC] = 0
            p[t, :, c] = env[:, None, None]
    p[:, :, list(undefined)] = -1
    return p


def svg_paths(path) -> dict[str, list[str]]:
    """gid -> the ``d`` of every path inside the element with that id."""
    root = ET.parse(path).getroot()
    out = {}
    for g in root.iter():
        if g.get("id"):
            out[g.get("id")] = [p.get("d") for p in g.iter(f"{SVG}path") if p.get("d")]
    return out


def vertices(d: str) -> int:
    return len(re.findall(r"[ML]", d))


def test_without_matplotlib_a_usage_error_says_how_to_install(monkeypatch, tmp_path):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError) as err:
        plots.write_plots(tmp_path, class_ap={"a": 0.5})
    assert "pip install 'iou-eval[plots]'" in err.value.format()
    assert not list(tmp_path.iterdir())


def test_every_plot_is_written_as_valid_png_and_svg(tmp_path):
    rng = np.random.default_rng(0)
    names = ["cat", "dog", "zebra"]
    s = np.sort(rng.uniform(0, 1, 30))[::-1]
    tp = rng.uniform(0, 1, 30) < 0.6
    sweep = f1_sweep(s, tp, ~tp, 25)
    files = plots.write_plots(
        tmp_path,
        precision=random_precision(rng, 3, undefined=(2,)),
        iou_thresholds=THR,
        recall_points=REC,
        class_names=names,
        sweeps={"cat": sweep, "dog": sweep},
        overall_sweep=sweep,
        confusion=np.arange(16).reshape(4, 4),
        class_ap={"cat": 0.5, "dog": 0.25, "zebra": None},
        leaderboard=[{"file": "a/m1.json", "AP": 0.5}, {"file": "b/m2.json", "AP": 0.4}],
    )
    stems = {
        "pr_overall", "pr_per_class", "score_threshold_all", "score_threshold_per_class",
        "confusion_matrix_counts", "confusion_matrix_normalized", "ap_per_class", "leaderboard",
    }  # fmt: skip
    assert {f.name for f in files} == {f"{s}.{e}" for s in stems for e in ("png", "svg")}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f.name for f in files
    )  # no temp left
    for f in files:
        if f.suffix == ".png":
            assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            with Image.open(f) as im:
                im.verify()
        else:
            assert ET.parse(f).getroot().tag == f"{SVG}svg"
    svg = (tmp_path / "ap_per_class.svg").read_text()
    assert "cat" in svg and "dog" in svg and "zebra" in svg  # zebra named as undefined
    assert "m1.json" in (tmp_path / "leaderboard.svg").read_text()


def test_pr_curves_have_one_vertex_per_defined_recall_point(tmp_path):
    """Class 'b' has no ground truth (-1 everywhere): no curve.  Class 'a' is undefined at 10 points."""
    rng = np.random.default_rng(1)
    p = random_precision(rng, 3, undefined=(1,))
    t50 = 0
    p[t50, 40:50, 0] = -1
    plots.write_plots(tmp_path, precision=p, iou_thresholds=THR, recall_points=REC,
                      class_names=["a<&>", "b", "c"], formats=("svg",))  # fmt: skip
    paths = svg_paths(tmp_path / "pr_per_class.svg")
    assert [vertices(d) for d in paths["pr-a<&>-iou50"]] == [len(REC) - 10]
    # The gap is a gap: two runs, 40 and 51 points.
    assert paths["pr-a<&>-iou50"][0].count("M") == 2
    assert [vertices(d) for d in paths["pr-c-iou50"]] == [len(REC)]
    assert [vertices(d) for d in paths["pr-c-coco"]] == [len(REC)]
    assert not any(k.startswith("pr-b-") for k in paths)
    text = (tmp_path / "pr_per_class.svg").read_text()
    assert "a&lt;&amp;&gt;" in text and ">c<" in text.replace("\n", "")
    assert "1 class(es) without ground truth not drawn" in text


def test_overall_curves_average_to_the_summary_ap(tmp_path):
    """The mean of the drawn curve over recall points is summarize_coco's AP50 / AP."""
    rng = np.random.default_rng(2)
    p = random_precision(rng, 6, undefined=(3,))
    arrays = CocoArrays(precision=p, recall=-np.ones((10, 6, 4, 3)), scores=p)
    summary = summarize_coco(arrays, THR, ("all", "small", "medium", "large"), (1, 10, 100))
    curves = plots.overall_curves(plots.pr_slice(p), 0)
    assert np.mean(curves["IoU 0.50"]) == pytest.approx(summary["AP50"], abs=1e-12)
    assert np.mean(curves["IoU 0.50:0.95 (mean)"]) == pytest.approx(summary["AP"], abs=1e-12)
    with plots._style():
        fig = plots.figure_pr_overall(plots.pr_slice(p), THR, REC)
    ys = [line.get_ydata() for line in fig.axes[0].lines]
    np.testing.assert_array_equal(ys[0], curves["IoU 0.50"])
    np.testing.assert_array_equal(ys[1], curves["IoU 0.50:0.95 (mean)"])


def test_png_has_the_figure_size_and_the_curve_in_the_plot_area(tmp_path):
    rng = np.random.default_rng(3)
    p = plots.pr_slice(random_precision(rng, 2))
    with plots._style():
        fig = plots.figure_pr_overall(p, THR, REC)
        (png,) = plots.save_figure(fig, tmp_path, "pr", ("png",))
    box = fig.axes[0].get_window_extent()
    with Image.open(png) as im:
        assert im.size == (640, 480)
        px = np.asarray(im.convert("RGB")).astype(int)
    h = px.shape[0]
    area = px[int(h - box.y1) : int(h - box.y0), int(box.x0) : int(box.x1)]
    blue = np.abs(area - np.array([0x00, 0x72, 0xB2])).sum(axis=2) < 40
    orange = np.abs(area - np.array([0xE6, 0x9F, 0x00])).sum(axis=2) < 40
    assert blue.sum() > 200 and orange.sum() > 200
    outside = px[:, : int(box.x0) - 2]  # left of the axes (tick labels): no curve colour
    assert (np.abs(outside - np.array([0x00, 0x72, 0xB2])).sum(axis=2) < 40).sum() == 0


def test_score_curves_star_the_best_f1_of_the_table():
    rng = np.random.default_rng(4)
    s = np.round(np.sort(rng.uniform(0, 1, 80))[::-1], 1)  # many ties
    tp = rng.uniform(0, 1, 80) < 0.5
    sweep = f1_sweep(s, tp, ~tp, 50)
    with plots._style():
        fig = plots.figure_sweep_overall(sweep)
    star = next(line for line in fig.axes[0].lines if line.get_gid() == "sweep-all-best")
    assert (star.get_xdata()[0], star.get_ydata()[0]) == best_f1(s, tp, ~tp, 50)[::-1]


def test_f1_sweep_matches_a_cut_by_cut_count():
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        s = np.sort(rng.integers(0, 8, n) / 8)[::-1]
        tp = rng.uniform(0, 1, n) < 0.5
        fp = ~tp & (rng.uniform(0, 1, n) < 0.8)
        n_gt = int(tp.sum() + rng.integers(0, 5)) or 1
        sw = f1_sweep(s, tp, fp, n_gt)
        cuts = np.unique(s)[::-1]
        np.testing.assert_array_equal(sw.scores, cuts)
        ctp = np.array([tp[s >= c].sum() for c in cuts])
        cfp = np.array([fp[s >= c].sum() for c in cuts])
        np.testing.assert_array_equal(sw.tp, ctp)
        np.testing.assert_array_equal(sw.fp, cfp)
        np.testing.assert_allclose(sw.recall, ctp / n_gt)
        np.testing.assert_allclose(sw.f1, 2 * ctp / (ctp + cfp + n_gt))
        kept = ctp + cfp
        np.testing.assert_allclose(sw.precision[kept > 0], (ctp / np.maximum(kept, 1))[kept > 0])


def test_confusion_matrix_folds_the_rest_and_keeps_totals():
    rng = np.random.default_rng(6)
    k = 40
    m = rng.integers(0, 5, (k + 1, k + 1))
    m[np.arange(k), np.arange(k)] = np.arange(k) * 10  # the busiest classes are the last ones
    folded, labels = plots.fold_matrix(m, [f"c{i}" for i in range(k)], limit=30)
    assert folded.shape == (32, 32) and folded.sum() == m.sum()
    assert labels[-2:] == ["(10 other classes)", "background"]
    assert labels[:30] == [f"c{i}" for i in range(10, 40)]
    assert folded[-1, -1] == m[-1, -1] and folded[0, 0] == m[10, 10]
    np.testing.assert_allclose(plots.normalize_rows(folded).sum(axis=1), 1.0)
    with pytest.raises(
        UsageError, match=r"\[K\+1, K\+1\] = \[4, 4\] for 3 class names, got \[5, 5\]"
    ):
        plots.fold_matrix(np.zeros((5, 5)), ["a", "b", "c"])


def test_confusion_cells_show_the_counts():
    m = np.array([[5, 1, 0], [0, 7, 2], [3, 0, 0]])
    with plots._style():
        fig = plots.figure_confusion(m, ["cat", "dog"], normalized=False)
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    assert texts == sorted(str(v) for v in m.ravel() if v)


def test_bars_keep_the_best_and_worst_halves_when_there_are_many():
    v = np.r_[np.arange(50) / 50, np.nan]
    idx, skipped = plots.bar_selection(v, limit=40)
    assert skipped == 10 and len(idx) == 40
    np.testing.assert_array_equal(idx[:20], np.arange(49, 29, -1))
    np.testing.assert_array_equal(idx[20:], np.arange(19, -1, -1))
    idx, skipped = plots.bar_selection(v[:5], limit=40)
    assert skipped == 0 and list(idx) == [4, 3, 2, 1, 0]


def test_eighty_classes_stay_readable(tmp_path):
    """80 classes: panels capped with a note, bars halved with a gap, the matrix folded."""
    rng = np.random.default_rng(7)
    names = [f"class_{i}" for i in range(80)]
    files = plots.write_plots(
        tmp_path,
        precision=random_precision(rng, 80),
        iou_thresholds=THR,
        recall_points=REC,
        class_names=names,
        class_gt=np.arange(80),
        confusion=rng.integers(0, 3, (81, 81)),
        class_ap={n: float(i) / 80 for i, n in enumerate(names)},
        formats=("svg",),
    )
    per_class = (tmp_path / "pr_per_class.svg").read_text()
    assert "24 of 80 classes shown (most ground truths)" in per_class
    assert "class_79" in per_class and "class_55" not in per_class
    assert "40 classes not shown" in (tmp_path / "ap_per_class.svg").read_text()
    assert "(50 other classes)" in (tmp_path / "confusion_matrix_counts.svg").read_text()
    assert len(files) == 5


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "ap_per_class.png"
    target.write_bytes(b"old")
    from matplotlib.figure import Figure

    def boom(self, *a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", boom)
    from iou_eval.errors import InputError

    with pytest.raises(InputError, match="No space left"):
        plots.write_plots(tmp_path, class_ap={"a": 0.5}, formats=("png",))
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["ap_per_class.png"]


def test_dollar_signs_in_names_are_not_math():
    assert plots.short("$x$") == r"\$x\$"
    assert plots.short("x" * 40, 10) == "xxxxxxxxx…"
    assert plots.short("model_0123456789.json", 11, middle=True) == "model….json"


def _colour_word(hex_colour: str) -> str:
    """The plain word a reader would use for a colour (hue of its RGB), for checking titles."""
    import colorsys

    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue = colorsys.rgb_to_hsv(r, g, b)[0] * 360
    for word, upper in (("red", 15), ("orange", 45), ("yellow", 70), ("green", 170),
                        ("blue", 260), ("purple", 330)):  # fmt: skip
        if hue < upper:
            return word
    return "red"


def test_per_class_sweep_title_names_each_line_by_its_colour():
    """The title says "blue precision, green recall, orange F1": the colours the lines have."""
    from matplotlib.colors import to_hex

    rng = np.random.default_rng(3)
    s = rng.random(40)
    tp = rng.random(40) < 0.5
    sweep = f1_sweep(s, tp, ~tp, 25)
    with plots._style():
        fig = plots.figure_sweep_per_class({"cat": sweep, "dog": sweep})
    title = fig._suptitle.get_text()
    lines = {ln.get_label(): to_hex(ln.get_color()) for ln in fig.axes[0].lines}
    for label in ("precision", "recall", "F1"):
        assert f"{_colour_word(lines[label])} {label}" in title, (label, lines[label], title)
