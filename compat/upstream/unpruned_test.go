// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// strictErrorLimit is how many unknown fields sigs.k8s.io/json's strict
// decoding names at most.
const strictErrorLimit = 100

// TestDraextDropsExactlyStockOnlyFieldsInProtobuf: an object of every kind
// both serve, with every field of stock set (nothing pruned, unlike
// TestDraextDecodesStockV1), encoded by stock as protobuf, decodes with
// draext's types (compat/draextside; protobuf skips the fields it does not
// know) and gives back, as JSON, stock's object without exactly the fields
// draext lacks (TestV1StockOnlyFields): each of those that stock sent is
// lost, and nothing else is lost, changed or added. Every stock-only field
// reachable from the kind must be sent at least once, or the pass proves
// nothing about it.
//
// The same object as JSON, decoded strictly, must fail with exactly those
// fields named unknown (the apiserver's strict field validation), or decode
// when the kind has no stock-only field.
func TestDraextDropsExactlyStockOnlyFieldsInProtobuf(t *testing.T) {
	m, scheme, in, out := reverseSetup(t)
	sent := map[string][]byte{}
	for _, root := range m.roots {
		obj := reflect.New(root).Interface().(runtime.Object)
		newFiller(scheme, reverseSeed, true).Fill(obj)
		obj.GetObjectKind().SetGroupVersionKind(resourcev1.SchemeGroupVersion.WithKind(root.Name()))
		jsonData := mustMarshal(t, obj)
		pbData, err := encodeProtobuf(scheme, obj)
		if err != nil {
			t.Fatalf("stock k8s.io/api %s cannot encode a full %s as protobuf: %v", stockVersion(), root.Name(), err)
		}
		for ext, data := range map[string][]byte{"json": jsonData, "pb": pbData} {
			if err := os.WriteFile(filepath.Join(in, root.Name()+"."+ext), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sent[root.Name()] = jsonData
	}

	runDraextside(t, in, out)

	for _, root := range m.roots {
		name := root.Name()
		t.Run(name, func(t *testing.T) {
			full := sent[name]
			generic, err := decodeGeneric(full)
			if err != nil {
				t.Fatal(err)
			}
			var dropped []droppedMember
			m.dropStockOnly(generic, root, "", &dropped)
			want, err := json.Marshal(generic)
			if err != nil {
				t.Fatal(err)
			}
			sentFields := map[string]bool{}
			for _, d := range dropped {
				sentFields[d.field.String()] = true
			}
			reachable := m.reachableStockOnly(root)
			for _, f := range reachable {
				if !sentFields[f.String()] {
					t.Errorf("%s: stock-only field %s is reachable from %s, but the full object of stock k8s.io/api %s does not send it: this pass cannot tell whether draext drops it", name, f, name, stockVersion())
				}
			}
			t.Logf("stock k8s.io/api %s: %d stock-only field(s) reachable from %s, sent %d time(s) in all", stockVersion(), len(reachable), name, len(dropped))

			t.Run("pb", func(t *testing.T) {
				checkDropsExactly(t, name, full, want, readBack(t, out, name+".pb"), dropped)
			})
			t.Run("json", func(t *testing.T) {
				checkStrictJSON(t, out, name, full, dropped)
			})
		})
	}
}

// readBack is compat/draextside's JSON of the sent file name, or the test
// fails with its reason.
func readBack(t *testing.T, out, name string) []byte {
	t.Helper()
	if why, err := os.ReadFile(filepath.Join(out, name+".err")); err == nil {
		t.Fatalf("draext's types cannot decode %s, written by stock k8s.io/api %s: %s", name, stockVersion(), strings.TrimSpace(string(why)))
	}
	back, err := os.ReadFile(filepath.Join(out, name+".json"))
	if err != nil {
		t.Fatalf("compat/draextside wrote nothing for %s: %v", name, err)
	}
	return back
}

// checkDropsExactly: back (draext's decoding of the full object, as JSON)
// equals want (the full object without its stock-only members), and the
// differences between full and back are exactly one "not given back" per
// member in dropped.
func checkDropsExactly(t *testing.T, name string, full, want, back []byte, dropped []droppedMember) {
	t.Helper()
	extra, err := jsonDiffAll(want, back)
	if err != nil {
		t.Fatal(err)
	}
	if len(extra) > 0 {
		t.Errorf("draext's types read a full %s of stock k8s.io/api %s otherwise than stock's object without the fields draext lacks (sent: stock's object without them; given back: draext's decoding):\n  %s",
			name, stockVersion(), strings.Join(extra, "\n  "))
	}
	lost, err := jsonDiffAll(full, back)
	if err != nil {
		t.Fatal(err)
	}
	expected := map[string]bool{}
	for _, d := range dropped {
		expected[d.diffLine()] = true
	}
	var unexpected []string
	for _, line := range lost {
		if !expected[line] {
			unexpected = append(unexpected, line)
		}
		delete(expected, line)
	}
	if len(unexpected) > 0 {
		t.Errorf("%s: differences that are not the loss of a stock-only field (sent: stock's full object; given back: draext's decoding):\n  %s", name, strings.Join(unexpected, "\n  "))
	}
	if len(expected) > 0 {
		kept := slices.Sorted(maps.Keys(expected))
		t.Errorf("%s: stock-only fields that draext's types gave back (they keep them after all; TestV1FieldsMatchStock says they lack them):\n  %s", name, strings.Join(kept, "\n  "))
	}
	if !t.Failed() {
		t.Logf("%s: sent %d stock-only member(s), all lost, nothing else differs", name, len(dropped))
	}
}

// unknownFieldRE finds the fields sigs.k8s.io/json's strict decoding names:
// unknown field "spec.devices[0].bindsToNode".
var unknownFieldRE = regexp.MustCompile(`unknown field ("(?:[^"\\]|\\.)*")`)

// checkStrictJSON: the full object as JSON, decoded strictly by draext's
// types, fails naming exactly the stock-only members as unknown fields, or,
// when it has none, decodes and gives back what was sent.
func checkStrictJSON(t *testing.T, out, name string, full []byte, dropped []droppedMember) {
	t.Helper()
	why, err := os.ReadFile(filepath.Join(out, name+".json.err"))
	switch {
	case errors.Is(err, fs.ErrNotExist) && len(dropped) == 0:
		back := readBack(t, out, name+".json")
		diffs, err := jsonDiff(full, back)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) > 0 {
			t.Errorf("draext's types read a full %s of stock k8s.io/api %s, which has no stock-only field, otherwise (sent: stock's object as JSON; given back: draext's decoding):\n  %s", name, stockVersion(), strings.Join(diffs, "\n  "))
		}
		return
	case errors.Is(err, fs.ErrNotExist):
		t.Fatalf("draext's types decode a full %s.json of stock k8s.io/api %s strictly, although it has %d member(s) of fields draext lacks, such as %s", name, stockVersion(), len(dropped), dropped[0].path)
	case err != nil:
		t.Fatal(err)
	}
	var named []string
	for _, match := range unknownFieldRE.FindAllStringSubmatch(string(why), -1) {
		field, err := strconv.Unquote(match[1])
		if err != nil {
			t.Fatalf("%s.json: cannot read the field of %s: %v", name, match[0], err)
		}
		named = append(named, field)
	}
	if len(named) == 0 {
		t.Fatalf("draext's types cannot decode a full %s.json of stock k8s.io/api %s, but not for an unknown field: %s", name, stockVersion(), strings.TrimSpace(string(why)))
	}
	want := make([]string, 0, len(dropped))
	for _, d := range dropped {
		want = append(want, strings.TrimPrefix(d.path, "."))
	}
	sort.Strings(named)
	sort.Strings(want)
	if len(want) > strictErrorLimit {
		// Only the first strictErrorLimit are named: they must be some of
		// the stock-only members.
		var other []string
		for _, f := range named {
			if !slices.Contains(want, f) {
				other = append(other, f)
			}
		}
		if len(named) != strictErrorLimit || len(other) > 0 {
			t.Errorf("%s.json: strict decoding names %d unknown field(s), want %d of the %d stock-only members; not stock-only: %q", name, len(named), strictErrorLimit, len(want), other)
		}
		return
	}
	if !slices.Equal(named, want) {
		t.Errorf("%s.json: strict decoding names the unknown fields\n  %s\nwant the stock-only members\n  %s", name, strings.Join(named, "\n  "), strings.Join(want, "\n  "))
	}
}

// droppedMember is a member of a stock object's JSON that holds a field
// draext lacks.
type droppedMember struct {
	path  string // as jsonDiff writes it: .spec.devices[0].bindsToNode
	value any    // generic JSON
	field stockOnlyField
}

// diffLine is how jsonDiff reports the member when it is lost.
func (d droppedMember) diffLine() string {
	return fmt.Sprintf("%s: sent as %s, not given back", d.path, brief(d.value))
}

func (f stockOnlyField) String() string {
	name, _ := parseJSONTag(f.field.Tag.Get("json"))
	return fmt.Sprintf("%s.%s (json %q)", f.typeName, f.field.Name, name)
}

// dropStockOnly removes from v, the generic JSON of a value of stock type t,
// the members that hold fields draext lacks (by the manifest) and appends
// the non-null ones to dropped. It follows t, not the names in the JSON: the
// keys of maps are not field names.
func (m *manifest) dropStockOnly(v any, t reflect.Type, path string, dropped *[]droppedMember) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, ok := v.([]any) // not so for []byte, a string in JSON
		if !ok {
			return
		}
		for i, item := range items {
			m.dropStockOnly(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), dropped)
		}
	case reflect.Map:
		members, ok := v.(map[string]any)
		if !ok {
			return
		}
		for key, item := range members {
			m.dropStockOnly(item, t.Elem(), path+"."+key, dropped)
		}
	case reflect.Struct:
		p, ok := m.byStock[t]
		members, isObject := v.(map[string]any)
		if ok && isObject {
			m.dropFields(members, p, path, dropped)
		}
		// Otherwise a type of another package (ObjectMeta, Quantity,
		// RawExtension...): nothing of it is stock-only.
	}
}

