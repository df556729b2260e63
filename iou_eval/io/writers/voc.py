"""Pascal VOC XML: one ``<stem>.xml`` per image.

Each file gives ``<filename>``, ``<size>`` (width, height, depth 3) and an
``<object>`` per row: ``<name>``, ``<difficult>``, ``<iscrowd>`` where set
(the non-standard element iou-eval and some exporters read), ``<bndbox>``
with ``xmin ymin xmax ymax`` as the boxes are held (no pixel shift: the VOC
protocols' plus-one convention is applied when scoring).  Predictions carry
``<score>``: the devkit's XML has no score, iou-eval and several exporters
read this element.  Every image gets a file, objects or not.
"""

from __future__ import annotations

import numpy as np

from iou_eval.io.writers.common import dropped, num, unique_stems, xml_text
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _object(labels: Labels, r: int, name: str) -> list[str]:
    rows = labels.rows
    x1, y1, x2, y2 = (num(v) for v in rows.xyxy[r].tolist())
    out = ["  <object>", f"    <name>{xml_text(name)}</name>"]
    if labels.is_prediction:
        out.append(f"    <score>{num(rows.scores[r])}</score>")
    else:
        out.append(f"    <difficult>{int(rows.ignore[r] and not rows.is_crowd[r])}</difficult>")
        if rows.is_crowd[r]:
            out.append("    <iscrowd>1</iscrowd>")
    out += [
        "    <bndbox>",
        f"      <xmin>{x1}</xmin>",
        f"      <ymin>{y1}</ymin>",
        f"      <xmax>{x2}</xmax>",
        f"      <ymax>{y2}</ymax>",
        "    </bndbox>",
        "  </object>",
    ]
    return out


def _size(labels: Labels, i: int) -> list[str]:
    w, h = labels.images.width[i], labels.images.height[i]
    if not (np.isfinite(w) and np.isfinite(h)):
        return []
    return ["  <size>", f"    <width>{num(w)}</width>", f"    <height>{num(h)}</height>",
            "    <depth>3</depth>", "  </size>"]  # fmt: skip


def write_voc(labels: Labels, context: Context) -> Written:
    """``labels`` as a folder of VOC XML files, one per image."""
    keep, notes = dropped(labels, get_target("voc-xml").keeps, "VOC XML")
    stems = unique_stems(labels)
    names = [str(n) for n in labels.categories.names]
    objects: dict[int, list[str]] = {}
    cat = labels.rows.category_idx.tolist()
    for r, i in enumerate(labels.rows.image_idx.tolist()):
        if keep[r]:
            objects.setdefault(i, []).extend(_object(labels, r, names[cat[r]]))
    files: dict[str, bytes | tuple[str, str]] = {}
    for i, s in enumerate(stems):
        if labels.is_prediction and i not in objects:
            continue
        lines = [
            "<annotation>",
            f"  <filename>{xml_text(labels.image_name(i).rsplit('/', 1)[-1])}</filename>",
            *_size(labels, i),
            "  <segmented>0</segmented>",
            *objects.get(i, []),
            "</annotation>",
        ]
        files[f"{s}.xml"] = ("\n".join(lines) + "\n").encode()
    return Written(files, notes, int(keep.sum()))
