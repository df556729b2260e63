# iou-eval — every target sets up what it needs in .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP_FLAGS ?= --quiet --disable-pip-version-check

.DEFAULT_GOAL := help

.PHONY: help demo test soak check format bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-8s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e .
	@touch $@

$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[dev]'
	@touch $@ $(VENV)/.runtime

demo: $(VENV)/.runtime ## score sample_data/ (COCO ground truth vs predictions) and print the report
	$(BIN)/iou-eval sample_data/coco/gt.json sample_data/coco/preds.json

test: $(VENV)/.dev ## run the whole test suite (parity, acceptance, CLI)
	$(BIN)/python -m pytest -q -m "not slow"

soak: $(VENV)/.dev ## long randomized parity runs against pycocotools
	$(BIN)/python -m pytest -q -m slow

check: $(VENV)/.dev ## ruff lint + format check, mypy on the package
	$(BIN)/ruff check iou_eval tests
	$(BIN)/ruff format --check iou_eval tests
	$(BIN)/mypy iou_eval

format: $(VENV)/.dev ## apply ruff's formatting and safe fixes
	$(BIN)/ruff check --fix iou_eval tests
	$(BIN)/ruff format iou_eval tests

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
