# iou-eval — every target sets up what it needs in .venv.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP_FLAGS ?= --quiet --disable-pip-version-check

.DEFAULT_GOAL := help

.PHONY: help compile demo report test soak check format sanitize wheel wheel-pure wheel-check bench bench-data bench-iou bench-large bench-dask bench-dota bench-txt bench-stream bench-openimages bench-json clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-10s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The install compiles the optional C parts (the mask kernel, the COCO JSON
# reader, the box core, the polygon kernel): a change to one installs again.
KERNEL_SOURCES := $(wildcard iou_eval/*/_*.c iou_eval/*/_*.h) iou_eval/_common.h
$(VENV)/.runtime: pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e .
	@touch $@

$(VENV)/.dev: pyproject.toml $(KERNEL_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[dev]'
	@touch $@ $(VENV)/.runtime

# Byte-compiled once here: where PYTHONDONTWRITEBYTECODE is set, an editable
# install would otherwise compile the package's sources on every run.
compile: $(VENV)/.runtime
	@$(BIN)/python -m compileall -q iou_eval

demo: $(VENV)/.runtime compile ## score sample_data/ (COCO ground truth vs predictions) and print the report
	$(BIN)/iou-eval sample_data/coco/gt.json sample_data/coco/preds.json

report: $(VENV)/.dev ## plots, a self-contained report/index.html and drawings for sample_data/
	@mkdir -p report
	$(BIN)/iou-eval sample_data/coco/gt.json sample_data/coco/preds.json --plots report/plots \
		-f html -o report/index.html --images sample_data/images --quiet
	$(BIN)/iou-eval draw sample_data/coco/gt.json sample_data/coco/preds.json \
		--images sample_data/images -o report/drawings

# A test that hangs fails after TEST_TIMEOUT seconds (pytest-timeout) instead of stalling the run.
TEST_TIMEOUT ?= 300

test: $(VENV)/.dev ## run the whole test suite (parity, acceptance, CLI)
	$(BIN)/python -m pytest -q -m "not slow" --timeout=$(TEST_TIMEOUT)

soak: $(VENV)/.dev ## long randomized parity runs against pycocotools
	$(BIN)/python -m pytest -q -m slow

check: $(VENV)/.dev ## ruff lint + format check, mypy on the package, the import contract, dead code
	$(BIN)/ruff check iou_eval tests
	$(BIN)/ruff format --check iou_eval tests
	$(BIN)/mypy iou_eval
	$(BIN)/lint-imports
	$(BIN)/vulture

format: $(VENV)/.dev ## apply ruff's formatting and safe fixes
	$(BIN)/ruff check --fix iou_eval tests
	$(BIN)/ruff format iou_eval tests

# The C parts built again with AddressSanitizer and UndefinedBehaviorSanitizer
# into a copy of the package (build/sanitize), and the tests that call them
# run there: a read or write out of bounds, a signed overflow or a misaligned
# load stops the run with its stack.  CPython leaks by design: leak checks off.
# The parity subset runs on the compiled path only (the numpy runs call no C).
SANITIZE_DIR    ?= build/sanitize
SANITIZE_CC     ?= gcc
SANITIZE_CFLAGS ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g
SANITIZE_TESTS  ?= tests/hostile/test_hostile_arrays.py tests/unit/test_box_core.py \
	tests/unit/test_rle_kernel.py tests/unit/test_coco_reader.py tests/unit/test_masks.py \
	tests/unit/test_mask_bounds.py tests/unit/test_boundary.py tests/unit/test_polygon_masks.py \
	tests/unit/test_csv_scan.py tests/unit/test_txt_scan.py tests/unit/test_kpt_core.py \
	tests/unit/test_coco_reader_keypoints.py tests/unit/test_coco_reader_lvis.py \
	tests/unit/test_openimages_core.py tests/unit/test_coco_reader_polygons.py
SANITIZE_ENV     = LD_PRELOAD="$$($(SANITIZE_CC) -print-file-name=libasan.so)" \
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# (Not lvis-api's parity tests: it imports matplotlib, whose extensions abort
# under an LD_PRELOADed ASan runtime; LVIS runs on the same core as COCO.)
SANITIZE_PARITY ?= tests/parity/test_coco_parity.py tests/parity/test_segm_parity.py \
	tests/parity/test_dota_parity.py tests/parity/test_keypoints_parity.py \
	tests/parity/test_resample.py tests/parity/test_openimages_parity.py

sanitize: $(VENV)/.dev ## build the C parts with ASan + UBSan (build/sanitize) and run the tests that call them
	rm -rf $(SANITIZE_DIR)
	mkdir -p $(SANITIZE_DIR)
	cp -r iou_eval setup.py pyproject.toml README.md $(SANITIZE_DIR)/
	find $(SANITIZE_DIR)/iou_eval \( -name '*.so' -o -name '*.pyd' -o -name __pycache__ \) -prune -exec rm -rf {} +
	ln -s $(CURDIR)/tests $(SANITIZE_DIR)/tests
	cd $(SANITIZE_DIR) && CC=$(SANITIZE_CC) CFLAGS="$(SANITIZE_CFLAGS)" \
		$(CURDIR)/$(BIN)/python setup.py --quiet build_ext --inplace
	@n=$$(find $(SANITIZE_DIR)/iou_eval -name '_*.so' | wc -l); \
		want=$$(grep -c '^    "iou_eval\.[a-z_.]*": "iou_eval/.*\.c",$$' setup.py); [ "$$n" -eq "$$want" ] \
		|| { echo "sanitize: $$n of the $$want compiled parts built"; exit 1; }
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) $(CURDIR)/$(BIN)/python -c "import sys, iou_eval; \
		sys.exit(0 if iou_eval.__file__.startswith('$(abspath $(SANITIZE_DIR))/') else 'sanitize: not the sanitized copy')"
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) $(CURDIR)/$(BIN)/python -m pytest -q -p no:cacheprovider -x $(SANITIZE_TESTS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) $(CURDIR)/$(BIN)/python -m pytest -q -p no:cacheprovider -x -k compiled $(SANITIZE_PARITY)

