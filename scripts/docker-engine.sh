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
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DDIR=$OUTPUT_DIR/docker
RUN=/run/draext-docker
SOCK=$RUN/docker.sock
export DOCKER_HOST=unix://$SOCK

own_alive() { # NAME
	local pid
	pid=$(cat "$DDIR/$1.pid" 2>/dev/null) || return 1
	[[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -e "$RUN" -e "$DDIR"
}
foreign_docker() { [[ ! -S $SOCK ]] && env -u DOCKER_HOST docker info >/dev/null 2>&1; }

case ${1:-} in
env)
	if own_alive dockerd; then echo "$DOCKER_HOST"; fi
	;;
up)
	if foreign_docker; then
		info "using the running Docker engine ($(env -u DOCKER_HOST docker info --format '{{.ServerVersion}}'))"
		exit 0
	fi
	if own_alive dockerd; then
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
	setsid containerd --config "$DDIR/containerd.toml" >"$DDIR/containerd.log" 2>&1 </dev/null &
	echo $! >"$DDIR/containerd.pid"
	for _ in $(seq 1 50); do [[ -S $RUN/containerd.sock ]] && break; sleep 0.2; done
	[[ -S $RUN/containerd.sock ]] || { tail -5 "$DDIR/containerd.log" >&2; die "containerd for Docker did not start"; }
	HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY='' setsid dockerd \
		--host "$DOCKER_HOST" --containerd "$RUN/containerd.sock" --exec-root "$RUN/exec" \
		--pidfile "$RUN/dockerd.pid" --data-root /var/lib/docker \
		--bridge=none --iptables=false --ip-forward=false --ip-masq=false \
		--exec-opt native.cgroupdriver=cgroupfs \
		--add-runtime "capfilter=$DRAEXT_ROOT/kind/runc-capfilter" --default-runtime capfilter \
		>"$DDIR/dockerd.log" 2>&1 </dev/null &
	echo $! >"$DDIR/dockerd.pid"
	for _ in $(seq 1 100); do docker info >/dev/null 2>&1 && break; sleep 0.3; done
	docker info >/dev/null 2>&1 || { tail -10 "$DDIR/dockerd.log" >&2; die "dockerd did not start (log: ${DDIR#"$DRAEXT_ROOT"/}/dockerd.log)"; }
	log "Docker engine $(docker info --format '{{.ServerVersion}}') on $DOCKER_HOST (stop: make docker-down)"
	;;
down)
	for name in dockerd containerd; do
		own_alive "$name" || { rm -f "$DDIR/$name.pid"; continue; }
		pid=$(cat "$DDIR/$name.pid")
		# It may exit on its own between the check and the signal: not an error.
		send_signal TERM "$pid"
		for _ in $(seq 1 75); do own_alive "$name" || break; sleep 0.2; done
		if own_alive "$name"; then
			warn "$name (pid $pid) ignored SIGTERM; killing it"
			send_signal KILL "$pid"
		fi
		rm -f "$DDIR/$name.pid"
		info "stopped $name"
	done
	# Mounts dockerd leaves under its exec root, and the shims of leftover containers.
	for p in $(pgrep -f "containerd-shim.*-address $RUN/containerd.sock" || true); do send_signal KILL "$p"; done
	findmnt -rn -o TARGET | grep "^$RUN" | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm -rf "$RUN"
	;;
*) die "usage: docker-engine.sh up|down|env" ;;
esac
