// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for name, content := range map[string]string{
		"k8s.io/apimachinery/go.mod": "module k8s.io/apimachinery\n",
		"k8s.io/apimachinery/a.go":   "package apimachinery\n",
		"k8s.io/api/go.mod":          "module k8s.io/api\n\nrequire k8s.io/apimachinery v0.33.13\n",
		"k8s.io/api/b.go":            "package api\n",
	} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	sums := filepath.Join(t.TempDir(), "sub", "go.sum")
	flags := []string{"-out", out, "-version", "v0.33.13-draext.1", "-time", "2026-11-30T00:00:00Z"}

	testCases := map[string]struct {
		args    []string
		want    string
		wantErr string
	}{
		"export with closure": {
			args: append(append([]string{"export"}, flags...), "-sums", sums, src, "k8s.io/api"),
			want: "k8s.io/api v0.33.13-draext.1\nk8s.io/apimachinery v0.33.13-draext.1\n",
		},
		"no command":        {wantErr: "missing command"},
		"unknown command":   {args: []string{"import"}, wantErr: `unknown command "import"`},
		"missing modules":   {args: append(append([]string{"export"}, flags...), src), wantErr: "at least one MODULE"},
		"bad time":          {args: []string{"export", "-out", out, "-version", "v0.33.13-draext.1", "-time", "yesterday", src, "k8s.io/api"}, wantErr: "-time"},
		"not staging":       {args: append(append([]string{"export"}, flags...), src, "k8s.io/nosuch"), wantErr: "not a staging module"},
		"unknown flag":      {args: []string{"export", "-frob"}, wantErr: "flag provided but not defined"},
		"version not valid": {args: []string{"export", "-out", out, "-version", "v0.33", "-time", "2026-11-30T00:00:00Z", src, "k8s.io/api"}, wantErr: "v0.33"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := run(tc.args, &stdout)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("run(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if stdout.String() != tc.want {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.want)
			}
		})
	}
	data, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "k8s.io/api v0.33.13-draext.1 h1:") {
		t.Errorf("go.sum lines:\n%s", data)
	}
}
