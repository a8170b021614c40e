// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	sigsjson "sigs.k8s.io/json"
)

// v1Kinds are the kinds of resource.k8s.io/v1 that the patched tree has
// compatibility fixtures of and that the series' integration test saves as
// served.
var v1Kinds = []string{"DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice"}

// encoding is one of the two encodings the apiserver speaks to typed clients.
type encoding struct {
	ext    string // file name extension
	decode func(*runtime.Scheme, []byte) (runtime.Object, error)
}

var encodings = []encoding{
	{ext: "json", decode: decodeJSONStrict},
	{ext: "pb", decode: decodeProtobuf},
}

// TestStockDecodesDraextV1Fixtures: stock k8s.io/api decodes the patched
// tree's resource.k8s.io/v1 compatibility fixtures (every field set) and
// gives back, as JSON, exactly the object draext wrote.
func TestStockDecodesDraextV1Fixtures(t *testing.T) {
	testStockDecodesV1(t, fixtureDir(t))
}

// TestStockDecodesDraextV1Served: the same for the resource.k8s.io/v1
// objects a patched kube-apiserver served, saved by the series' integration
// test in $DRAEXT_WIRE_DIR (make test sets it).
func TestStockDecodesDraextV1Served(t *testing.T) {
	dir := os.Getenv("DRAEXT_WIRE_DIR")
	if dir == "" {
		t.Skip("DRAEXT_WIRE_DIR is not set: run the series' integration test with it first (make test does)")
	}
	testStockDecodesV1(t, dir)
}

// testStockDecodesV1 decodes resource.k8s.io.v1.<Kind>.json and .pb in dir
// with stock types: the JSON strictly (an unknown field fails), the protobuf
// with apimachinery's serializer. Both files hold the same object; encoded
// again as JSON, it must equal the .json file: a field that draext sends and
// stock drops, renames or misreads shows as a difference.
func testStockDecodesV1(t *testing.T, dir string) {
	scheme := newScheme(t)
	for _, kind := range v1Kinds {
		for _, enc := range encodings {
			t.Run(kind+"/"+enc.ext, func(t *testing.T) {
				base := filepath.Join(dir, "resource.k8s.io.v1."+kind)
				sent := readFile(t, base+".json")
				obj, err := enc.decode(scheme, readFile(t, base+"."+enc.ext))
				if err != nil {
					t.Fatalf("stock k8s.io/api %s cannot decode %s.%s: %v", stockVersion(), base, enc.ext, err)
				}
				if want := resourcev1.SchemeGroupVersion.WithKind(kind); obj.GetObjectKind().GroupVersionKind() != want {
					t.Fatalf("%s.%s decodes as %v, want %v", base, enc.ext, obj.GetObjectKind().GroupVersionKind(), want)
				}
				diffs, err := jsonDiff(sent, mustMarshal(t, obj))
				if err != nil {
					t.Fatal(err)
				}
				if len(diffs) > 0 {
					t.Errorf("stock k8s.io/api %s reads %s.%s otherwise than draext wrote it (sent: draext's %s.json; given back: stock's decoding, as JSON):\n  %s",
						stockVersion(), base, enc.ext, base, strings.Join(diffs, "\n  "))
				}
			})
		}
	}
}

// newScheme has the stock types the tests decode.
func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, resourcev1beta1.AddToScheme, resourcev1beta2.AddToScheme, resourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return scheme
}

// decodeJSONStrict decodes into the type that apiVersion and kind name, as
// the apiserver does with strict field validation: case-sensitive, and an
// unknown or duplicate field is an error.
//
// compat/draextside/main.go has the same function: the two modules build on
// different k8s.io/apimachinery (stock and draext's export), so they cannot
// share a package; keep both in step.
func decodeJSONStrict(scheme *runtime.Scheme, data []byte) (runtime.Object, error) {
	var typeMeta runtime.TypeMeta
	if err := json.Unmarshal(data, &typeMeta); err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	gv, err := schema.ParseGroupVersion(typeMeta.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("JSON: apiVersion: %w", err)
	}
	obj, err := scheme.New(gv.WithKind(typeMeta.Kind))
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("JSON, strict: %w", errors.Join(strictErrs...))
	}
	return obj, nil
}

// decodeProtobuf decodes a protobuf object in the apiserver's envelope
// ("k8s\x00", then apiVersion and kind) and sets apiVersion and kind from
// it, as the apiserver's codecs do.
func decodeProtobuf(scheme *runtime.Scheme, data []byte) (runtime.Object, error) {
	obj, gvk, err := protobuf.NewSerializer(scheme, scheme).Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("protobuf: %w", err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	return obj, nil
}

// encodeProtobuf encodes obj, apiVersion and kind set, in the envelope.
func encodeProtobuf(scheme *runtime.Scheme, obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(obj, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