# The wheel a user installs: built here with the compiled parts this machine
# can build (cibuildwheel builds them for every platform: [tool.cibuildwheel]
# in pyproject.toml), and the pure-Python fallback (IOU_EVAL_PURE=1).
wheel: $(VENV)/.dev ## build the wheel into dist/ (the C parts compiled; a pure-Python one: make wheel-pure)
	@rm -rf dist/iou_eval-*.whl build/lib* build/temp*
	$(BIN)/python -m pip wheel $(PIP_FLAGS) --no-deps --no-build-isolation -w dist .
	@ls dist/iou_eval-*.whl

wheel-pure: $(VENV)/.dev ## build the pure-Python wheel (py3-none-any) into dist/pure/
	@rm -rf dist/pure build/lib*
	IOU_EVAL_PURE=1 $(BIN)/python -m pip wheel $(PIP_FLAGS) --no-deps --no-build-isolation -w dist/pure .
	@ls dist/pure/iou_eval-*.whl

# Both wheels installed into a fresh virtual environment (not editable) and
# tested there: a module or a compiled part missing from a wheel fails.
WHEEL_VENV ?= .venv-wheel
wheel-check: wheel wheel-pure ## install the wheels into a fresh venv and test the installed package
	rm -rf $(WHEEL_VENV)
	$(PYTHON) -m venv $(WHEEL_VENV)
	@echo '*' > $(WHEEL_VENV)/.gitignore
	$(WHEEL_VENV)/bin/python -m pip install $(PIP_FLAGS) dist/iou_eval-*.whl "pytest>=7.4" "hypothesis>=6.80"
	$(WHEEL_VENV)/bin/python tests/check_installed.py
	$(WHEEL_VENV)/bin/python -m pip install $(PIP_FLAGS) --force-reinstall --no-deps dist/pure/iou_eval-*.whl
	$(WHEEL_VENV)/bin/python tests/check_installed.py --pure --quick

# Benchmark peers live in their own venv: they are never dependencies of iou-eval.
BENCH_VENV  ?= .venv-bench
BENCH_BIN   := $(BENCH_VENV)/bin
BENCH_PEERS ?= pycocotools faster-coco-eval hotcoco ultrafast-pycocotools vernier lvis==0.5.3
BENCH_SIZES ?=
BENCH_SEGM_SIZES ?=
BENCH_BOUNDARY_SIZES ?=
BENCH_KPT_SIZES ?=
BENCH_RUNS  ?=
BENCH_SEED  ?= 0

