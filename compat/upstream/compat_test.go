// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package upstream checks wire compatibility of the draext API with stock
// upstream client types: k8s.io/api of releases that have KEP-5004 and
// resource.k8s.io/v1 natively. go.mod pins v0.34; go.v035.mod, go.v036.mod
// and go.v037.mod, used with -modfile, the newer minors (make test runs all).
//
//   - KEP-5004 fields (this file): DeviceClass v1beta1, v1beta2 and v1
//     spec.extendedResourceName and Pod status.extendedResourceClaimStatus
//     decode with the same JSON names and protobuf field numbers.
//   - resource.k8s.io/v1, draext to stock (v1_test.go): every kind, JSON
//     (strictly) and protobuf, decodes with stock types and gives back the
//     object draext wrote.
//   - resource.k8s.io/v1 kinds (kinds_test.go): the kinds of stock's scheme
//     that draext serves are the roots of the checks below; draext serves no
//     kind stock lacks; the stock kinds draext has no type for are listed
//     ($DRAEXT_COMPAT_REPORT).
//   - resource.k8s.io/v1 types (fields_test.go): every field of draext's
//     types.go is in stock with the same JSON and protobuf tags; the fields
//     only stock has are listed ($DRAEXT_COMPAT_REPORT).
//   - resource.k8s.io/v1 enum values (enums_test.go): every string constant
//     of draext's named types is a value stock declares for its type of the
//     same name; the values only stock has are listed ($DRAEXT_COMPAT_REPORT).
//   - resource.k8s.io/v1, stock to draext (reverse_test.go): random stock
//     objects, limited to the fields draext has, decode with draext's types
//     (compat/draextside, built on the exported staging modules) and give back
//     what stock wrote.
//   - the same with nothing left out (unpruned_test.go): from a full stock
//     object in protobuf, draext's types lose exactly the fields only stock
//     has; in JSON, strict decoding names exactly those as unknown.
//
// draext's side comes from two sources, each in JSON and protobuf: the API
// compatibility fixtures of the patched tree (staging/src/k8s.io/api/testdata/
// HEAD, every field filled by its round-trip tests), and objects as a patched
// kube-apiserver served them, saved by the series' integration test in
// $DRAEXT_WIRE_DIR.
package upstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// fixtureDir is where the patched tree keeps its HEAD fixtures.
func fixtureDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(kubeTree(t), "staging", "src", "k8s.io", "api", "testdata", "HEAD")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no fixtures of a patched tree at %s (run make patches-apply, or set KUBE_TREE): %v", dir, err)
	}
	return dir
}

// kind is one API kind whose KEP-5004 field is checked.
type kind struct {
	file string // <file>.json and <file>.pb
	gvk  schema.GroupVersionKind
	path []string // of the KEP-5004 field in the JSON object
}

var (
	deviceClassV1beta1 = kind{file: "resource.k8s.io.v1beta1.DeviceClass", gvk: resourcev1beta1.SchemeGroupVersion.WithKind("DeviceClass"), path: []string{"spec", "extendedResourceName"}}
	deviceClassV1beta2 = kind{file: "resource.k8s.io.v1beta2.DeviceClass", gvk: resourcev1beta2.SchemeGroupVersion.WithKind("DeviceClass"), path: []string{"spec", "extendedResourceName"}}
	deviceClassV1      = kind{file: "resource.k8s.io.v1.DeviceClass", gvk: resourcev1.SchemeGroupVersion.WithKind("DeviceClass"), path: []string{"spec", "extendedResourceName"}}
	pod                = kind{file: "core.v1.Pod", gvk: corev1.SchemeGroupVersion.WithKind("Pod"), path: []string{"status", "extendedResourceClaimStatus"}}
	// Gone from stock k8s.io/api v0.37: skipped there.
	podStatusResult = kind{file: "core.v1.PodStatusResult", gvk: corev1.SchemeGroupVersion.WithKind("PodStatusResult"), path: []string{"status", "extendedResourceClaimStatus"}}
)

// TestUpstreamClientsDecodeDraextFixtures decodes the API compatibility
// fixtures of the patched tree.
func TestUpstreamClientsDecodeDraextFixtures(t *testing.T) {
	dir := fixtureDir(t)
	for _, k := range []kind{deviceClassV1beta1, deviceClassV1beta2, deviceClassV1, pod, podStatusResult} {
		t.Run(k.file, func(t *testing.T) { checkDecodes(t, dir, k) })
	}
}

// TestUpstreamClientsDecodeObjectsServedByDraext decodes objects as a patched
// kube-apiserver served them: the integration test of the series saves them
// in $DRAEXT_WIRE_DIR (make test sets it).
func TestUpstreamClientsDecodeObjectsServedByDraext(t *testing.T) {
	dir := os.Getenv("DRAEXT_WIRE_DIR")
	if dir == "" {
		t.Skip("DRAEXT_WIRE_DIR is not set: run the series' integration test with it first (make test does)")
	}
	for _, k := range []kind{deviceClassV1beta1, deviceClassV1beta2, deviceClassV1, pod} {
		t.Run(k.file, func(t *testing.T) { checkDecodes(t, dir, k) })
	}
}

// checkDecodes decodes <dir>/<file>.json and .pb with upstream types and
// requires the KEP-5004 field to come out as it is in the JSON file.
func checkDecodes(t *testing.T, dir string, k kind) {
	scheme := newScheme(t)
	newObj := func() runtime.Object {
		obj, err := scheme.New(k.gvk)
		if runtime.IsNotRegisteredError(err) {
			t.Skipf("stock k8s.io/api %s has no %v", stockVersion(), k.gvk)
		}
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	jsonData, err := os.ReadFile(filepath.Join(dir, k.file+".json"))
	if err != nil {
		t.Fatal(err)
	}
	want := lookup(t, jsonData, k.path)
	if want == nil {
		t.Fatalf("%s.json has no %v: is the tree patched and regenerated?", k.file, k.path)
	}

	// JSON: decode with upstream types, encode again, same field.
	obj := newObj()
	if err := json.Unmarshal(jsonData, obj); err != nil {
		t.Fatalf("upstream types cannot decode %s.json: %v", k.file, err)
	}
	if got := lookup(t, mustMarshal(t, obj), k.path); !reflect.DeepEqual(got, want) {
		t.Errorf("JSON: upstream types decode %v as\n%v\nwant\n%v", k.path, got, want)
	}

	// Protobuf: the same object, decoded by field number with upstream types.
	pbData, err := os.ReadFile(filepath.Join(dir, k.file+".pb"))
	if err != nil {
		t.Fatal(err)
	}
	decoded, _, err := protobuf.NewSerializer(scheme, scheme).Decode(pbData, nil, newObj())
	if err != nil {
		t.Fatalf("upstream types cannot decode %s.pb: %v", k.file, err)
	}
	if got := lookup(t, mustMarshal(t, decoded), k.path); !reflect.DeepEqual(got, want) {
		t.Errorf("protobuf: upstream types decode %v as\n%v\nwant\n%v", k.path, got, want)
	}
}

func mustMarshal(t *testing.T, obj any) []byte {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// lookup returns the generic JSON value at path, or nil.
func lookup(t *testing.T, data []byte, path []string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}
