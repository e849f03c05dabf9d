# d6a — the two commands that matter: `make run` and `make test` (README.md).

SHELL    := /bin/sh
GO       ?= go
# A count, not a duration: go1.26's -fuzztime deadline races its workers and
# reports a spurious "context deadline exceeded" (golang/go#75804).
FUZZTIME ?= 500000x

# Go sources for gofmt: everything but local state, git and test data.
GOFILES = $(shell find . \( -path ./.data -o -path ./.git -o -path ./bin -o -name testdata \) -prune -o -name '*.go' -print)

.PHONY: run stop-db tools vulncheck wasm test test-short generate check-generated lint build fuzz bench bench-flood bench-quick test-faults test-cluster soak clean bench-catchup

## run: local PostgreSQL (unless D6A_DATABASE_URL is set) + d6a serve with embedded NATS.
## The same as `go run ./cmd/d6a serve`, but built first and exec'd so Ctrl-C
## reaches d6a directly and a clean drain ends with status 0 (go run reports 1).
run: wasm
	@echo "d6a serve (make run)"
	@echo "  HTTP      $${D6A_HTTP_ADDR:-:8080}  -> /healthz  /readyz (200 once booted)  /metrics  /d6a/conselheiros/me/situacao  /d6a/transparencia/"
	@if [ -n "$$D6A_NATS_URL" ]; then \
	  echo "  NATS      $$D6A_NATS_URL (external cluster)"; \
	else \
	  echo "  NATS      nats://$${D6A_NATS_EMBEDDED_ADDR:-127.0.0.1:4222} (embedded, JetStream store in $${D6A_DATA_DIR:-./.data})"; \
	fi
	@if [ -n "$$D6A_DATABASE_URL" ]; then \
	  echo "  Postgres  D6A_DATABASE_URL from the environment"; \
	else \
	  echo "  Postgres  local cluster in $${D6A_DATA_DIR:-./.data}/pg on 127.0.0.1:54329 (stop with: make stop-db)"; \
	fi
	@echo ""
	@echo "Watch what d6a publishes:"
	@echo "  nats sub 'eventos.>'"
	@echo "Publish a test event (use a fresh uuid as event_id and Nats-Msg-Id for each new event):"
	@echo '  nats pub eventos.agenda.item_disponivel '\''{"event_id":"6f1c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10","tipo":"agenda.item_disponível","origem":"D-5","versao_schema":"1.0.0","correlacao_id":null,"timestamp":"2026-11-29T14:03:07.123Z","payload":{"demanda_id":"8d3c2a51-6b0e-4a44-9d0b-6f2a1f3e9c11","unidade_civica_id":"0f6e6d1a-1111-4c1b-9a6a-000000000001","posicao_no_backlog":1,"score_final":87.5,"categoria_id":"SAU","nivel_precedencia":2,"grupo_id":null,"timestamp":"2026-11-29T14:03:07.123Z"}}'\'' -H Nats-Msg-Id:6f1c2a51-6b0e-4a44-9d0b-6f2a1f3e9c10'
	@echo "  (with no counsellor registered in that unit it yields sorteio.sem_candidatos; README.md shows a conselheiro.cadastrado to publish first)"
	@echo ""
	@if [ -z "$$D6A_DATABASE_URL" ]; then \
	  D6A_DATABASE_URL=$$($(GO) run ./cmd/devdb) || exit 1; \
	  export D6A_DATABASE_URL; \
	fi; \
	D6A_LOG_FORMAT=$${D6A_LOG_FORMAT:-text}; export D6A_LOG_FORMAT; \
	$(GO) build -o bin/d6a ./cmd/d6a || exit 1; \
	if [ -z "$$D6A_LOG_KEY_FILE" ]; then \
	  D6A_LOG_KEY_FILE=$${D6A_DATA_DIR:-./.data}/transparencia-dev.key; export D6A_LOG_KEY_FILE; \
	  if [ ! -f "$$D6A_LOG_KEY_FILE" ]; then \
	    mkdir -p "$${D6A_DATA_DIR:-./.data}" && (umask 077 && ./bin/d6a log-keygen > "$$D6A_LOG_KEY_FILE") || exit 1; \
	    echo "transparency log: development key created in $$D6A_LOG_KEY_FILE"; \
	  fi; \
	fi; \
	exec ./bin/d6a serve

