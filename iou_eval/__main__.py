"""`python -m iou_eval` runs the command-line tool."""

from iou_eval.cli.main import run

if __name__ == "__main__":  # pragma: no cover
    run()
