"""CVAT for images 1.1 XML: one ``annotations.xml``-style file.

Every image is an ``<image>`` (``name``: its file name, ``width``,
``height``), empty ones included.  A box is a ``<box>`` (``xtl ytl xbr
ybr``), an outline a ``<polygon>`` (the largest part of a multi-part one),
an oriented box the ``<polygon>`` of its corners.  ``<attribute>`` children
carry ``score`` (predictions, as Datumaro writes it), ``is_crowd`` and
``difficult``.  The labels are listed in ``<meta>``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from iou_eval.io.writers.common import dropped, multipart_note, num, outline, xml_text
from iou_eval.io.writers.labels import Labels
from iou_eval.io.writers.registry import Context, Written, get_target


def _attributes(labels: Labels, r: int) -> list[str]:
    rows = labels.rows
    out = []
    if labels.is_prediction:
        out.append(f'    <attribute name="score">{num(rows.scores[r])}</attribute>')
    else:
        if rows.is_crowd[r]:
            out.append('    <attribute name="is_crowd">true</attribute>')
        if rows.ignore[r] and not rows.is_crowd[r]:
            out.append('    <attribute name="difficult">true</attribute>')
    return out


def _shape(labels: Labels, r: int, name: str) -> list[str]:
    flat = outline(labels, r)
    if flat is None and labels.corners is not None:
        flat = labels.corners[r].reshape(-1)
    label = xml_text(name)
    if flat is None:
        x1, y1, x2, y2 = (num(v) for v in labels.rows.xyxy[r].tolist())
        head = (f'  <box label="{label}" occluded="0" xtl="{x1}" ytl="{y1}" xbr="{x2}" '
                f'ybr="{y2}" z_order="0"')  # fmt: skip
        tag = "box"
    else:
        points = ";".join(f"{num(x)},{num(y)}" for x, y in flat.reshape(-1, 2).tolist())
        head = f'  <polygon label="{label}" occluded="0" points="{points}" z_order="0"'
        tag = "polygon"
    attrs = _attributes(labels, r)
    if not attrs:
        return [head + "/>"]
    return [head + ">", *attrs, f"  </{tag}>"]


def _image(labels: Labels, i: int, shapes: list[str]) -> list[str]:
    w, h = labels.images.width[i], labels.images.height[i]
    size = f' width="{num(w)}" height="{num(h)}"' if np.isfinite(w) and np.isfinite(h) else ""
    head = f'  <image id="{i}" name="{xml_text(labels.image_name(i))}"{size}'
    if not shapes:
        return [head + "/>"]
    return [head + ">", *("  " + s for s in shapes), "  </image>"]


def write_cvat(labels: Labels, context: Context) -> Written:
    """``labels`` as one CVAT for images 1.1 XML file."""
    # An oriented box is written as the polygon of its corners (note below).
    keeps = replace(get_target("cvat-xml").keeps, oriented=True)
    keep, notes = dropped(labels, keeps, "CVAT XML")
    notes += multipart_note(labels, keep, "CVAT XML")
    if labels.corners is not None:
        notes.append(
            f"{labels.source}: {len(labels.rows)} oriented box(es) written as 4-point polygons "
            "(read back as outlines, scored by their enclosing boxes)"
        )
    names = [str(n) for n in labels.categories.names]
    per: dict[int, list[str]] = {}
    cat = labels.rows.category_idx.tolist()
    for r, i in enumerate(labels.rows.image_idx.tolist()):
        if keep[r]:
            per.setdefault(i, []).extend(_shape(labels, r, names[cat[r]]))
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<annotations>", "  <version>1.1</version>",
             "  <meta>", "    <task>", "      <labels>"]  # fmt: skip
    lines += [f"        <label><name>{xml_text(n)}</name></label>" for n in names]
    lines += ["      </labels>", "    </task>", "  </meta>"]
    for i in range(len(labels.images)):
        if labels.is_prediction and i not in per:
            continue
        lines += _image(labels, i, per.get(i, []))
    lines.append("</annotations>")
    return Written({"": ("\n".join(lines) + "\n").encode()}, notes, int(keep.sum()))
