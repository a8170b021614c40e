// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package testselect

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// mapFS is a tree given as directory -> file names.
type mapFS map[string][]string

func (m mapFS) ReadDir(dir string) ([]string, error) {
	names, ok := m[dir]
	if !ok {
		return nil, os.ErrNotExist
	}
	return names, nil
}

func TestPackages(t *testing.T) {
	t.Parallel()
	tree := mapFS{
		"pkg":                                      {"OWNERS"},
		"pkg/features":                             {"kube_features.go", "kube_features_test.go"},
		"pkg/apis/resource":                        {"types.go"},
		"pkg/apis/resource/validation":             {"validation.go"},
		"pkg/apis/resource/validation/testdata":    {"gen.go", "case.yaml"},
		"api/openapi-spec":                         {"swagger.json"},
		"api/openapi-spec/v3":                      {"apis__resource.k8s.io__v1beta1_openapi.json"},
		"staging/src/k8s.io/api":                   {"roundtrip_test.go", "go.mod"},
		"staging/src/k8s.io/api/testdata/HEAD":     {"resource.k8s.io.v1beta1.DeviceClass.json"},
		"staging/src/k8s.io/api/resource/v1beta1":  {"types.go", "generated.proto"},
		"test/compatibility_lifecycle":             {"main.go"},
		"test/compatibility_lifecycle/reference":   {"versioned_feature_list.yaml"},
		"vendor/k8s.io/api/core/v1":                {"types.go"},
		"_output/local/go":                         {"x.go"},
		"hack/.descriptions_failures_dir/whatever": {"y.go"},
	}
	testCases := map[string]struct {
		files []string
		want  []string
	}{
		"go file belongs to its own package": {
			files: []string{"pkg/features/kube_features.go"},
			want:  []string{"./pkg/features"},
		},
		"several files of one package count once": {
			files: []string{"pkg/features/kube_features.go", "./pkg/features/kube_features_test.go"},
			want:  []string{"./pkg/features"},
		},
		"non-go file goes to the nearest enclosing package": {
			files: []string{"test/compatibility_lifecycle/reference/versioned_feature_list.yaml"},
			want:  []string{"./test/compatibility_lifecycle"},
		},
		"testdata is never a package itself": {
			files: []string{
				"staging/src/k8s.io/api/testdata/HEAD/resource.k8s.io.v1beta1.DeviceClass.json",
				"pkg/apis/resource/validation/testdata/case.yaml",
			},
			want: []string{"./pkg/apis/resource/validation", "./staging/src/k8s.io/api"},
		},
		"proto next to go files": {
			files: []string{"staging/src/k8s.io/api/resource/v1beta1/generated.proto"},
			want:  []string{"./staging/src/k8s.io/api/resource/v1beta1"},
		},
		"files outside any package are left out": {
			files: []string{"api/openapi-spec/v3/apis__resource.k8s.io__v1beta1_openapi.json", "CHANGELOG/CHANGELOG-1.33.md", "README.md"},
			want:  []string{},
		},
		"vendor, underscore and dot directories are ignored": {
			files: []string{"vendor/k8s.io/api/core/v1/types.go", "_output/local/go/x.go", "hack/.descriptions_failures_dir/whatever/y.go"},
			want:  []string{},
		},
		"sorted output": {
			files: []string{"test/compatibility_lifecycle/main.go", "pkg/features/kube_features.go", "pkg/apis/resource/types.go"},
			want:  []string{"./pkg/apis/resource", "./pkg/features", "./test/compatibility_lifecycle"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Packages(tree, tc.files)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Packages(%q) = %q, want %q", tc.files, got, tc.want)
			}
		})
	}
}

func TestOSFS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pkg", "a", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pkg", "a", "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Packages(OSFS(root), []string{"pkg/a/sub/data.json"})
	if want := []string{"./pkg/a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Packages = %q, want %q", got, want)
	}
}
