// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package staging exports the k8s.io staging modules of a patched Kubernetes
// tree as Go module versions into a file-based module proxy (the layout that
// GOPROXY=file://DIR reads: <module>/@v/list, <version>.info, .mod and .zip).
//
// The export is reproducible: the same sources and version give the same zip
// bytes, and so the same go.sum hashes.
package staging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Closure returns the module paths of roots and of every staging module that
// they require, directly or not, sorted. srcDir is the tree's staging/src
// directory: module k8s.io/x is a staging module when srcDir/k8s.io/x/go.mod
// exists. A root that is not a staging module is an error.
func Closure(srcDir string, roots []string) ([]string, error) {
	seen := map[string]bool{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
		if !isStaging(srcDir, r) {
			return nil, fmt.Errorf("%s is not a staging module: %s does not exist", r, filepath.Join(srcDir, filepath.FromSlash(r), "go.mod"))
		}
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] {
			continue
		}
		seen[path] = true
		mf, err := readModFile(srcDir, path)
		if err != nil {
			return nil, err
		}
		for _, req := range mf.Require {
			if p := req.Mod.Path; !seen[p] && isStaging(srcDir, p) {
				queue = append(queue, p)
			}
		}
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths, nil
}

func isStaging(srcDir, path string) bool {
	if module.CheckPath(path) != nil {
		return false
	}
	_, err := os.Stat(filepath.Join(srcDir, filepath.FromSlash(path), "go.mod"))
	return err == nil
}

func readModFile(srcDir, path string) (*modfile.File, error) {
	name := filepath.Join(srcDir, filepath.FromSlash(path), "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	mf, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return nil, err
	}
	if mf.Module == nil || mf.Module.Mod.Path != path {
		return nil, fmt.Errorf("%s does not declare module %s", name, path)
	}
	return mf, nil
}

// Info is the content of a <version>.info file.
type Info struct {
	Version string
	Time    time.Time
}

// Export writes the staging module path at version from srcDir into the
// module proxy at proxyDir and returns its two go.sum lines (zip and go.mod
// hashes). The version is added to <module>/@v/list.
func Export(proxyDir, srcDir, path, version string, t time.Time) ([]string, error) {
	if err := module.Check(path, version); err != nil {
		return nil, err
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return nil, err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return nil, err
	}
	modDir := filepath.Join(srcDir, filepath.FromSlash(path))
	vDir := filepath.Join(proxyDir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vDir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(vDir, escVersion)

	var zipBuf bytes.Buffer
	if err := modzip.CreateFromDir(&zipBuf, module.Version{Path: path, Version: version}, modDir); err != nil {
		return nil, fmt.Errorf("zip %s: %w", path, err)
	}
	if err := writeFile(base+".zip", zipBuf.Bytes()); err != nil {
		return nil, err
	}
	goMod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return nil, err
	}
	if err := writeFile(base+".mod", goMod); err != nil {
		return nil, err
	}
	info, err := json.Marshal(Info{Version: version, Time: t.UTC()})
	if err != nil {
		return nil, err
	}
	if err := writeFile(base+".info", append(info, '\n')); err != nil {
		return nil, err
	}
	if err := addToList(filepath.Join(vDir, "list"), version); err != nil {
		return nil, err
	}

	zipHash, err := dirhash.HashZip(base+".zip", dirhash.Hash1)
	if err != nil {
		return nil, err
	}
	modHash, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(goMod)), nil
	})
	if err != nil {
		return nil, err
	}
	return []string{
		fmt.Sprintf("%s %s %s", path, version, zipHash),
		fmt.Sprintf("%s %s/go.mod %s", path, version, modHash),
	}, nil
}

// writeFile replaces name with data, through a temporary file in the same
// directory, so that a reader never sees half a file.
func writeFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// addToList adds version to the @v/list file, one version per line, sorted.
func addToList(name, version string) error {
	data, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	versions := map[string]bool{version: true}
	for _, v := range strings.Fields(string(data)) {
		versions[v] = true
	}
	list := make([]string, 0, len(versions))
	for v := range versions {
		list = append(list, v)
	}
	sort.Strings(list)
	return writeFile(name, []byte(strings.Join(list, "\n")+"\n"))
}
