#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# kind-cluster.sh up|down: a kind cluster of the node image (make node-image)
# with the example driver.
#
# up: creates cluster "draext" from kind-configs/ (KIND_CONFIG=; offline
# single-node by default, ONLINE=1 for the variants with kind's default CNI),
# gives an offline cluster its pod network (pod_network below), loads the
# driver image, applies overlays/mock and waits until its ResourceSlices
# appear. RELEASE_DIR=_output/release/<version> takes the driver image and
# the overlays from a release (make release) instead of the checkout. The
# kubeconfig is _output/kind/kubeconfig; then KUBECONFIG=_output/kind/kubeconfig
# make e2e runs the same suite.
# down: deletes the cluster and its Docker network, removes what kind left in
# /tmp, and stops the Docker engine if make docker-up started it.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/images.sh"

KDIR=$OUTPUT_DIR/kind
KIND=$KDIR/bin/kind
NAME=draext
KCFG=$KDIR/kubeconfig
NODE_IMAGE=${NODE_IMAGE:-$(default_node_image)}

# pod_network: without kind's default CNI (offline), each node gets a bridge
# on the podCIDR that kube-controller-manager allocated to it (from kind's
# podSubnet) and a route to every other node's podCIDR through that node's
# address on kind's Docker network: pods on different nodes reach each other
# and Services reach every endpoint.
pod_network() {
	local n m deadline kind_nodes
	local -A cidr addr
	mapfile -t kind_nodes < <("$KIND" get nodes --name "$NAME")
	deadline=$(($(now_s) + 120))
	for n in "${kind_nodes[@]}"; do
		until cidr[$n]=$(kc get node "$n" -o jsonpath='{.spec.podCIDR}' 2>/dev/null) && [[ -n ${cidr[$n]} ]]; do
			(($(now_s) < deadline)) || die "node $n got no podCIDR within 120 s (kube-controller-manager allocates them from networking.podSubnet)"
			sleep 1
		done
		addr[$n]=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$n")
		[[ -n ${addr[$n]} ]] || die "node $n has no address on a Docker network"
	done
	for n in "${kind_nodes[@]}"; do
		sed "s|__POD_CIDR__|${cidr[$n]}|" "$DRAEXT_ROOT/kind-configs/cni/10-bridge.conflist" |
			docker exec -i "$n" sh -c 'cat >/etc/cni/net.d/10-bridge.conflist.tmp && mv /etc/cni/net.d/10-bridge.conflist.tmp /etc/cni/net.d/10-bridge.conflist' ||
			die "writing the CNI configuration of node $n failed"
		for m in "${kind_nodes[@]}"; do
			[[ $m == "$n" ]] || docker exec "$n" ip route replace "${cidr[$m]}" via "${addr[$m]}" ||
				die "adding the route to ${cidr[$m]} (node $m) on node $n failed"
		done
		info "node $n: pods on ${cidr[$n]}, address ${addr[$n]}"
	done
	kc wait --for=condition=Ready node --all --timeout=180s >/dev/null || die "the nodes did not get Ready with their pod network"
}

