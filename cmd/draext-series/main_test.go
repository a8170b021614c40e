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
	dir := t.TempDir()
	for name, content := range map[string]string{"GIT_TAG": "v1.33.13\n", "RELEASE": "4\n", "series": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sumsDir := t.TempDir()
	for name, content := range map[string]string{"GIT_TAG": "v1.33.13\n", "RELEASE": "1\n", "series": ""} {
		if err := os.WriteFile(filepath.Join(sumsDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	badDir := t.TempDir()
	for name, content := range map[string]string{"GIT_TAG": "v1.33.13\n", "RELEASE": "0\n"} {
		if err := os.WriteFile(filepath.Join(badDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testCases := map[string]struct {
		args    []string
		stdin   string
		want    string
		wantErr string
	}{
		"version":                   {args: []string{"version", dir}, want: "v1.33.13-draext.4\n"},
		"version rejects RELEASE 0": {args: []string{"version", badDir}, wantErr: `"0" must be a positive integer`},
		"staging version":           {args: []string{"staging-version", "v1.33.13"}, want: "v0.33.13\n"},
		"unknown tag":               {args: []string{"staging-version", "v1.33"}, wantErr: "not a Kubernetes release tag"},
		"packages from stdin":       {args: []string{"packages", dir}, stdin: "README.md\n\n", want: ""},
		"guards from stdin": {
			args: []string{"guards"}, stdin: "README.md\npkg/apis/core/types.go\n",
			want: "# API types, conversions or generated API code (pkg/apis/core/types.go)\n./pkg/api/testing\n./staging/src/k8s.io/api\n",
		},
		"lint needs checksums": {args: []string{"lint", dir}, wantErr: "SHA256SUMS"},
		"write-sums":           {args: []string{"write-sums", sumsDir}, want: ""},
		"missing argument":     {args: []string{"lint"}, wantErr: "lint takes 1 argument(s), got 0"},
		"unknown command":      {args: []string{"frobnicate"}, wantErr: `unknown command "frobnicate"`},
		"no command":           {args: nil, wantErr: "missing command"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(tc.args, strings.NewReader(tc.stdin), &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("run(%q) error = %v, want one containing %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("run(%q): %v", tc.args, err)
			}
			if out.String() != tc.want {
				t.Errorf("run(%q) printed %q, want %q", tc.args, out.String(), tc.want)
			}
		})
	}
}
