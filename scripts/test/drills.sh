#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make drills: the local cluster under load and faults, as the e2e
# suite's specs labelled "drill", one line of figures per drill at the end:
#   D1 churn with a crashing scheduler (needs two DRA nodes: make up NODES=3)
#   D2 extended resource and claim-template pods race for one node
#   D4 kube-apiserver SIGKILLed during a burst
#   D5 kube-controller-manager restarted while pods complete
#   D6 a force-deleted pod's GPU and the next pod's container
#   D7 quota under concurrent creates
#   D9 kube-apiserver SIGSTOPped for seconds during a burst
#   D10 kube-scheduler's ResourceClaim watch held back while bindings fail
# and the lifecycle specs (label lifecycle): the gate cycle "gate on, off, on".
# Components are killed and restarted through scripts/cluster/ctl.sh. Knobs:
# E2E_DRILL_CHURN_PODS, E2E_DRILL_APISERVER_PODS, E2E_DRILL_APISERVER_PAUSE_SECONDS,
# E2E_DRILL_LAG_PODS, E2E_DRILL_CLAIM_LAG_SECONDS (scripts/lib/config.sh);
# E2E_ARGS=-ginkgo.focus=D2 runs one drill.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

[[ -f $KUBECONFIG_FILE ]] && proc_alive kube-apiserver || die "no local cluster is running" "make up NODES=3 (two DRA nodes and a device-plugin node), then make drills"
[[ $(id -u) == 0 ]] || die "the drills restart the cluster's components: run them as root"
report=$OUTPUT_DIR/drills/report.txt
mkdir -p "${report%/*}"
: >"$report"
start=$(now_s)
rc=0
E2E_LABEL_FILTER="drill || lifecycle" E2E_TIMEOUT=60m E2E_DRILL_REPORT=$report E2E_REQUIRE=cluster,gates,driver,restart \
	bash "$DRAEXT_ROOT/scripts/test/e2e.sh" || rc=$?
log "drills ($(($(now_s) - start))s):"
if [[ -s $report ]]; then
	sed 's/^/    /' "$report" >&2
else
	info "(no drill got to its figures)"
fi
((rc == 0)) || die "a drill failed (see above); figures in ${report#"$DRAEXT_ROOT"/}"
