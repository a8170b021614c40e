// Package upstream checks wire compatibility of the draext API additions with
// stock upstream client types: objects serialized by the patched v1.33 types
// must decode with k8s.io/api of a release that has KEP-5004 natively, with
// the same JSON names and protobuf field numbers.
//
// The objects are the API compatibility fixtures of the patched tree
// (staging/src/k8s.io/api/testdata/HEAD), which its own round-trip tests
// produce with every field filled. Each kind has a .json and a .pb encoding
// of the same object.
package upstream

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// fixtureDir is where the patched tree keeps its HEAD fixtures.
func fixtureDir(t *testing.T) string {
	t.Helper()
	tree := os.Getenv("KUBE_TREE")
	if tree == "" {
		tree = filepath.Join("..", "..", "_output", "kubernetes")
	}
	dir := filepath.Join(tree, "staging", "src", "k8s.io", "api", "testdata", "HEAD")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no fixtures of a patched tree at %s (run make patches-apply, or set KUBE_TREE): %v", dir, err)
	}
	return dir
}

func TestUpstreamClientsDecodeDraextObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, resourcev1beta1.AddToScheme, resourcev1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	pb := protobuf.NewSerializer(scheme, scheme)
	dir := fixtureDir(t)

	testCases := []struct {
		fixture string
		newObj  func() runtime.Object
		// path of the KEP-5004 field in the JSON object
		path []string
	}{
		{fixture: "resource.k8s.io.v1beta1.DeviceClass", newObj: func() runtime.Object { return &resourcev1beta1.DeviceClass{} }, path: []string{"spec", "extendedResourceName"}},
		{fixture: "resource.k8s.io.v1beta2.DeviceClass", newObj: func() runtime.Object { return &resourcev1beta2.DeviceClass{} }, path: []string{"spec", "extendedResourceName"}},
		{fixture: "core.v1.Pod", newObj: func() runtime.Object { return &corev1.Pod{} }, path: []string{"status", "extendedResourceClaimStatus"}},
		{fixture: "core.v1.PodStatusResult", newObj: func() runtime.Object { return &corev1.PodStatusResult{} }, path: []string{"status", "extendedResourceClaimStatus"}},
	}
	for _, tc := range testCases {
		t.Run(tc.fixture, func(t *testing.T) {
			jsonData, err := os.ReadFile(filepath.Join(dir, tc.fixture+".json"))
			if err != nil {
				t.Fatal(err)
			}
			want := lookup(t, jsonData, tc.path)
			if want == nil {
				t.Fatalf("the fixture has no %v: is the tree patched and regenerated?", tc.path)
			}

			// JSON: decode with upstream types, encode again, same field.
			obj := tc.newObj()
			if err := json.Unmarshal(jsonData, obj); err != nil {
				t.Fatalf("upstream types cannot decode the JSON fixture: %v", err)
			}
			if got := lookup(t, mustMarshal(t, obj), tc.path); !reflect.DeepEqual(got, want) {
				t.Errorf("JSON: upstream types decode %v as\n%v\nwant\n%v", tc.path, got, want)
			}

			// Protobuf: the same object, decoded by field number with upstream types.
			pbData, err := os.ReadFile(filepath.Join(dir, tc.fixture+".pb"))
			if err != nil {
				t.Fatal(err)
			}
			decoded, _, err := pb.Decode(pbData, nil, tc.newObj())
			if err != nil {
				t.Fatalf("upstream types cannot decode the protobuf fixture: %v", err)
			}
			if got := lookup(t, mustMarshal(t, decoded), tc.path); !reflect.DeepEqual(got, want) {
				t.Errorf("protobuf: upstream types decode %v as\n%v\nwant\n%v", tc.path, got, want)
			}
		})
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
