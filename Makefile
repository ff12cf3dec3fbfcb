# Switchboard: two commands on a fresh Debian 12 machine.
#   make run   installs what is missing, builds the UI and the app, opens the window
#   make test  installs what is missing and runs every test suite
# Works as root and as a user with sudo.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ROOT := $(CURDIR)
VENV := $(ROOT)/.venv
APP := $(ROOT)/target/debug/switchboard-app
CARGO_PATH := $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
CARGO_BIN := $(dir $(CARGO_PATH))
# Cargo keeps its own job count: under `make -j2` it would otherwise share make's two
# job slots with the stream beside it.
CARGO := env -u MAKEFLAGS -u MFLAGS $(CARGO_PATH)

DEBIAN_PACKAGES := libwebkit2gtk-4.1-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev libgtk-3-dev \
	librsvg2-dev libayatana-appindicator3-dev libxdo-dev libssl-dev build-essential pkg-config file \
	xvfb xauth webkit2gtk-driver chromium python3-venv \
	x11-utils xdotool dbus-daemon python3-dbus python3-gi gir1.2-gtk-3.0 strace
# The window tests' Secret Service (a private gnome-keyring) and `secret-tool`, without
# their recommends: those bring the document portal, whose FUSE mount in the app's
# cache folder makes temporary folders unremovable (seen in `make bench-memory`).
DEBIAN_PACKAGES_BARE := gnome-keyring libsecret-tools

.PHONY: run test check setup debian-packages node-packages python-packages tauri-driver cargo-fetch ui ui-e2e app \
	build-rust test-rust test-ui test-python test-browser test-window test-mcp test-otel bindings screenshots \
	bench bench-ui bench-memory mutants package package-debug test-package clean \
	test-phases stream-rust-build stream-ui stream-engine stream-window

# CI compiles from nothing, where incremental compilation only adds work.
ifneq ($(CI),)
export CARGO_INCREMENTAL := 0
endif

# Clippy as the compiler of the workspace's own crates (what `cargo clippy` does, with
# `-D warnings`), so one debug build both lints every target and produces the test
# binaries and the two programs: no separate check build of the whole graph. The
# binaries the later suites run (target/debug/switchboard, target/debug/switchboard-app)
# are the ones `cargo test --workspace` builds, so nothing is compiled twice; a plain
# `cargo build -p …` resolves other features (tokio's test-util, tauri's test) and
# would compile most of the graph again.
CLIPPY_DRIVER := $(shell command -v clippy-driver || echo $(CARGO_BIN)clippy-driver)
LINTED := env RUSTC_WORKSPACE_WRAPPER=$(CLIPPY_DRIVER) CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# Each phase of `make test` is timed (wall and CPU) into this file; the table ends the run.
PHASE_TIMES := $(ROOT)/target/phase-times.tsv
TIMED := PHASE_TIMES=$(PHASE_TIMES) $(ROOT)/tests/timed

run: setup ui app
	$(APP)

# Every suite, in three phases; inside a phase two streams run side by side (make -j2,
# each stream's output printed together when it ends). The build stream runs niced, so
# the suites beside it see an idle machine's share of the CPU. The table of phase
# times ends the run, passed or failed.
test:
	@mkdir -p target && rm -f $(PHASE_TIMES)
	@status=0; $(MAKE) --no-print-directory test-phases || status=$$?; \
	  echo "phase times (wall, CPU = user + system):"; $(ROOT)/tests/timed --table; \
	  [ $$status = 0 ] && echo "all suites passed"; exit $$status

test-phases:
	$(TIMED) setup $(MAKE) --no-print-directory setup
	$(TIMED) build+ui $(MAKE) --no-print-directory -j2 -Otarget stream-rust-build stream-ui
	$(TIMED) suites $(MAKE) --no-print-directory -j2 -Otarget stream-engine stream-window

# The Rust build: formatting, the UI the app embeds, the linted build of every target.
stream-rust-build:
	$(TIMED) cargo-fmt $(CARGO) fmt --all --check
	$(TIMED) ui-build $(MAKE) --no-print-directory ui
	$(TIMED) clippy+build nice -n 10 $(MAKE) --no-print-directory build-rust
