// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"
)

const (
	// reverseSeed makes the random objects the same in every run (for one
	// stock version: its types decide how the values are drawn).
	reverseSeed = 5004
	// reverseSamples random objects of each type are sent: the first with
	// every field set and two items in every list and map, the others with
	// the odds of upstream's round-trip tests (half of the optional fields
	// unset, zero or one item).
	reverseSamples = 4
	// draextsideDir is the module that decodes with draext's types.
	draextsideDir = "../draextside"
)

// TestDraextDecodesStockV1: random objects of every resource.k8s.io/v1 kind
// that stock k8s.io/api and draext both serve (TestV1Kinds), limited to the
// fields draext has (the others unset, see TestV1FieldsMatchStock), encoded
// by stock as JSON and protobuf, decode with draext's types
// (compat/draextside, strictly for JSON) and give back, as JSON, exactly what
// stock wrote.
//
// draext's types come from the exported staging modules: run it under
// staging_env (scripts/lib/staging.sh) after make staging, as make test does.
// DRAEXT_COMPAT_FORWARD_ONLY=1 leaves it out.
func TestDraextDecodesStockV1(t *testing.T) {
	m, scheme, in, out := reverseSetup(t)

	type sample struct{ name, json string }
	var samples []sample
	for _, root := range m.roots {
		for i := range reverseSamples {
			obj := reflect.New(root).Interface().(runtime.Object)
			newFiller(scheme, reverseSeed+int64(i), i == 0).Fill(obj)
			m.prune(reflect.ValueOf(obj).Elem())
			obj.GetObjectKind().SetGroupVersionKind(resourcev1.SchemeGroupVersion.WithKind(root.Name()))
			jsonData := mustMarshal(t, obj)
			pbData, err := encodeProtobuf(scheme, obj)
			if err != nil {
				t.Fatalf("stock k8s.io/api %s cannot encode a random %s as protobuf: %v", stockVersion(), root.Name(), err)
			}
			name := fmt.Sprintf("%s-%d", root.Name(), i)
			for ext, data := range map[string][]byte{"json": jsonData, "pb": pbData} {
				if err := os.WriteFile(filepath.Join(in, name+"."+ext), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			samples = append(samples, sample{name: name, json: string(jsonData)})
		}
	}

	runDraextside(t, in, out)

	for _, s := range samples {
		for _, enc := range encodings {
			t.Run(s.name+"/"+enc.ext, func(t *testing.T) {
				sent := filepath.Join(in, s.name+"."+enc.ext)
				if why, err := os.ReadFile(filepath.Join(out, s.name+"."+enc.ext+".err")); err == nil {
					t.Fatalf("draext's types cannot decode %s, written by stock k8s.io/api %s: %s", filepath.Base(sent), stockVersion(), strings.TrimSpace(string(why)))
				}
				back, err := os.ReadFile(filepath.Join(out, s.name+"."+enc.ext+".json"))
				if err != nil {
					t.Fatalf("compat/draextside wrote nothing for %s: %v", filepath.Base(sent), err)
				}
				diffs, err := jsonDiff([]byte(s.json), back)
				if err != nil {
					t.Fatal(err)
				}
				if len(diffs) > 0 {
					t.Errorf("draext's types read %s, written by stock k8s.io/api %s, otherwise (sent: stock's object as JSON; given back: draext's decoding, as JSON):\n  %s",
						filepath.Base(sent), stockVersion(), strings.Join(diffs, "\n  "))
				}
			})
		}
	}
}

// reverseSetup is what the tests that let draext's types decode stock
// objects share: it skips under DRAEXT_COMPAT_FORWARD_ONLY=1 and returns the
// manifest, stock's scheme, and the directories that compat/draextside
// reads (in, created) and writes (out).
func reverseSetup(t *testing.T) (*manifest, *runtime.Scheme, string, string) {
	t.Helper()
	if os.Getenv("DRAEXT_COMPAT_FORWARD_ONLY") == "1" {
		t.Skip("DRAEXT_COMPAT_FORWARD_ONLY=1: draext's types do not decode stock objects in this run")
	}
	in, out := filepath.Join(t.TempDir(), "in"), filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	return loadManifest(t), newScheme(t), in, out
}

// newFiller is the filler of upstream's round-trip tests (apimachinery's
// fuzzer with the funcs of metav1) with a fixed seed; full sets every
// optional field, *metav1.Time ones included, and puts two items in every
// list and map.
func newFiller(scheme *runtime.Scheme, seed int64, full bool) *randfill.Filler {
	fill := []any{
		// Opaque parameters are JSON objects; the stock filler makes
		// them metav1 objects through a codec this scheme lacks.
		func(r *runtime.RawExtension, c randfill.Continue) {
			r.Raw = fmt.Appendf(nil, `{"apiVersion":"example.com/v1","kind":"CustomType","spec":{"replicas":%d}}`, c.Int31())
		},
	}
	if full {
		// A *metav1.Time field stays nil otherwise: randfill finds the
		// nil pointer a SimpleSelfFiller and calls its RandFill, which
		// has nothing to fill. Only for full objects, so that the random
		// ones stay as they were drawn before.
		fill = append(fill, func(p **metav1.Time, c randfill.Continue) {
			c.FillNoCustom(p) // a new Time, filled with a random time
		})
	}
	funcs := fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, func(serializer.CodecFactory) []any { return fill })
	f := fuzzer.FuzzerFor(funcs, rand.NewSource(seed), serializer.NewCodecFactory(scheme))
	if full {
		f.NilChance(0).NumElements(2, 2)
	}
	return f
}

// prune unsets, in the stock object v, the fields draext's types do not
// have, so that both sides can give back the same object.
func (m *manifest) prune(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			m.prune(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			m.prune(v.Index(i))
		}
	case reflect.Map:
		for _, key := range v.MapKeys() {
			elem := reflect.New(v.Type().Elem()).Elem()
			elem.Set(v.MapIndex(key))
			m.prune(elem)
			v.SetMapIndex(key, elem)
		}
	case reflect.Struct:
		p, ok := m.byStock[v.Type()]
		if !ok {
			return // a type of another package: not compared, sent as filled
		}
		for i := range v.NumField() {
			if p.keep[i] {
				m.prune(v.Field(i))
			} else {
				v.Field(i).SetZero()
			}
		}
	}
}

