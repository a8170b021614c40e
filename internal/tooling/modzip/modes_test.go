// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package modzip

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRestoreExecBits(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := []struct {
		name    string
		content string
		mode    os.FileMode
		want    os.FileMode
	}{
		{name: "hack/update.sh", content: "#!/usr/bin/env bash\necho\n", mode: 0o644, want: 0o755},
		{name: "hack/lib/private.sh", content: "#!/bin/sh\n", mode: 0o600, want: 0o700},
		{name: "hack/lib/util.sh", content: "# sourced, no shebang\n", mode: 0o644, want: 0o644},
		{name: "pkg/x.go", content: "package x\n", mode: 0o644, want: 0o644},
		{name: "empty", content: "", mode: 0o644, want: 0o644},
		{name: "one-byte", content: "#", mode: 0o644, want: 0o644},
		{name: "already.sh", content: "#!/bin/sh\n", mode: 0o755, want: 0o755},
		{name: ".git/hooks/pre-commit.sample", content: "#!/bin/sh\n", mode: 0o644, want: 0o644},
	}
	for _, f := range files {
		p := filepath.Join(root, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	n, err := RestoreExecBits(root)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("changed %d files, want 2", n)
	}
	for _, f := range files {
		info, err := os.Stat(filepath.Join(root, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != f.want {
			t.Errorf("%s: mode %o, want %o", f.name, got, f.want)
		}
	}
}
