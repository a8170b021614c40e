# shellcheck shell=bash
# Copyright 2026 The draext Authors.
# SPDX-License-Identifier: Apache-2.0
# A Kubernetes release's source assembled from the Go module proxy: the main
# module k8s.io/kubernetes plus every staging module its go.mod replaces, as
# one git repository tagged with the release. make fetch uses it for the
# series' base (GIT_TAG), make build-upstream for stock releases of any minor.
# Needs common.sh, gomod.sh and series.sh.

# assemble_from_proxy TAG STAGING_VERSION DIR: the source of k8s.io/kubernetes
# at TAG, with its staging modules at STAGING_VERSION, into DIR (which must not
# exist). Writes DIR/.git-source-pending for commit_assembled.
assemble_from_proxy() {
	local tag=$1 staging_version=$2 dir=$3 dl main_json main_dir staging_json m dst sdir
	local -a staging args missing
	dl=$(mktemp -d)
	# go mod download needs a directory outside any module or workspace.
	download() { (cd "$dl" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$@"); }

	if ! main_json=$(download "k8s.io/kubernetes@$tag" 2>&1); then
		rm -rf "$dl"
		die "the Go module proxy has no k8s.io/kubernetes@$tag" \
			"$(grep -m1 '"Error"' <<<"$main_json" | sed 's/^[[:space:]]*//')" \
			"Is $tag a released Kubernetes version? Is the proxy reachable (GOPROXY=$(go env GOPROXY))?"
	fi
	main_dir=$(go_mod_json_dir "$main_json" k8s.io/kubernetes)
	[[ -d $main_dir ]] || die "go mod download gave no directory for k8s.io/kubernetes@$tag"
	cp -r "$main_dir" "$dir"
	chmod -R u+w "$dir"

	# Every staging module named in the main go.mod replace block.
	mapfile -t staging < <(awk '/^replace \(/ {r=1; next} r && /^\)/ {r=0} r && $3 ~ /^\.\/staging\/src\// {print $1}' "$dir/go.mod")
	[[ ${#staging[@]} -gt 0 ]] || die "found no staging modules in the replace block of k8s.io/kubernetes@$tag go.mod"
	args=()
	for m in "${staging[@]}"; do args+=("$m@$staging_version"); done
	staging_json=$(download "${args[@]}" 2>/dev/null) || true
	rm -rf "$dl"
	missing=()
	for m in "${staging[@]}"; do
		dst=$dir/staging/src/$m
		sdir=$(go_mod_json_dir "$staging_json" "$m")
		if [[ -n $sdir && -d $sdir ]]; then
			mkdir -p "$(dirname "$dst")"
			cp -r "$sdir" "$dst"
		elif [[ $m == k8s.io/sample-* ]]; then
			# Upstream does not publish the sample modules at every version; a
			# module stub keeps go.work valid, and nothing we build imports them.
			mkdir -p "$dst"
			printf 'module %s\n' "$m" >"$dst/go.mod"
			missing+=("$m")
		else
			die "the Go module proxy has no $m@$staging_version" "every staging module of $tag must be served; check GOPROXY ($(go env GOPROXY))"
		fi
	done
	chmod -R u+w "$dir/staging"
	[[ ${#missing[@]} -eq 0 ]] || info "not published at $staging_version, stubbed: ${missing[*]}"

	# What module zips leave out: exec bits and symlinks.
	info "$(series_tool fix-exec-bits "$dir")"
	if [[ -f $dir/build/root/Makefile && ! -e $dir/Makefile ]]; then
		ln -s build/root/Makefile "$dir/Makefile"
	fi
	echo "proxy k8s.io/kubernetes@$tag" >"$dir/.git-source-pending"
}

# commit_assembled DIR TAG: DIR as a git repository with one commit, tagged
# TAG, with a fixed identity and date: the same commit every time from the
# same source.
commit_assembled() {
	local dir=$1 tag=$2
	info "committing the tree and tagging it $tag"
	(
		export GIT_AUTHOR_NAME=draext GIT_AUTHOR_EMAIL=draext@localhost
		export GIT_COMMITTER_NAME=draext GIT_COMMITTER_EMAIL=draext@localhost
		export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
		git -C "$dir" init --quiet --initial-branch=upstream
		git -C "$dir" config core.autocrlf false
		# Take the files exactly as they are: no line-ending normalisation from the
		# tree's .gitattributes (module zips keep upstream's CRLF testdata as is).
		echo '* -text' >"$dir/.git/info/attributes"
		mv "$dir/.git-source-pending" "$dir/.git/draext-source"
		# -f: everything in the module is upstream content, even paths upstream's
		# .gitignore names (git tracks those upstream too).
		git -C "$dir" add -A -f .
		git -C "$dir" commit --quiet --no-verify -m "Kubernetes $tag (assembled from the Go module proxy)"
		git -C "$dir" tag "$tag"
	)
}
