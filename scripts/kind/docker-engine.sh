#!/usr/bin/env bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# docker-engine.sh up|down|env: a Docker engine for the kind targets on a
# machine without one (this project's offline default). "up" installs
# Debian's docker.io if needed and starts its own containerd and dockerd by
# hand (no systemd here) on a private socket, with the runc wrapper in
# kind/runc-capfilter as default runtime (privileged containers fail where
# the capability bounding set lacks CAP_SYS_RESOURCE) and an unreachable
# proxy, so nothing is ever pulled. "down" stops exactly those processes.
# "env" prints the DOCKER_HOST to use. When a working Docker is already
# there (docker info succeeds), up and down leave it alone and env is empty.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/proc.sh"

DDIR=$OUTPUT_DIR/docker
RUN=/run/draext-docker
SOCK=$RUN/docker.sock
export DOCKER_HOST=unix://$SOCK
# Its containerd and dockerd are kept by scripts/lib/proc.sh, in DDIR.
PROC_DIR=$DDIR
foreign_docker() { [[ ! -S $SOCK ]] && env -u DOCKER_HOST docker info >/dev/null 2>&1; }

case ${1:-} in
env)
	if proc_alive dockerd; then echo "$DOCKER_HOST"; fi
	;;
up)
	if foreign_docker; then
		info "using the running Docker engine ($(env -u DOCKER_HOST docker info --format '{{.ServerVersion}}'))"
		exit 0
	fi
	if proc_alive dockerd; then
		info "draext's Docker engine is running ($DOCKER_HOST)"
		exit 0
	fi
	[[ $(id -u) == 0 ]] || die "starting a Docker engine needs root"
	if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
		log "installing Debian's docker.io and debootstrap"
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			docker.io debootstrap >/dev/null || die "apt-get install docker.io debootstrap failed"
	fi
	mkdir -p "$DDIR" "$RUN"
	cat >"$DDIR/containerd.toml" <<TOML
version = 2
root = "/var/lib/draext-docker/containerd"
state = "$RUN/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$RUN/containerd.sock"
TOML
	proc_define containerd --ready test -S "$RUN/containerd.sock" -- \
		"$(command -v containerd)" --config "$DDIR/containerd.toml"
	proc_start containerd
	proc_wait containerd 10
	proc_define dockerd --ready env DOCKER_HOST="$DOCKER_HOST" docker info -- \
		env HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY='' "$(command -v dockerd)" \
		--host "$DOCKER_HOST" --containerd "$RUN/containerd.sock" --exec-root "$RUN/exec" \
		--pidfile "$RUN/dockerd.pid" --data-root /var/lib/docker \
		--bridge=none --iptables=false --ip-forward=false --ip-masq=false \
		--exec-opt native.cgroupdriver=cgroupfs \
		--add-runtime "capfilter=$DRAEXT_ROOT/kind/runc-capfilter" --default-runtime capfilter
	proc_start dockerd
	proc_wait dockerd 30 containerd
	log "Docker engine $(docker info --format '{{.ServerVersion}}') on $DOCKER_HOST (stop: make docker-down)"
	;;
down)
	for name in dockerd containerd; do
		proc_stop "$name"
	done
	# Mounts dockerd leaves under its exec root, and the shims of leftover containers.
	for p in $(pgrep -f "containerd-shim.*-address $RUN/containerd.sock" || true); do send_signal KILL "$p"; done
	findmnt -rn -o TARGET | grep "^$RUN" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$RUN"
	;;
*) die "usage: docker-engine.sh up|down|env" ;;
esac