// dropFields is dropStockOnly for the members of one object of p's stock
// type; an embedded struct without a JSON name is inlined, as encoding/json
// does.
func (m *manifest) dropFields(members map[string]any, p *pairing, path string, dropped *[]droppedMember) {
	for i := range p.stock.NumField() {
		f := p.stock.Field(i)
		name, _ := parseJSONTag(f.Tag.Get("json"))
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if name == "" && f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ep, ok := m.byStock[ft]; ok {
				if p.keep[i] {
					m.dropFields(members, ep, path, dropped)
				} else {
					m.dropAll(members, ep, path, stockOnlyField{typeName: p.stock.Name(), field: f}, dropped)
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		value, present := members[name]
		if !p.keep[i] {
			if present && value != nil {
				*dropped = append(*dropped, droppedMember{path: path + "." + name, value: value, field: stockOnlyField{typeName: p.stock.Name(), field: f}})
			}
			delete(members, name)
			continue
		}
		if present {
			m.dropStockOnly(value, f.Type, path+"."+name, dropped)
		}
	}
}

// dropAll removes the members of an inlined struct that draext lacks as a
// whole; they count as its field f.
func (m *manifest) dropAll(members map[string]any, p *pairing, path string, f stockOnlyField, dropped *[]droppedMember) {
	for i := range p.stock.NumField() {
		name, _ := parseJSONTag(p.stock.Field(i).Tag.Get("json"))
		if name == "" || name == "-" {
			continue
		}
		if value, present := members[name]; present && value != nil {
			*dropped = append(*dropped, droppedMember{path: path + "." + name, value: value, field: f})
		}
		delete(members, name)
	}
}

// reachableStockOnly are the stock-only fields of the types that a value of
// stock type root holds through fields draext has, sorted.
func (m *manifest) reachableStockOnly(root reflect.Type) []stockOnlyField {
	var out []stockOnlyField
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(t reflect.Type) {
		p, ok := m.byStock[t]
		if !ok || seen[t] {
			return
		}
		seen[t] = true
		for i, keep := range p.keep {
			f := p.stock.Field(i)
			if !keep {
				out = append(out, stockOnlyField{typeName: t.Name(), field: f})
			} else if se := stockElem(f.Type); se != nil {
				visit(se)
			}
		}
	}
	visit(root)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// testManifest pairs stock types with themselves, without the Go fields
// drop names: a manifest as if draext lacked them.
func testManifest(drop map[reflect.Type][]string, types ...reflect.Type) *manifest {
	m := &manifest{byName: map[string]*pairing{}, byStock: map[reflect.Type]*pairing{}}
	for _, st := range types {
		p := &pairing{name: st.Name(), stock: st, keep: make([]bool, st.NumField())}
		for i := range st.NumField() {
			p.keep[i] = !slices.Contains(drop[st], st.Field(i).Name)
		}
		m.byName[p.name], m.byStock[st] = p, p
	}
	return m
}

func TestDropStockOnly(t *testing.T) {
	device := reflect.TypeFor[resourcev1.Device]()
	attribute := reflect.TypeFor[resourcev1.DeviceAttribute]()
	spec := reflect.TypeFor[resourcev1.ResourceSliceSpec]()
	claimConfig := reflect.TypeFor[resourcev1.DeviceClaimConfiguration]()
	config := reflect.TypeFor[resourcev1.DeviceConfiguration]()
	opaque := reflect.TypeFor[resourcev1.OpaqueDeviceConfiguration]()
	for _, tc := range []struct {
		name      string
		m         *manifest
		root      reflect.Type
		in, want  string
		paths     []string
		reachable []string
	}{
		{
			name: "in map values, keys that look like field names",
			m:    testManifest(map[reflect.Type][]string{attribute: {"IntValue"}}, device, attribute),
			root: device,
			in:   `{"name":"d","attributes":{"a.b/int":{"int":3},"int":{"string":"s","int":4},"x":{"int":null}}}`,
			want: `{"name":"d","attributes":{"a.b/int":{},"int":{"string":"s"},"x":{}}}`,
			// null is not sent: jsonDiff counts it as absent
			paths:     []string{".attributes.a.b/int.int", ".attributes.int.int"},
			reachable: []string{`DeviceAttribute.IntValue (json "int")`},
		},
		{
			name:      "in list items",
			m:         testManifest(map[reflect.Type][]string{device: {"Name"}}, spec, device),
			root:      spec,
			in:        `{"driver":"x","devices":[{"name":"a"},{"name":"b","attributes":{"name":{"int":1}}}]}`,
			want:      `{"driver":"x","devices":[{},{"attributes":{"name":{"int":1}}}]}`,
			paths:     []string{".devices[0].name", ".devices[1].name"},
			reachable: []string{`Device.Name (json "name")`},
		},
		{
			name:      "not reachable through a field draext lacks",
			m:         testManifest(map[reflect.Type][]string{spec: {"Devices"}, device: {"Name"}}, spec, device),
			root:      spec,
			in:        `{"driver":"x","devices":[{"name":"a"}]}`,
			want:      `{"driver":"x"}`,
			paths:     []string{".devices"},
			reachable: []string{`ResourceSliceSpec.Devices (json "devices")`},
		},
		{
			name:      "inlined embedded struct",
			m:         testManifest(map[reflect.Type][]string{opaque: {"Driver"}}, claimConfig, config, opaque),
			root:      claimConfig,
			in:        `{"requests":["r"],"opaque":{"driver":"d","parameters":{"driver":"kept"}}}`,
			want:      `{"requests":["r"],"opaque":{"parameters":{"driver":"kept"}}}`,
			paths:     []string{".opaque.driver"},
			reachable: []string{`OpaqueDeviceConfiguration.Driver (json "driver")`},
		},
		{
			name:      "inlined embedded struct draext lacks",
			m:         testManifest(map[reflect.Type][]string{claimConfig: {"DeviceConfiguration"}}, claimConfig, config, opaque),
			root:      claimConfig,
			in:        `{"requests":["r"],"opaque":{"driver":"d"}}`,
			want:      `{"requests":["r"]}`,
			paths:     []string{".opaque"},
			reachable: []string{`DeviceClaimConfiguration.DeviceConfiguration (json "")`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decodeGeneric([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var dropped []droppedMember
			tc.m.dropStockOnly(v, tc.root, "", &dropped)
			got, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if diffs, _ := jsonDiffAll([]byte(tc.want), got); len(diffs) > 0 {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			var paths []string
			for _, d := range dropped {
				paths = append(paths, d.path)
			}
			sort.Strings(paths)
			if !slices.Equal(paths, tc.paths) {
				t.Errorf("dropped %q, want %q", paths, tc.paths)
			}
			var reachable []string
			for _, f := range tc.m.reachableStockOnly(tc.root) {
				reachable = append(reachable, f.String())
			}
			if !slices.Equal(reachable, tc.reachable) {
				t.Errorf("reachable %q, want %q", reachable, tc.reachable)
			}
		})
	}
}