## stop-db: stop the local PostgreSQL cluster of `make run`
stop-db:
	@$(GO) run ./cmd/devdb -stop

## tools: the witness tests' real witness, litewitness and witnessctl of
## filippo.io/torchwood, in bin/tools (their keys live in Debian's ssh-agent)
TOOLS               := $(CURDIR)/bin/tools
LITEWITNESS_VERSION := v0.6.1
tools: $(TOOLS)/litewitness $(TOOLS)/witnessctl
$(TOOLS)/litewitness $(TOOLS)/witnessctl &:
	GOBIN=$(TOOLS) $(GO) install filippo.io/torchwood/cmd/litewitness@$(LITEWITNESS_VERSION) filippo.io/torchwood/cmd/witnessctl@$(LITEWITNESS_VERSION)

## vulncheck: govulncheck (golang.org/x/vuln) over the service binary's code
## (./cmd/d6a), offline: its database is built by cmd/vulndb from the OSV
## files of the module golang.org/x/vulndb, which the module proxy serves.
## Fails on any vulnerability the code calls, except a standard library one
## fixed by go.mod's toolchain line (the release build's, Dockerfile);
## docs/decisions.md, "govulncheck offline".
GOVULNCHECK_VERSION := v1.9.0
VULNDB_VERSION      := v0.0.0-20261105234957-e22db6528018
VULNDB_DIR          := $(CURDIR)/bin/vulndb/$(VULNDB_VERSION)
$(TOOLS)/govulncheck:
	GOBIN=$(TOOLS) $(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
$(VULNDB_DIR)/index/modules.json:
	$(GO) run ./cmd/vulndb -vulndb $(VULNDB_VERSION) -out $(VULNDB_DIR)
vulncheck: wasm $(TOOLS)/govulncheck $(VULNDB_DIR)/index/modules.json
	$(TOOLS)/govulncheck -db file://$(VULNDB_DIR) -format json ./cmd/d6a > bin/vulncheck.json
	$(GO) run ./cmd/vulndb -julgar go.mod < bin/vulncheck.json

## test: every test, with the race detector (the README's test command)
test: tools wasm
	$(GO) test -race -count=1 -parallel 4 -timeout 25m ./...

## test-short: the quick subset
test-short: wasm
	$(GO) test -short -count=1 ./...

## wasm: the verifier page's WebAssembly (cmd/d6a-wasm) in
## internal/httpapi/verificador/d6a.wasm, embedded by the service. A build
## artifact, not tracked (5 MB of binary); every target here that builds or
## tests runs it first. Reproducible: no paths, no build id, no VCS stamp.
WASM_DIR := internal/httpapi/verificador
wasm:
	GOOS=js GOARCH=wasm $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o $(WASM_DIR)/d6a.wasm ./cmd/d6a-wasm

## generate: regenerate the sqlc code in internal/store/dbsqlc, the log
## records' canonical codec (internal/registro/canonico_gen.go) and copy the
## Go toolchain's wasm_exec.js (the page's WebAssembly loader)
generate: wasm
	$(GO) tool sqlc generate
	$(GO) generate ./internal/registro
	cp "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" $(WASM_DIR)/wasm_exec.js

## check-generated: fail when the committed generated code is stale
check-generated: generate
	git diff --exit-code -- internal/store/dbsqlc internal/registro/canonico_gen.go $(WASM_DIR)/wasm_exec.js
	@untracked=$$(git ls-files --others --exclude-standard -- internal/store/dbsqlc internal/registro/canonico_gen.go $(WASM_DIR)/wasm_exec.js); \
	if [ -n "$$untracked" ]; then echo "generated but not committed:"; echo "$$untracked"; exit 1; fi

## lint: gofmt must report nothing, then go vet
lint: wasm
	@unformatted=$$(gofmt -l $(GOFILES)); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l reports (run gofmt -w on them):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

## build: the binary in bin/d6a
build: wasm
	$(GO) build -o bin/d6a ./cmd/d6a

## fuzz: every Fuzz* target in the repository for FUZZTIME each (default 500000x executions)
fuzz: wasm
	@set -e; \
	files=$$(grep -rl --include='*_test.go' --exclude-dir=.data --exclude-dir=.git --exclude-dir=testdata '^func Fuzz' . | sort); \
	if [ -z "$$files" ]; then echo "no Fuzz targets"; exit 0; fi; \
	for f in $$files; do \
	  pkg=$$(dirname $$f); \
	  for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== $$name in $$pkg for $(FUZZTIME)"; \
	    $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

## bench: d6a serve at national scale: K = 1,000 / 100,000 / 1,000,000 counsellors, sparse and dense-upper-level countries, a fresh never-analyzed database, the bare durable loop (15-25 min); then the situacao HTTP route against a bare fiber handler, and over 100,000 citizens with RS256 tokens through a JWKS (about 4 min); then a burst's own log (1,000 counsellors registered on the bus, 3,000 demands mixed with releases) replayed by d6a verify --all --replay with the bus (under a minute); docs/bench.md
bench: wasm
	$(GO) run ./cmd/d6a-bench
	$(GO) run ./cmd/d6a-bench http -d 10s -c 32 -rate 1000
	$(GO) run ./cmd/d6a-bench replay

## bench-flood: bursts of 5,000 draws at K = 100,000 dense, each run alone and while 64 clients (a process of their own at nice 19) flood /metrics, /readyz, /estatisticas and the log's partial tiles, three rounds in one run (about 6 min on a quiet machine): draws/s under the flood ≥ 0.8× alone; docs/bench.md "Public routes under a flood"
bench-flood: wasm
	$(GO) run ./cmd/d6a-bench flood

## bench-quick: both modes of cmd/d6a-bench small (draws -quick, HTTP -quick: 1 s runs, a working set of 1,000 citizens), docs untouched: checks the tool in under 3 minutes
bench-quick: wasm
	$(GO) run ./cmd/d6a-bench -quick
	$(GO) run ./cmd/d6a-bench http -quick

## bench-catchup: 100,000 agenda items waiting on the durable while d6a was down, drained with the beacon rule on and off in the same run (the colony in process, a fresh database each; about 4 minutes); rewrites the catchup block of docs/bench.md
bench-catchup: wasm
	$(GO) run ./cmd/d6a-bench catchup

## test-faults: fault suite (internal/faults, build tag faults): kills, outages, two instances, hostile input, HTTP attacks; about 3 minutes
test-faults: wasm
	$(GO) test -tags faults -race -count=1 -timeout 15m -v ./internal/faults/

## test-cluster: production topology (internal/faults, build tags faults+cluster): three nats-servers (EVENTOS R3), PostgreSQL primary + standby, two d6a; leader step-downs, kill -9 of the stream leader, PostgreSQL failover, and an asynchronous standby promoted without the last commits, repaired by d6a verify --consistencia --reparar; about 3 minutes (docs/reliability.md)
test-cluster: wasm
	$(GO) test -tags faults,cluster -count=1 -timeout 12m -v -run '^TestCluster' ./internal/faults/

## soak: the fault suite, longer (4,000 events, 40 kills)
soak: wasm
	D6A_SOAK=1 $(GO) test -tags faults -race -count=1 -timeout 30m -v ./internal/faults/

## clean: remove build output (the dev database in .data is kept: make stop-db && rm -rf .data)
clean:
	rm -rf bin
	$(GO) clean -testcache
