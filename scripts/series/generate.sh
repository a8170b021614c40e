#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Regenerates upstream's generated code in a Kubernetes tree with upstream's own
# generators, offline:
#   hack/update-codegen.sh  protobuf deepcopy swagger prerelease defaults validation
#                           conversions register openapi applyconfigs clients listers
#                           informers
#   hack/update-openapi-spec.sh   (api/openapi-spec, api/discovery; SPEC=0 skips it)
#   API compatibility fixtures    (staging/src/k8s.io/api/testdata/HEAD)
#
#   TREE=DIR   the tree to regenerate (default: _output/kubernetes, branch draext)
#
# What a module-zip tree and this machine lack is supplied around the tree and
# removed afterwards: a protoc answering upstream's version check (Debian's 3.21.12
# writes the same bytes as upstream's PROTOC_VERSION), gogo.proto, goimports, and the pinned etcd.
# Clients, listers and informers are regenerated too: the series serves resource.k8s.io/v1.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/gomod.sh"

[[ -d $TREE/hack ]] || die "no Kubernetes tree at $TREE" "run make patches-apply first"
need_base_tools
CODEGEN=$TOOLS_DIR/codegen
mkdir -p "$CODEGEN/bin" "$CODEGEN/shim"
start=$(now_s)

# protoc: Debian's package. Upstream's hack/lib/protoc.sh insists on PROTOC_VERSION and would
# download it; a shim answers its version check and runs the real one otherwise.
if ! command -v protoc >/dev/null 2>&1; then
	[[ $(id -u) == 0 ]] || die "protoc is not installed" "run: sudo apt-get update && sudo apt-get install -y protobuf-compiler"
	log "installing Debian's protobuf-compiler"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends protobuf-compiler) >/dev/null ||
		die "apt-get install protobuf-compiler failed" "install protoc 3.21 or newer by hand"
fi
real_protoc=$(command -v protoc)
cat >"$CODEGEN/shim/protoc" <<EOF
#!/bin/sh
# Written by draext scripts/series/generate.sh: satisfies hack/lib/protoc.sh's version check.
if [ "\$1" = "--version" ]; then echo "libprotoc $PROTOC_VERSION (draext shim for \$($real_protoc --version))"; exit 0; fi
exec $real_protoc "\$@"
EOF
chmod +x "$CODEGEN/shim/protoc"

# goimports: go-to-protobuf runs it on every .pb.go. The version upstream pins.
if [[ ! -x $CODEGEN/bin/goimports ]]; then
	log "installing goimports"
	(cd "$CODEGEN" && GOWORK=off GOBIN=$CODEGEN/bin go install "golang.org/x/tools/cmd/goimports@$GOIMPORTS_VERSION") ||
		die "installing goimports $GOIMPORTS_VERSION failed (see the go error above)"
fi

# The hack scripts install their tools with GOPROXY=off into a cache under the
# tree: give them the real caches, and fill those once with the proxy allowed.
GOMODCACHE=$(go env GOMODCACHE)
GOCACHE=$(go env GOCACHE)
export GOMODCACHE GOCACHE
log "preparing the generators of the tree"
(cd "$TREE" && GOBIN=$CODEGEN/bin go install \
	k8s.io/code-generator/cmd/go-to-protobuf \
	k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo \
	k8s.io/code-generator/cmd/deepcopy-gen \
	k8s.io/code-generator/cmd/defaulter-gen \
	k8s.io/code-generator/cmd/conversion-gen \
	k8s.io/code-generator/cmd/register-gen \
	k8s.io/code-generator/cmd/applyconfiguration-gen \
	k8s.io/code-generator/cmd/validation-gen \
	k8s.io/code-generator/cmd/client-gen \
	k8s.io/code-generator/cmd/lister-gen \
	k8s.io/code-generator/cmd/informer-gen \
	k8s.io/kube-openapi/cmd/openapi-gen) ||
	die "building the tree's code generators failed (see the go errors above)"
tree_gogo=$(awk '$1 == "github.com/gogo/protobuf" { print $2; exit }' "$TREE/go.mod")
[[ -z $tree_gogo || $tree_gogo == "$GOGO_PROTOBUF_VERSION" ]] ||
	die "the tree's go.mod requires github.com/gogo/protobuf $tree_gogo, scripts/lib/config.sh pins $GOGO_PROTOBUF_VERSION"
gogo_src=$(module_dir github.com/gogo/protobuf "$GOGO_PROTOBUF_VERSION")

# gogo.proto normally comes from vendor/, which module zips leave out; etcd
# comes from third_party/etcd. Whatever is lent to the tree is taken back.
made_gogo=false made_etcd=false
gogo=$TREE/vendor/github.com/gogo/protobuf
etcd_dir=$TREE/third_party/etcd-v$ETCD_VERSION-linux-amd64
restore() {
	if $made_gogo; then rm -f "$gogo" && rmdir "$(dirname "$gogo")" "$(dirname "$(dirname "$gogo")")" 2>/dev/null || true; fi
	if $made_etcd; then rm -rf "$TREE/third_party/etcd" "$etcd_dir"; fi
}
trap restore EXIT
if [[ ! -e $gogo ]]; then
	mkdir -p "$(dirname "$gogo")"
	ln -s "$gogo_src" "$gogo"
	made_gogo=true
fi

export GOTOOLCHAIN=local
export PATH="$CODEGEN/shim:$CODEGEN/bin:$PATH"

generators=(protobuf deepcopy swagger prerelease defaults validation conversions register openapi applyconfigs clients listers informers)
log "running hack/update-codegen.sh ${generators[*]}"
(cd "$TREE" && bash hack/update-codegen.sh "${generators[@]}") ||
	die "hack/update-codegen.sh ${generators[*]} failed (see its output above)"

log "regenerating API compatibility fixtures (testdata/HEAD)"
(cd "$TREE/staging/src/k8s.io/api" && UPDATE_COMPATIBILITY_FIXTURE_DATA=true go test . -run 'TestCompatibility|TestRoundTrip' -count=1 >/dev/null 2>&1) || true
# The first run rewrites what changed (and fails because it did); the second proves them.
(cd "$TREE/staging/src/k8s.io/api" && go test . -run 'TestCompatibility|TestRoundTrip' -count=1) ||
	die "API compatibility fixtures do not match after regeneration" "see the test output above"

if [[ $SPEC != 0 ]]; then
	"$DRAEXT_ROOT/scripts/build/install-etcd.sh"
	if [[ ! -e $TREE/third_party/etcd ]]; then
		mkdir -p "$etcd_dir"
		cp "$TOOLS_DIR/etcd/etcd" "$etcd_dir/etcd"
		ln -s "$(basename "$etcd_dir")" "$TREE/third_party/etcd"
		made_etcd=true
	fi
	# The spec script builds kube-apiserver with the tree's make rules (the Makefile
	# symlink and exec bits restored by fetch-upstream.sh) and starts it against etcd.
	log "running hack/update-openapi-spec.sh (builds kube-apiserver; several minutes cold)"
	(cd "$TREE" && PATH="$TREE/third_party/etcd:$PATH" bash hack/update-openapi-spec.sh) ||
		die "hack/update-openapi-spec.sh failed (see its output above)"
fi

log "generated code is up to date in ${TREE#"$DRAEXT_ROOT"/} ($(($(now_s) - start))s)"
(cd "$TREE" && git status --short --untracked-files=all -- . ':!vendor' ':!third_party/etcd*' | head -40) >&2