# Beside it, what needs no Rust: the UI's format, types and unit tests, the Python
# tests' lint, the mocked-IPC build and the browser suite on it.
stream-ui:
	$(TIMED) ui-checks+vitest $(MAKE) --no-print-directory test-ui
	$(TIMED) ruff $(MAKE) --no-print-directory test-python
	$(TIMED) ui-e2e-build $(MAKE) --no-print-directory ui-e2e
	$(TIMED) browser $(MAKE) --no-print-directory test-browser

# The engine's suites: the Rust tests, then the CLI against real MCP and A2A peers.
stream-engine:
	$(TIMED) cargo-test $(LINTED) $(CARGO) test --workspace
	$(TIMED) pytest-mcp+a2a+hostile $(MAKE) --no-print-directory test-mcp BUILT=1
# Beside them, the real window, the .deb built from the same programs, the trace
# export read back from Phoenix (the two streams take about as long).
stream-window:
	$(TIMED) window $(MAKE) --no-print-directory test-window
	$(TIMED) deb+package-test $(MAKE) --no-print-directory test-package BUILT=1
	$(TIMED) pytest-otel $(MAKE) --no-print-directory test-otel BUILT=1

setup: debian-packages
	$(MAKE) --no-print-directory -j6 -Otarget node-packages python-packages tauri-driver cargo-fetch