case ${1:-} in
up)
	start=$(now_s)
	[[ $ONLINE == 1 ]] || bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" up
	eval "$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env | sed 's/^/export DOCKER_HOST=/')"
	docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 || bash "$DRAEXT_ROOT/scripts/kind/node-image.sh"
	mode=offline
	[[ $ONLINE == 1 ]] && mode=online
	config=${KIND_CONFIG:-$DRAEXT_ROOT/kind-configs/single-node-$mode.yaml}
	cp "$config" "$KDIR/config.yaml"
	kc() { "$BIN_DIR/kubectl" --kubeconfig "$KCFG" "$@"; }
	own_network=
	grep -qE '^ *disableDefaultCNI: *true' "$config" && own_network=1
	if "$KIND" get clusters 2>/dev/null | grep -qx "$NAME"; then
		info "kind cluster $NAME exists"
	else
		log "kind create cluster ($NODE_IMAGE, $(basename "$config"))"
		# kind mounts the host's /lib/modules; Docker creates it when missing.
		[[ -e /lib/modules ]] || touch "$KDIR/created-lib-modules"
		# Without a CNI the nodes get Ready only once pod_network ran.
		wait=3m
		[[ -z $own_network ]] || wait=0s
		"$KIND" create cluster --name "$NAME" --image "$NODE_IMAGE" --config "$KDIR/config.yaml" \
			--kubeconfig "$KCFG" --wait "$wait" || die "kind create cluster failed"
	fi
	if [[ -n $own_network ]]; then
		log "pod network: a bridge per node on its podCIDR, routes between the nodes"
		pod_network
	fi
	# The driver (from the release with RELEASE_DIR), and the small shell
	# image the e2e suite and the demo use.
	if [[ -n ${RELEASE_DIR:-} ]]; then
		driver_archive=$RELEASE_DIR/images/draext-gpu.tar overlays=$RELEASE_DIR/overlays
	else
		bash "$DRAEXT_ROOT/scripts/build/driver-image.sh"
		driver_archive=$OUTPUT_DIR/cluster/images/draext-gpu.tar overlays=$DRAEXT_ROOT/overlays
	fi
	[[ -f $OUTPUT_DIR/cluster/images/busybox.tar ]] || bash "$DRAEXT_ROOT/scripts/cluster/deps.sh"
	for archive in "$driver_archive" "$OUTPUT_DIR/cluster/images/busybox.tar"; do
		"$KIND" load image-archive "$archive" --name "$NAME" ||
			die "kind load image-archive of ${archive#"$DRAEXT_ROOT"/} failed"
	done
	# A stock v1.33.13 apiserver (make kind-upgrade-test's cluster) does not
	# know extendedResourceName and refuses it under strict field validation:
	# it gets the DeviceClass without it, with a warning.
	validation=strict
	if ! kc explain deviceclass.spec.extendedResourceName >/dev/null 2>&1; then
		validation=warn
		info "the API server does not know DeviceClass extendedResourceName (stock): the class is applied without it"
	fi
	kc apply --validate="$validation" -k "$overlays/mock" >/dev/null 2>"$KDIR/apply.log" ||
		{ cat "$KDIR/apply.log" >&2; die "applying ${overlays#"$DRAEXT_ROOT"/}/mock failed"; }
	log "waiting for the driver's ResourceSlices"
	# A failed API call (the apiserver restarting, a timeout) is retried until
	# the deadline; only then is it the reason reported.
	wait_s=180
	deadline=$(($(now_s) + wait_s))
	nodes=0 slices=0 api_error=
	while :; do
		# Nodes the DaemonSet runs on (not the tainted control plane of a multi-node cluster).
		if ! out=$(kc -n draext-gpu get daemonset draext-gpu -o jsonpath='{.status.desiredNumberScheduled}' 2>&1); then
			api_error=$out
		elif nodes=${out:-0} && ! out=$(kc get resourceslices -o jsonpath='{range .items[?(@.spec.driver=="gpu.draext.dev")]}{.spec.nodeName}{"\n"}{end}' 2>&1); then
			api_error=$out
		else
			api_error=
			slices=$(sort -u <<<"$out" | grep -c . || true)
			((slices >= nodes && nodes > 0)) && break
		fi
		(($(now_s) < deadline)) || break
		sleep 2
	done
	if ! ((slices >= nodes && nodes > 0)); then
		kc -n draext-gpu get pods -o wide >&2 || true
		kc -n draext-gpu logs ds/draext-gpu --tail=20 >&2 || true
		[[ -z $api_error ]] || die "the API server did not answer while waiting for the driver's ResourceSlices: $(tail -n 1 <<<"$api_error")"
		die "the driver published slices for $slices of $nodes node(s) within ${wait_s}s"
	fi
	kc get nodes -o wide >&2 || true
	log "kind cluster $NAME ready ($(($(now_s) - start))s): export KUBECONFIG=$KCFG; make e2e; make kind-down"
	;;
down)
	eval "$(bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" env | sed 's/^/export DOCKER_HOST=/')"
	if [[ -x $KIND ]] && docker info >/dev/null 2>&1; then
		"$KIND" delete cluster --name "$NAME" --kubeconfig "$KCFG" 2>&1 | grep -v '^$' || true
		docker network rm kind >/dev/null 2>&1 || true
	fi
	rm -rf /tmp/k8s-tar-extract-* "$KCFG"
	if [[ -f $KDIR/created-lib-modules ]]; then
		rmdir /lib/modules 2>/dev/null || true
		rm -f "$KDIR/created-lib-modules"
	fi
	[[ $KEEP_DOCKER == 1 ]] || bash "$DRAEXT_ROOT/scripts/kind/docker-engine.sh" down
	log "kind cluster $NAME removed"
	;;
*) die "usage: kind-cluster.sh up|down" ;;
esac
