// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package testselect

import (
	"os"
	"path"
	"sort"
	"strings"
)

// FS is the little a package lookup needs from a source tree.
type FS interface {
	// ReadDir lists the file names directly inside dir ("." is the root).
	ReadDir(dir string) ([]string, error)
}

// OSFS reads a tree rooted at a directory on disk.
type OSFS string

// ReadDir implements FS.
func (root OSFS) ReadDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(path.Join(string(root), dir))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Packages maps files changed by the series (paths relative to the tree root,
// as `git diff --name-only` prints them) to the Go package directories whose
// tests cover them, as "./dir" patterns for `go test`.
//
// A changed .go file belongs to its own directory. Any other file (a fixture,
// a YAML list, a .proto) belongs to the nearest enclosing directory that is a
// Go package: for example staging/src/k8s.io/api/testdata/HEAD/x.json is
// covered by the round-trip tests in staging/src/k8s.io/api. Directories that
// the go tool ignores (testdata, vendor, names starting with "_" or ".") are
// never packages themselves. Files outside any package are left out.
func Packages(fsys FS, files []string) []string {
	seen := map[string]bool{}
	cache := map[string]bool{}
	for _, f := range files {
		f = path.Clean(strings.TrimPrefix(f, "./"))
		if f == "." || strings.HasPrefix(f, "../") {
			continue
		}
		for dir := path.Dir(f); dir != "."; dir = path.Dir(dir) {
			if ignoredByGo(dir) {
				continue
			}
			if isPackage(fsys, dir, cache) {
				seen["./"+dir] = true
				break
			}
		}
	}
	pkgs := make([]string, 0, len(seen))
	for p := range seen {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return pkgs
}

// ignoredByGo reports whether the go tool skips p when matching "./...":
// any element named testdata or vendor, or starting with "." or "_".
func ignoredByGo(p string) bool {
	for _, elem := range strings.Split(p, "/") {
		if elem == "testdata" || elem == "vendor" || strings.HasPrefix(elem, ".") || strings.HasPrefix(elem, "_") {
			return true
		}
	}
	return false
}

func isPackage(fsys FS, dir string, cache map[string]bool) bool {
	if v, ok := cache[dir]; ok {
		return v
	}
	names, err := fsys.ReadDir(dir)
	v := false
	if err == nil {
		for _, n := range names {
			if strings.HasSuffix(n, ".go") && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
				v = true
				break
			}
		}
	}
	cache[dir] = v
	return v
}