debian-packages:
	@missing=""; for package in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	bare=""; for package in $(DEBIAN_PACKAGES_BARE); do \
	  dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || bare="$$bare $$package"; \
	done; \
	if [ -n "$$missing$$bare" ]; then $(SUDO) apt-get update -qq; fi; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi; \
	if [ -n "$$bare" ]; then \
	  echo "installing Debian packages without their recommends:$$bare"; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$bare; \
	fi
	@command -v node >/dev/null && [ "$$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] || \
	  { echo "Node.js 20 or newer is needed (the UI builds with Vite 8)"; exit 1; }
	@[ -x "$(CARGO_PATH)" ] || { echo "cargo is needed: install Rust with rustup"; exit 1; }

node-packages: ui/node_modules/.package-lock.json tests/peers/node_modules/.package-lock.json

ui/node_modules/.package-lock.json: ui/package.json ui/package-lock.json
	cd ui && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
	@touch $@

# aimock: an independent OpenAI-compatible server the Rust peer tests start on loopback;
# the MCP Inspector CLI, the MCP conformance suite and the node 22 it needs; the agent
# CLIs (Claude Code, Codex, Gemini CLI, Qwen Code, Google's A2A server). `npm install
# --no-save` installs the locked versions: `npm ci` refuses this lock because the
# registry here does not serve some other platforms' optional packages (Qwen Code's
# clipboard binaries), so they are not in it.
tests/peers/node_modules/.package-lock.json: tests/peers/package.json tests/peers/package-lock.json
	cd tests/peers && npm install --no-save --no-audit --no-fund
	@touch $@

python-packages: $(VENV)/.installed $(ROOT)/.venv-aider/.installed $(ROOT)/.venv-smolagents/.installed \
	$(ROOT)/.venv-phoenix/.installed

$(VENV)/.installed: tests/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r tests/requirements.txt
	@touch $@

# The real CLI agents the suite delegates to, each in its own environment (aider
# pins its own litellm); Arize Phoenix, the OpenTelemetry backend the trace export
# is read back from.
$(ROOT)/.venv-%/.installed: tests/requirements-%.txt
	python3 -m venv $(ROOT)/.venv-$*
	$(ROOT)/.venv-$*/bin/pip install -q -r $<
	@touch $@

cargo-fetch:
	$(CARGO) fetch --locked

tauri-driver:
	@command -v tauri-driver >/dev/null || [ -x "$(CARGO_BIN)tauri-driver" ] || $(CARGO) install tauri-driver --locked

ui:
	cd ui && node_modules/.bin/vite build

# The app embeds ui/dist when it compiles: `make check` builds it once if it is missing.
ui/dist/index.html:
	$(MAKE) --no-print-directory ui

ui-e2e:
	cd ui && node_modules/.bin/vite build --mode e2e

app:
	$(CARGO) build -p switchboard-app

# The linted build of every target of the workspace (lib, bins, tests, benches):
# clippy's findings fail it as `cargo clippy --workspace --all-targets -- -D warnings`
# would, and it leaves the test binaries and both programs in target/debug.
build-rust:
	$(LINTED) $(CARGO) test --workspace --all-targets --no-run

test-rust: build-rust
	$(CARGO) fmt --all --check
	$(LINTED) $(CARGO) test --workspace

# The daily loop (at most 5 minutes on a warm tree): formatting, the linted build,
# the unit tests of every crate and the core's own suites but those that start real
# agent programs, then the UI's unit tests.
check: ui/dist/index.html
	$(CARGO) fmt --all --check
	$(LINTED) $(CARGO) test --workspace --all-targets --no-run
	$(LINTED) $(CARGO) test --workspace --lib --test it -- --skip peer_cases --skip cli_agent_cases \
	  --skip real_agent_cases --skip claude_caller_cases --skip subprocess_cases
	cd ui && node_modules/.bin/vitest run

# `switchboard mcp` against real MCP clients: the Python `mcp` package, the MCP
# Inspector CLI and the official conformance suite (node 22 from tests/peers).
test-mcp:
	$(if $(BUILT),,$(MAKE) --no-print-directory build-rust)
	$(VENV)/bin/pytest -q -p no:cacheprovider --timeout=600 tests/mcp tests/a2a tests/hostile

# Trace export read back through a real Arize Phoenix on loopback.
test-otel:
	$(if $(BUILT),,$(MAKE) --no-print-directory build-rust)
	PHOENIX=$(ROOT)/.venv-phoenix/bin/phoenix $(VENV)/bin/pytest -q -p no:cacheprovider --timeout=600 tests/otel

test-ui:
	cd ui && node_modules/.bin/prettier --check .
	cd ui && node_modules/.bin/svelte-check --tsconfig ./tsconfig.json --fail-on-warnings
	cd ui && node_modules/.bin/vitest run

# The Python tests' own format and lint (ruff, configured in pyproject.toml).
test-python:
	$(VENV)/bin/ruff format --check tests
	$(VENV)/bin/ruff check tests

test-browser:
	cd ui && node --test --test-concurrency=1 --test-timeout=180000 tests/e2e*.mjs

test-window:
	PATH="$(CARGO_BIN):$$PATH" xvfb-run -a -s "-screen 0 1280x800x24" $(VENV)/bin/pytest -p no:cacheprovider --timeout=600 -W ignore::DeprecationWarning tests/window

# Benchmarks print figures beside a baseline measured in the same run (never asserted).
bench: python-packages
	$(CARGO) build --release -p switchboard-cli
	$(CARGO) bench -p switchboard-core -p switchboard-otel

# Frame times of the live tree replaying 1,000 calls and 20,000 deltas in headless Chromium.
bench-ui: setup ui-e2e
	cd ui && node tests/bench-tree.mjs

# Memory of the real window (release build, under Xvfb, over WebDriver) idle and after
# 1, 10 and 50 demo turns, beside a minimal Tauri 2 app measured in the same run
# (benches/minimal-app: its own workspace, built from a copy of Cargo.lock in its own
# target dir). BENCH_MEMORY_RUNS=1 for a quicker single run; BENCH_MEMORY_ARGS=--compositing
# measures both apps with WebKit's accelerated compositing on.
bench-memory: setup ui
	$(CARGO) build --release -p switchboard-app
	cp Cargo.lock benches/minimal-app/Cargo.lock
	cd benches/minimal-app && CARGO_TARGET_DIR=$(ROOT)/target/bench-minimal $(CARGO) build --release
	PATH="$(CARGO_BIN):$$PATH" xvfb-run -a -s "-screen 0 1280x800x24" $(VENV)/bin/python tests/bench/bench_memory.py --runs $(or $(BENCH_MEMORY_RUNS),3) $(BENCH_MEMORY_ARGS)

# An installable package: a .deb with the app, the `switchboard` CLI beside it, a
# desktop entry and icons, built by the Tauri bundler (release build), in
# target/release/bundle/deb/. (An AppImage needs linuxdeploy, which the bundler
# downloads from GitHub: not reachable from this machine.)
deb_config = {"bundle":{"active":true,"targets":["deb"],"category":"DeveloperTool",\
	"shortDescription":"Agents that call agents as tools, watched live",\
	"longDescription":"A desktop app and a command-line tool for agents that call other agents as tools: every nested call live in a tree, with its usage, cost, limits and approvals.",\
	"linux":{"deb":{"files":{"/usr/bin/switchboard":"../target/$(1)/switchboard"}}}}}
package: setup ui
	$(CARGO) build --release -p switchboard-cli
	cd src-tauri && PATH="$(CARGO_BIN):$$PATH" ../ui/node_modules/.bin/tauri build --ci --bundles deb --config '$(call deb_config,release)'

# The same .deb from the debug programs the test build made (the app embeds the
# built UI as a release does), in target/debug/bundle/deb/: what `make test` checks,
# without a release build of the whole graph.
package-debug: $(if $(BUILT),,ui build-rust)
	cd src-tauri && PATH="$(CARGO_BIN):$$PATH" ../ui/node_modules/.bin/tauri bundle --debug --ci --bundles deb --config '$(call deb_config,debug)'

# The .deb unpacked into a temporary root: both programs, the desktop entry, the
# app's window under Xvfb, the CLI's answer. DEB=release checks `make package`'s.
DEB ?= debug
test-package: $(if $(filter release,$(DEB)),package,package-debug)
	DEB_DIR=$(ROOT)/target/$(DEB)/bundle/deb PATH="$(CARGO_BIN):$$PATH" xvfb-run -a -s "-screen 0 1280x800x24" $(VENV)/bin/pytest -q -p no:cacheprovider --timeout=600 -W ignore::DeprecationWarning tests/package

# Mutation testing of the policy-critical code with cargo-mutants: each mutant of
# the fence, the merge, validation, the dispatcher's admission and the tool list is
# built and the core's tests run against it (the fence, the merge and validation
# live in switchboard-base, tested from the core's suites: `--test-package`); a
# mutant they do not catch is a gap.
# Not part of `make test` (it takes long); the counts are in docs/testing.md.
MUTATED := crates/switchboard-base/src/fence.rs crates/switchboard-base/src/config/merge.rs \
	crates/switchboard-base/src/config/validate.rs crates/switchboard-core/src/dispatch/admit.rs \
	crates/switchboard-core/src/tools.rs
mutants:
	@command -v cargo-mutants >/dev/null || [ -x "$(CARGO_BIN)cargo-mutants" ] || $(CARGO) install cargo-mutants --locked
	$(CARGO) mutants -p switchboard-base -p switchboard-core \
	  --test-package switchboard-base --test-package switchboard-core $(addprefix -f ,$(MUTATED)) --timeout 300 --output target/mutants

# The docs' screenshots of the real window at three sizes, light and dark
# (docs/screenshots/), each on an Xvfb screen of its size; README's is the 1366x800 light one.
SCREENSHOT_SIZES := 900x600 1366x800 1920x1080
screenshots: setup ui app
	for size in $(SCREENSHOT_SIZES); do \
	  PATH="$(CARGO_BIN):$$PATH" PYTHONPATH=tests:tests/window xvfb-run -a -s "-screen 0 $${size}x24" \
	    $(VENV)/bin/python tests/window/screenshots.py $${size%x*} $${size#*x}; \
	done
	cp docs/screenshots/window-1366x800-light.png docs/screenshot.png

# Regenerates ui/src/bindings.ts from the Rust types (the test suite checks it is current).
bindings:
	UPDATE_BINDINGS=1 $(CARGO) test -p switchboard-app --test shell committed_bindings_match_the_rust_types

clean:
	rm -rf target ui/dist ui/dist-e2e ui/node_modules $(VENV) $(ROOT)/.venv-aider $(ROOT)/.venv-smolagents $(ROOT)/.venv-phoenix tests/artifacts
