# draext: KEP-5004 (DRA extended resources) as a patch series on Kubernetes.
# Every target delegates to a script under scripts/; `make help` lists them.

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

export RELEASE_BRANCH ?= v1.33
export WHAT
export KUBE_SRC
export KUBE_GIT_REMOTE

.PHONY: help fetch patches-apply patches-export patches-verify build check-gates test clean-upstream clean

help: ## List the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

fetch: ## Get pristine upstream source into _output/kubernetes (module proxy; KUBE_SRC= or KUBE_GIT_REMOTE= for git)
	@bash scripts/fetch-upstream.sh

patches-apply: ## Apply the series with git am -3 onto branch draext of _output/kubernetes
	@bash scripts/patches-apply.sh

patches-export: ## Rewrite patches/$(RELEASE_BRANCH) from branch draext, normalised
	@bash scripts/patches-export.sh

patches-verify: ## Replay the series on a pristine base, re-export and compare bytes; check metadata
	@bash scripts/patches-verify.sh

build: ## Build patched binaries into _output/bin (WHAT="kubelet kubectl" for a subset)
	@bash scripts/build.sh

check-gates: ## Check that the built server binaries accept --feature-gates=DRAExtendedResource=true
	@bash scripts/check-gates.sh

test: ## Run all tests: own Go code, patches-verify, gofmt/vet and in-tree tests of changed packages
	@bash scripts/test.sh

clean-upstream: ## Remove _output/kubernetes after checking it holds no unexported work
	@bash scripts/clean.sh upstream

clean: ## Remove _output (binaries, trees, tools) after the same check
	@bash scripts/clean.sh all