# Each peer is installed on its own so that one that will not install is left
# out (and reported as unavailable by the runner) instead of stopping the bench.
$(BENCH_VENV)/.peers:
	$(PYTHON) -m venv $(BENCH_VENV)
	@echo '*' > $(BENCH_VENV)/.gitignore
	$(BENCH_BIN)/python -m pip install $(PIP_FLAGS) numpy orjson msgspec
	@for peer in $(BENCH_PEERS); do \
		$(BENCH_BIN)/python -m pip install $(PIP_FLAGS) $$peer \
			|| echo "bench: could not install $$peer; it will be reported as unavailable" >&2; \
	done
	@touch $@

bench-data: $(BENCH_VENV)/.peers ## generate the synthetic COCO-sized benchmark data in bench_data/
	$(BENCH_BIN)/python tests/bench/make_data.py --sizes "$(BENCH_SIZES)" --segm-sizes "$(BENCH_SEGM_SIZES)" --kpt-sizes "$(BENCH_KPT_SIZES)" --seed $(BENCH_SEED)

bench: $(VENV)/.runtime compile $(BENCH_VENV)/.peers ## time iou-eval against pycocotools & co., boxes, masks, boundaries, keypoints (quick: BENCH_SIZES=500 BENCH_KPT_SIZES=500 BENCH_RUNS=1)
	$(BENCH_BIN)/python tests/bench/run_bench.py --sizes "$(BENCH_SIZES)" --segm-sizes "$(BENCH_SEGM_SIZES)" \
		--boundary-sizes "$(BENCH_BOUNDARY_SIZES)" --kpt-sizes "$(BENCH_KPT_SIZES)" --runs "$(BENCH_RUNS)" \
		--seed $(BENCH_SEED)
	$(MAKE) --no-print-directory bench-iou
	$(MAKE) --no-print-directory bench-large
	$(MAKE) --no-print-directory bench-dask
	$(MAKE) --no-print-directory bench-dota
	$(MAKE) --no-print-directory bench-openimages
	$(MAKE) --no-print-directory bench-memory
	$(MAKE) --no-print-directory bench-stream
	$(MAKE) --no-print-directory bench-lvis

BENCH_IOU_MAPS ?= 500

bench-iou: $(VENV)/.dev ## time iou.boxes (10k x 10k) and semseg on Cityscapes-size maps (quick: BENCH_IOU_MAPS=50)
	$(BIN)/python tests/bench/bench_iou.py --maps $(BENCH_IOU_MAPS)

BENCH_LARGE ?= 80000

bench-large: $(VENV)/.runtime compile $(BENCH_VENV)/.peers ## iou-eval beside ultrafast-pycocotools and hotcoco on an Objects365-val-sized set, one process each (quick: BENCH_LARGE=5000)
	$(BENCH_BIN)/python tests/bench/bench_large.py --images $(BENCH_LARGE) --seed $(BENCH_SEED)

bench-dask: $(VENV)/.dev compile ## one process vs --dask local:2 on an Objects365-val-sized set (quick: BENCH_LARGE=5000)
	$(BIN)/python tests/bench/bench_dask.py --images $(BENCH_LARGE) --seed $(BENCH_SEED)

# The package's COCO JSON reader beside the same column extraction on yyjson
# and simdjson On-Demand (docs/dependencies.md): the parsers' sources are
# downloaded into bench_data/json-parsers once (pip; offline: put them there by
# hand), built there, never part of the package.  Not in `make bench`.
BENCH_JSON_DATA   ?= bench_data
BENCH_JSON_ROUNDS ?= 5

bench-json: $(VENV)/.runtime compile ## time the COCO JSON reader against yyjson and simdjson harnesses (data: make bench-data; downloads their sources)
	$(BIN)/python tests/bench/bench_json_parsers.py --data $(BENCH_JSON_DATA) --rounds $(BENCH_JSON_ROUNDS)

# Open Images validation has 41,620 images in 600 classes; the default is a modest slice of it.
BENCH_OI_IMAGES ?= 5000

