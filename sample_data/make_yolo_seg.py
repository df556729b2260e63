"""Write the sample scene as a YOLO-seg dataset: ``python sample_data/make_yolo_seg.py``.

``yolo-seg/`` holds the street scene of ``make_sample.py`` with every object
outlined by a polygon, as an Ultralytics segmentation dataset:

- ``data.yaml`` (split ``val``, the five names), ``images/val`` (blank
  1-bit PNGs of the scene's sizes: the sizes are all that is read);
- ``labels/val/street_NN.txt``: one polygon per line, ``class x1 y1 x2 y2
  ...`` in fractions of the image (``%.6f``);
- ``predictions/labels/street_NN.txt``: ``predict(save_txt=True,
  save_conf=True)`` of a segmentation model: ``class x1 y1 ... conf``
  (``%g``), by falling confidence.

Each outline is an octagon inscribed in the object's box (its corners cut
by a quarter of the shorter side) for people, dogs and bicycles, and the
box's own four corners for cars and traffic lights; a prediction's outline
is made the same way from its box.  ``tests/parity/test_yolo_seg.py``
scores the dataset against pycocotools (``segm`` and ``bbox``) on the COCO
version built from the same polygons.  The output is deterministic.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from make_sample import CATEGORIES, GROUND_TRUTH, IMAGES, PREDICTIONS  # noqa: E402

ROUND = {"car", "traffic light"}  # outlined by their box's corners


def outline(cls: str, x1: float, y1: float, x2: float, y2: float) -> list[tuple[float, float]]:
    """The object's polygon in pixels (clockwise from the top-left)."""
    if cls in ROUND:
        return [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
    c = min(x2 - x1, y2 - y1) / 4
    return [(x1 + c, y1), (x2 - c, y1), (x2, y1 + c), (x2, y2 - c),
            (x2 - c, y2), (x1 + c, y2), (x1, y2 - c), (x1, y1 + c)]  # fmt: skip


def _png(path: str, w: int, h: int) -> None:
    from PIL import Image

    Image.new("1", (w, h), 0).save(path, optimize=True)


def write_yolo_seg(out: str) -> None:
    for sub in ("images/val", "labels/val", "predictions/labels"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    with open(os.path.join(out, "data.yaml"), "w") as fh:
        fh.write("# The sample street scene as an Ultralytics segmentation dataset (make_yolo_seg.py).\n")
        fh.write("val: images/val\nnames:\n")
        fh.writelines(f"  {i}: {n}\n" for i, n in enumerate(CATEGORIES))
    for stem, (w, h) in IMAGES.items():
        _png(os.path.join(out, "images/val", f"{stem}.png"), w, h)
        with open(os.path.join(out, "labels/val", f"{stem}.txt"), "w") as fh:
            for s, cls, x1, y1, x2, y2, _crowd, _difficult in GROUND_TRUTH:
                if s == stem:
                    pts = " ".join(f"{x / w:.6f} {y / h:.6f}" for x, y in outline(cls, x1, y1, x2, y2))
                    fh.write(f"{CATEGORIES.index(cls)} {pts}\n")
        rows = sorted((p for p in PREDICTIONS if p[0] == stem), key=lambda p: -p[6])
        with open(os.path.join(out, "predictions/labels", f"{stem}.txt"), "w") as fh:
            for _, cls, x1, y1, x2, y2, score in rows:
                pts = " ".join(f"{x / w:g} {y / h:g}" for x, y in outline(cls, x1, y1, x2, y2))
                fh.write(f"{CATEGORIES.index(cls)} {pts} {score:g}\n")


def main() -> None:
    write_yolo_seg(os.path.join(HERE, "yolo-seg"))


if __name__ == "__main__":
    main()
