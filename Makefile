# Two commands matter: `make run` (the local runner) and `make test` (everything CI checks).
SHELL := /bin/bash
GO ?= go
CACHE := $(CURDIR)/.cache
# -trimpath keeps absolute paths out of what is compiled, and so out of the
# build cache's keys: a fresh clone in another directory (as CI makes)
# reuses every package compiled before instead of compiling all of them
# again (one package's -race test build: 12 s cold, 2.6 s so).
export GOFLAGS := -buildvcs=false -trimpath

.PHONY: run test test-quick vet bench fuzz build clean

# Before the rules: their prerequisites ($(GOLANGCI_LINT)) are expanded as
# they are read, and an empty one would never install the linter. `make`
# alone still runs `run`.
.DEFAULT_GOAL := run
include infra/sam.mk

run: ## serve every resource group on 127.0.0.1:$${PORT:-8080} over the embedded store
	$(GO) run ./infra/localrunner

test: ## everything CI checks: vet, every Go test on both stores and queues with -race, the browser test, schemathesis, Go fuzzing, template checks; ends with a table of stage times
	bash infra/test.sh

test-quick: vet ## the edit-test loop: every Go test on the embedded store and queue only (no emulators, no -race, no fuzzing)
	$(GO) test -count=1 ./...

vet: $(GOLANGCI_LINT) ## golangci-lint (go vet's checks, staticcheck, errcheck, ineffassign, unused: .golangci.yml) and gofmt
	$(GOLANGCI_LINT) run ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

bench: ## handler benchmarks and a loopback load run of the local runner
	bash infra/bench.sh

fuzz: ## long fuzzing: schemathesis in 5 rounds of 100 examples per operation, then each Go fuzz target for 2 minutes
	bash infra/fuzz.sh long

clean:
	rm -rf .aws-sam bin