bench-openimages: $(VENV)/.dev compile ## --protocol openimages on a synthetic Open Images val (full size: BENCH_OI_IMAGES=41620)
	$(BIN)/python tests/bench/bench_openimages.py --images $(BENCH_OI_IMAGES) --seed $(BENCH_SEED)

BENCH_DOTA_IMAGES ?= 458

bench-dota: $(VENV)/.runtime compile ## --protocol dota and the COCO-style default on a DOTA-v1.0-val-sized set (quick: BENCH_DOTA_IMAGES=50)
	$(BIN)/python tests/bench/bench_dota.py --images $(BENCH_DOTA_IMAGES) --seed $(BENCH_SEED)

BENCH_TXT_IMAGES ?= 5000

bench-txt: $(VENV)/.runtime compile ## YOLO, Ultralytics and txt folders read by the column reader and the Python reader (quick: BENCH_TXT_IMAGES=500)
	$(BIN)/python tests/bench/bench_txt.py --images $(BENCH_TXT_IMAGES) --seed $(BENCH_SEED)

# The manual as a site (mkdocs.yml, docs/): --strict fails on a broken link or anchor.
$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) -e '.[docs]'
	@touch $@ $(VENV)/.runtime

.PHONY: docs
docs: $(VENV)/.docs ## build the manual (docs/) into site/ with mkdocs --strict
	$(BIN)/mkdocs build --strict --site-dir site

clean: ## remove the virtual environment, caches and the built site
	rm -rf $(VENV) $(BENCH_VENV) $(WHEEL_VENV) report site .pytest_cache .mypy_cache .ruff_cache build dist *.egg-info

.PHONY: hostile
hostile: $(VENV)/.dev ## run the hostile-input catalogue (tests/hostile; inputs, options, -o, escaping)
	$(BIN)/python -m pytest -q tests/hostile

FUZZ_SECONDS ?= 600

.PHONY: fuzz
fuzz: $(VENV)/.dev ## fuzz every loader and option for FUZZ_SECONDS (600) with fresh random inputs
	IOU_EVAL_FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -q -p no:cacheprovider tests/fuzz

BENCH_LVIS_SIZES ?= 2000,20000
BENCH_LVIS_RUNS ?= 3

.PHONY: bench-lvis
bench-lvis: $(VENV)/.runtime compile $(BENCH_VENV)/.peers ## --protocol lvis at LVIS v1 val's size beside lvis-api, faster-coco-eval, hotcoco (quick: BENCH_LVIS_SIZES=500 BENCH_LVIS_RUNS=1; BENCH_LVIS_TOOLS=iou-eval,hotcoco: those only)
	$(BENCH_BIN)/python tests/bench/bench_lvis.py --sizes "$(BENCH_LVIS_SIZES)" --runs $(BENCH_LVIS_RUNS) --seed $(BENCH_SEED)

BENCH_MEMORY_SIZES ?=

.PHONY: bench-memory
bench-memory: $(VENV)/.runtime compile ## peak memory and time at 1M/5M/10M predictions into docs/benchmarks.md (~1.4 GB of data)
	$(BIN)/python tests/bench/bench_memory.py --sizes "$(BENCH_MEMORY_SIZES)" --seed $(BENCH_SEED)

# torchmetrics runs on a CPU build of torch in the benchmark's venv only (never
# a dependency of iou-eval); where it does not install it is reported as not run.
BENCH_STREAM_PEERS ?= torch==2.13.0 "torchvision<0.29" torchmetrics

$(BENCH_VENV)/.stream-peers: $(BENCH_VENV)/.peers
	@for peer in $(BENCH_STREAM_PEERS); do \
		$(BENCH_BIN)/python -m pip install $(PIP_FLAGS) $$peer \
			|| echo "bench: could not install $$peer; it will be reported as not run" >&2; \
	done
	@touch $@

BENCH_STREAM_IMAGES ?= 5000

.PHONY: bench-stream
bench-stream: $(VENV)/.runtime compile $(BENCH_VENV)/.stream-peers ## the streaming Evaluator on a val2017-sized stream (update/compute/memory) beside torchmetrics and hotcoco
	$(BIN)/python tests/bench/bench_stream.py --images $(BENCH_STREAM_IMAGES) --seed $(BENCH_SEED)
