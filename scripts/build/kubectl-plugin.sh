#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Builds the kubectl plugin kubectl-draext (staging/example, against the
# exported staging modules) into _output/bin and puts it on PATH: a symlink
# $PREFIX/bin/kubectl-draext (PREFIX=/usr/local by default), so that
# `kubectl draext` and `kubectl plugin list` find it.
#
#   kubectl-plugin.sh                         build, link into /usr/local/bin
#   PREFIX=$HOME/.local kubectl-plugin.sh     link into ~/.local/bin instead
#
# docs/kubectl-draext.md describes the plugin.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/staging.sh"

need_base_tools
prefix=${PREFIX:-/usr/local}
bin=$BIN_DIR/kubectl-draext
# The plugin reads the new API fields typed, through the exported modules;
# make staging exports them when they are missing (go.sum pins their hashes,
# so a stale export fails the build instead of going unnoticed).
[[ -s $STAGING_SUMS ]] || "$DRAEXT_ROOT/scripts/build/staging.sh"
mkdir -p "$BIN_DIR"
(cd "$DRAEXT_ROOT/staging/example" && staging_go build -trimpath -ldflags='-s -w' -o "$bin" .) ||
	die "building kubectl-draext failed (see the go error above)"
info "built ${bin#"$DRAEXT_ROOT"/}"

mkdir -p "$prefix/bin" 2>/dev/null && [[ -w $prefix/bin ]] ||
	die "cannot write to $prefix/bin" "run as root, or choose another directory on PATH: PREFIX=\$HOME/.local make kubectl-plugin"
ln -sfn "$bin" "$prefix/bin/kubectl-draext"
info "linked $prefix/bin/kubectl-draext -> ${bin#"$DRAEXT_ROOT"/}"
case ":$PATH:" in
*":$prefix/bin:"*) ;;
*) warn "$prefix/bin is not on PATH: add it, so that kubectl finds the plugin" ;;
esac

# kubectl lists the plugins it finds on PATH; any kubectl will do.
kubectl=$(command -v kubectl || true)
[[ -n $kubectl || ! -x $BIN_DIR/kubectl ]] || kubectl=$BIN_DIR/kubectl
if [[ -n $kubectl ]]; then
	found=$(PATH="$prefix/bin:$PATH" "$kubectl" plugin list 2>/dev/null | grep -F "/kubectl-draext" || true)
	[[ $found == "$prefix/bin/kubectl-draext"* ]] ||
		die "kubectl plugin list does not show $prefix/bin/kubectl-draext first" "it shows: ${found:-nothing}" \
			"remove the other kubectl-draext from PATH, or put $prefix/bin before it"
	info "kubectl plugin list: $found"
fi
log "kubectl-draext installed: kubectl draext nodes | pod NAME | classes (-o json|yaml|wide)"