// runDraextside runs compat/draextside on the files in in, writing to out.
// It builds on the exported staging modules; when go cannot build it, the
// test fails and says how to run it.
func runDraextside(t *testing.T, in, out string) {
	t.Helper()
	cmd := exec.Command("go", "run", ".", "-in", in, "-out", out)
	cmd.Dir = draextsideDir
	cmd.Env = append(draextsideEnv(os.Environ()), "GOWORK=off")
	output, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return
	case !errors.As(err, &exitErr):
		t.Fatalf("cannot run go in compat/draextside: %v", err)
	}
	hint := "compat/draextside builds on the staging modules that make staging exports. Check that\n" +
		"- the test runs under staging_env after make staging, as make test does; in compat/upstream:\n" +
		"    bash -c 'source ../../scripts/lib/staging.sh && staging_env go test ./...'\n" +
		"- compat/draextside/go.mod pins the exported version (staging/README.md) and its go.sum has\n" +
		"  the export's hashes (make staging-sums).\n" +
		"DRAEXT_COMPAT_FORWARD_ONLY=1 leaves the reverse direction out."
	if s := string(output); strings.Contains(s, "SECURITY ERROR") || strings.Contains(s, "checksum mismatch") {
		hint = "the exported staging modules changed since compat/draextside/go.sum was written: rewrite its draext lines\n" +
			"(make staging-sums, or in compat/draextside: remove the lines with -draext. from go.sum, then staging_go mod tidy)\n" +
			"and commit compat/draextside/go.sum"
	}
	t.Fatalf("go run in compat/draextside failed: %v\n%s\n\n%s", err, strings.TrimSpace(string(output)), hint)
}

// draextsideEnv is this test's environment for go in compat/draextside: the
// proxy settings of staging_env pass through, a -modfile meant for this
// module does not.
func draextsideEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if flags, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			var kept []string
			for _, f := range strings.Fields(flags) {
				if !strings.HasPrefix(f, "-modfile=") && !strings.HasPrefix(f, "--modfile=") {
					kept = append(kept, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(kept, " ")
		}
		out = append(out, kv)
	}
	return out
}
