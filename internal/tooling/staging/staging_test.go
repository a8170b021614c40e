// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package staging

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeTree creates files (slash paths relative to root) with their content.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stagingTree is a small staging/src: api needs apimachinery, client-go
// needs both, dra needs client-go and kubelet; kubectl stands alone.
var stagingTree = map[string]string{
	"k8s.io/apimachinery/go.mod":    "module k8s.io/apimachinery\n\ngo 1.24\n",
	"k8s.io/apimachinery/a.go":      "package apimachinery\n",
	"k8s.io/api/go.mod":             "module k8s.io/api\n\ngo 1.24\n\nrequire k8s.io/apimachinery v0.33.13\n",
	"k8s.io/api/types.go":           "package api\n",
	"k8s.io/api/testdata/x.json":    "{}\n",
	"k8s.io/client-go/go.mod":       "module k8s.io/client-go\n\ngo 1.24\n\nrequire (\n\tk8s.io/api v0.33.13\n\tk8s.io/apimachinery v0.33.13\n\tk8s.io/klog/v2 v2.130.1\n)\n",
	"k8s.io/client-go/c.go":         "package clientgo\n",
	"k8s.io/kubelet/go.mod":         "module k8s.io/kubelet\n\ngo 1.24\n\nrequire k8s.io/apimachinery v0.33.13\n",
	"k8s.io/kubelet/k.go":           "package kubelet\n",
	"k8s.io/dra/go.mod":             "module k8s.io/dra\n\ngo 1.24\n\nrequire (\n\tk8s.io/client-go v0.33.13\n\tk8s.io/kubelet v0.33.13 // indirect\n)\n",
	"k8s.io/dra/d.go":               "package dra\n",
	"k8s.io/dra/nested/go.mod":      "module k8s.io/dra/nested\n",
	"k8s.io/dra/nested/n.go":        "package nested\n",
	"k8s.io/dra/vendor/v/v.go":      "package v\n",
	"k8s.io/kubectl/go.mod":         "module k8s.io/kubectl\n\ngo 1.24\n",
	"k8s.io/wrongname/go.mod":       "module k8s.io/othername\n",
	"k8s.io/wrongname/w.go":         "package w\n",
	"k8s.io/brokenmod/go.mod":       "module k8s.io/brokenmod\nrequire (\n",
	"k8s.io/dependsonbroken/go.mod": "module k8s.io/dependsonbroken\nrequire k8s.io/brokenmod v0.33.13\n",
}

func TestClosure(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, stagingTree)
	testCases := map[string]struct {
		roots   []string
		want    []string
		wantErr string
	}{
		"leaf":                      {roots: []string{"k8s.io/apimachinery"}, want: []string{"k8s.io/apimachinery"}},
		"direct requirement":        {roots: []string{"k8s.io/api"}, want: []string{"k8s.io/api", "k8s.io/apimachinery"}},
		"indirect and non-staging":  {roots: []string{"k8s.io/dra"}, want: []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/dra", "k8s.io/kubelet"}},
		"several roots count once":  {roots: []string{"k8s.io/api", "k8s.io/client-go", "k8s.io/kubectl"}, want: []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/kubectl"}},
		"unknown root":              {roots: []string{"k8s.io/nosuch"}, wantErr: "k8s.io/nosuch is not a staging module"},
		"go.mod names another path": {roots: []string{"k8s.io/wrongname"}, wantErr: "does not declare module k8s.io/wrongname"},
		"unparsable requirement":    {roots: []string{"k8s.io/dependsonbroken"}, wantErr: "brokenmod/go.mod"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := Closure(src, tc.roots)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Closure(%q) error = %v, want one containing %q", tc.roots, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Closure(%q) = %q, want %q", tc.roots, got, tc.want)
			}
		})
	}
}

func TestExport(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, stagingTree)
	stamp := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	const version = "v0.33.13-draext.1"

	export := func(proxy string) []string {
		t.Helper()
		sums, err := Export(proxy, src, "k8s.io/dra", version, stamp)
		if err != nil {
			t.Fatal(err)
		}
		return sums
	}
	proxy1, proxy2 := t.TempDir(), t.TempDir()
	sums1 := export(proxy1)
	sums2 := export(proxy2)
	// Exporting again into the same proxy replaces the files.
	if again := export(proxy1); !reflect.DeepEqual(again, sums1) {
		t.Errorf("second export into the same proxy gave %q, first %q", again, sums1)
	}

	vDir := filepath.Join(proxy1, "k8s.io", "dra", "@v")
	for _, ext := range []string{".zip", ".mod", ".info"} {
		a, err := os.ReadFile(filepath.Join(vDir, version+ext))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(proxy2, "k8s.io", "dra", "@v", version+ext))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two exports of the same sources", ext)
		}
	}
	if !reflect.DeepEqual(sums1, sums2) {
		t.Errorf("go.sum lines differ between two exports: %q and %q", sums1, sums2)
	}
	if len(sums1) != 2 || !strings.HasPrefix(sums1[0], "k8s.io/dra "+version+" h1:") || !strings.HasPrefix(sums1[1], "k8s.io/dra "+version+"/go.mod h1:") {
		t.Errorf("go.sum lines %q", sums1)
	}

	list, err := os.ReadFile(filepath.Join(vDir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != version+"\n" {
		t.Errorf("@v/list = %q, want the version once", list)
	}
	mod, err := os.ReadFile(filepath.Join(vDir, version+".mod"))
	if err != nil {
		t.Fatal(err)
	}
	if string(mod) != stagingTree["k8s.io/dra/go.mod"] {
		t.Errorf(".mod = %q, want the module's go.mod", mod)
	}
	var info Info
	data, err := os.ReadFile(filepath.Join(vDir, version+".info"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &info); err != nil {
		t.Fatal(err)
	}
	if info.Version != version || !info.Time.Equal(stamp) {
		t.Errorf(".info = %+v", info)
	}

	// The zip has the module's files only: no nested module, no vendor.
	zipData, err := os.ReadFile(filepath.Join(vDir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"k8s.io/dra@" + version + "/go.mod", "k8s.io/dra@" + version + "/d.go"} {
		if !bytes.Contains(zipData, []byte(want)) {
			t.Errorf("zip lacks %s", want)
		}
	}
	for _, unwanted := range []string{"nested/n.go", "vendor/v/v.go"} {
		if bytes.Contains(zipData, []byte(unwanted)) {
			t.Errorf("zip contains %s", unwanted)
		}
	}

	// Other versions already in the list stay there.
	if _, err := Export(proxy1, src, "k8s.io/dra", "v0.33.13-draext.2", stamp); err != nil {
		t.Fatal(err)
	}
	list, err = os.ReadFile(filepath.Join(vDir, "list"))
	if err != nil {
		t.Fatal(err)
	}
	if string(list) != version+"\nv0.33.13-draext.2\n" {
		t.Errorf("@v/list = %q, want both versions", list)
	}
}

func TestExportRejectsBadVersions(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, stagingTree)
	for _, v := range []string{"0.33.13", "v0.33", "v2.0.0"} {
		if _, err := Export(t.TempDir(), src, "k8s.io/api", v, time.Time{}); err == nil {
			t.Errorf("Export with version %q succeeded", v)
		}
	}
}
