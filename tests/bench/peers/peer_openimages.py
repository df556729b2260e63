"""Run hotcoco's Open Images mode on the challenge's files; write its numbers as JSON.

Usage: python peer_openimages.py BOXES.csv PREDICTIONS.csv HIERARCHY.json OUT.json

hotcoco reads the boxes CSV (``COCO.from_oid``) and the predictions CSV
(``load_res_oid``), the hierarchy with its categories' ids, and evaluates
with ``oid_style=True``.  hotcoco refuses a prediction of a class or an image the
boxes CSV lacks: ``PREDICTIONS.csv`` is the predictions without them
(:func:`hotcoco_predictions`, written before the timed run).  Writes ``{"stats": {...}}``: its results as it
names them.  Only hotcoco is imported, so a run times it alone.
"""

import json
import sys


def hotcoco_predictions(boxes: str, predictions: str, out: str) -> None:
    """``predictions`` without the rows of classes and images ``boxes`` has no box of (hotcoco
    refuses them)."""
    import pandas as pd

    gt = pd.read_csv(boxes, usecols=["ImageID", "LabelName"], dtype=str, keep_default_na=False)
    frame = pd.read_csv(predictions, dtype=str, keep_default_na=False)
    keep = frame["LabelName"].isin(set(gt["LabelName"])) & frame["ImageID"].isin(set(gt["ImageID"]))
    frame[keep].to_csv(out, index=False)


def main(boxes: str, predictions: str, hierarchy: str, out_path: str) -> int:
    import hotcoco as hc

    gt = hc.COCO.from_oid(boxes)
    dt = gt.load_res_oid(predictions)
    label_to_id = {c["name"]: c["id"] for c in gt.loadCats(gt.getCatIds())}
    tree = hc.Hierarchy.from_file(hierarchy, label_to_id=label_to_id)
    ev = hc.COCOeval(gt, dt, "bbox", oid_style=True, hierarchy=tree)
    ev.run()
    with open(out_path, "w") as out:
        json.dump({"stats": {k: float(v) for k, v in ev.get_results().items()}}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
