# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# make up, after the driver phase: the mock-GPU DRA driver built only on
# stock, unpatched published modules (compat/stockdriver), per node a host
# process next to the example driver, and its DeviceClass, created through
# resource.k8s.io/v1 with extendedResourceName mock.draext.dev/gpu
# (compat/stockdriver/deviceclass.yaml). Builds the driver at the library
# version STOCK_DRA_VERSION (v034: go.mod, k8s.io/* v0.34.x; v037: go.v037.mod,
# the newest the module proxy serves) into _output/bin. Reuses the example
# driver's kubeconfig and ClusterRole (phases/driver.sh binds them). Waits
# until every node publishes the mock GPUs. Sourced by scripts/cluster/up.sh;
# do not run it.

# STOCK_DRIVER=0 leaves the stock-library driver out; STOCK_DRA_VERSION picks
# its library version (v034 or v037); STOCK_DRIVER_DEVICES mock GPUs per node.
STOCK_DRIVER=${STOCK_DRIVER:-1}
STOCK_DRA_VERSION=${STOCK_DRA_VERSION:-v034}
STOCK_DRIVER_DEVICES=${STOCK_DRIVER_DEVICES:-2}
# The driver name is the binary's default; the DeviceClass selects it.
STOCK_DRIVER_NAME=mock-gpu.stock.draext.dev

# stockdriver_build: builds compat/stockdriver at STOCK_DRA_VERSION and prints
# the binary's path. Incremental: about a second when nothing changed.
stockdriver_build() {
	local src=$DRAEXT_ROOT/compat/stockdriver out=$OUTPUT_DIR/bin/draext-stockdriver-$STOCK_DRA_VERSION flags=()
	case $STOCK_DRA_VERSION in
	v034) ;;
	v037) flags=(-modfile=go.v037.mod -tags=stockdra_v037) ;;
	*) die "STOCK_DRA_VERSION=$STOCK_DRA_VERSION: use v034 (go.mod) or v037 (go.v037.mod)" ;;
	esac
	mkdir -p "${out%/*}"
	(cd "$src" && GOWORK=off CGO_ENABLED=0 go build -trimpath "${flags[@]}" -o "$out" .) >&2 ||
		die "building compat/stockdriver ($STOCK_DRA_VERSION) failed (see above)"
	echo "$out"
}

# stockdriver_args I: the command-line flags of node I's stock-library driver:
# the directories of node I's kubelet and containerd, as the example driver's.
stockdriver_args() {
	local i=$1 ip nd
	ip=$(node_ip "$i") nd=$(node_dir "$i")
	printf '%s\n' --node-name="$ip" --devices="$STOCK_DRIVER_DEVICES" --kubeconfig="$PKI/draext-gpu.kubeconfig" \
		--cdi-dir="$nd/cdi" --plugin-data-dir="$nd/kubelet/plugins/$STOCK_DRIVER_NAME" \
		--registrar-dir="$nd/kubelet/plugins_registry" -v=2
}

phase_stockdriver() {
	local i ip bin args=()
	if [[ $STOCK_DRIVER != 1 ]]; then
		info "STOCK_DRIVER=$STOCK_DRIVER: no stock-library driver"
		return 0
	fi
	if [[ ${STOCK:-0} == 1 ]]; then
		info "stock Kubernetes binaries serve no resource.k8s.io/v1 and refuse extendedResourceName: no stock-library driver"
		return 0
	fi
	kubectl_ api-versions | grep -qx resource.k8s.io/v1 ||
		die "kube-apiserver does not serve resource.k8s.io/v1, through which the stock-library driver's DeviceClass is created" \
			"add resource.k8s.io/v1=true to its --runtime-config (phases/control-plane.sh), or STOCK_DRIVER=0"
	kubectl_ apply -f "$DRAEXT_ROOT/compat/stockdriver/deviceclass.yaml" >/dev/null ||
		die "applying the DeviceClass of compat/stockdriver/deviceclass.yaml failed"
	bin=$(stockdriver_build)
	for i in $(seq 1 "$NODES"); do
		mapfile -t args < <(stockdriver_args "$i")
		launch "stockdriver$i" -- "$bin" "${args[@]}"
	done
	for i in $(seq 1 "$NODES"); do
		ip=$(node_ip "$i")
		wait_for "ResourceSlice of $STOCK_DRIVER_NAME on node $ip" 60 kubectl_matches . get resourceslices --field-selector "spec.nodeName=$ip,spec.driver=$STOCK_DRIVER_NAME" -o name
		phase "node $ip: stock-library driver ($STOCK_DRA_VERSION) published $STOCK_DRIVER_DEVICES mock GPUs"
	done
}
