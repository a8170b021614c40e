#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# Smoke test of built binaries: every server component must accept
# --feature-gates=DRAExtendedResource=true. A made-up gate must be rejected by
# the same call, which shows the check can tell the two apart.
#
#   check-gates.sh [BIN...]            binaries to check (default: the four
#                                      server components in _output/bin)
#   EXPECT=rejected check-gates.sh BIN  the opposite, for an unpatched binary
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

GATE=DRAExtendedResource
expect=$EXPECT
bins=("$@")
if [[ ${#bins[@]} -eq 0 ]]; then
	for b in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
		[[ -x $BIN_DIR/$b ]] && bins+=("$BIN_DIR/$b")
	done
fi
[[ ${#bins[@]} -gt 0 ]] || die "no binaries to check" "run make build first"

failed=0
for b in "${bins[@]}"; do
	name=$(basename "$b")
	bogus=$(gate_probe "$b" "${GATE}Bogus")
	if [[ $bogus != rejected ]]; then
		warn "$name does not reject a made-up gate ($bogus): this check cannot judge it"
		failed=1
		continue
	fi
	result=$(gate_probe "$b" "$GATE")
	[[ $result == "$expect" ]] || failed=1
	info "$name --feature-gates=$GATE=true: $result ($("$b" --version 2>/dev/null | tail -1))"
done
[[ $failed -eq 0 ]] || die "feature gate check failed: expected every binary to have $expect $GATE"
log "every checked binary $expect --feature-gates=$GATE=true"
