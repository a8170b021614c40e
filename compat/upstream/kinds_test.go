// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"fmt"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// stockKinds are the kinds (and lists) that stock's scheme knows in
// resource.k8s.io/v1, sorted by name: the types resourcev1.AddToScheme
// registers from the resource/v1 package itself. The meta types every group
// version gets (WatchEvent, ListOptions, ...) are left out.
func stockKinds() ([]reflect.Type, error) {
	scheme := runtime.NewScheme()
	if err := resourcev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return v1KindTypes(scheme.KnownTypes(resourcev1.SchemeGroupVersion)), nil
}

// v1KindTypes keeps the types of known that are of stock's resource/v1
// package, sorted by name.
func v1KindTypes(known map[string]reflect.Type) []reflect.Type {
	var kinds []reflect.Type
	for _, t := range known {
		if t.PkgPath() == v1PkgPath {
			kinds = append(kinds, t)
		}
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Name() < kinds[j].Name() })
	return kinds
}

// kindSelection splits the kinds of stock resource.k8s.io/v1 by what
// draext's resource.k8s.io/v1 does with them.
type kindSelection struct {
	// served: draext has the struct type and registers it as a kind. The
	// field comparison and the decoding tests start from these.
	served []string
	// unserved: draext's package has no struct type of that name (a kind
	// added upstream after 1.33). Allowed, listed in the report.
	unserved []string
	// problems make TestV1Kinds fail: kinds draext registers that stock
	// does not have, struct types of stock kinds draext does not register.
	problems []string
}

// selectKinds compares the kinds of stock (names) with draext's: isStruct
// says whether draext's package has a struct type of a name, ours are the
// kinds draext registers. stockVersion only goes into the messages.
func selectKinds(stock []string, isStruct func(string) bool, ours []string, stockVersion string) kindSelection {
	var sel kindSelection
	for _, kind := range stock {
		switch {
		case !isStruct(kind):
			sel.unserved = append(sel.unserved, kind)
		case !slices.Contains(ours, kind):
			sel.problems = append(sel.problems, fmt.Sprintf("%s: draext's resource.k8s.io/v1 has the struct type but does not register it as a kind; stock k8s.io/api %s serves it", kind, stockVersion))
		default:
			sel.served = append(sel.served, kind)
		}
	}
	for _, kind := range ours {
		if !slices.Contains(stock, kind) {
			sel.problems = append(sel.problems, fmt.Sprintf("%s: draext serves it in resource.k8s.io/v1, stock k8s.io/api %s does not: its clients cannot read it", kind, stockVersion))
		}
	}
	if len(sel.served) == 0 {
		sel.problems = append(sel.problems, fmt.Sprintf("(kinds): draext serves none of the kinds of stock k8s.io/api %s (%s); draext's: %s", stockVersion, strings.Join(stock, ", "), strings.Join(ours, ", ")))
	}
	return sel
}

// TestV1Kinds: every kind draext serves in resource.k8s.io/v1 is a kind of
// stock's resource.k8s.io/v1. Stock kinds draext has no type for are
// allowed; they are logged and go to the report.
func TestV1Kinds(t *testing.T) {
	m := loadManifest(t)
	t.Logf("stock k8s.io/api %s: kinds of resource.k8s.io/v1 that draext serves: %s", stockVersion(), strings.Join(m.kinds.served, ", "))
	if len(m.kinds.unserved) == 0 {
		t.Logf("stock k8s.io/api %s: draext serves every kind of resource.k8s.io/v1", stockVersion())
	} else {
		t.Logf("stock k8s.io/api %s: kinds of resource.k8s.io/v1 that draext does not serve: %s", stockVersion(), strings.Join(m.kinds.unserved, ", "))
	}
	for _, problem := range m.kinds.problems {
		t.Error(problem)
	}
}

func TestV1KindTypes(t *testing.T) {
	kinds, err := stockKinds()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(kinds))
	for _, k := range kinds {
		names = append(names, k.Name())
	}
	for _, tc := range []struct {
		kind string
		want bool
	}{
		{kind: "DeviceClass", want: true},
		{kind: "DeviceClassList", want: true},
		{kind: "ResourceClaim", want: true},
		{kind: "ResourceClaimTemplateList", want: true},
		{kind: "ResourceSlice", want: true},
		{kind: "WatchEvent"},
		{kind: "ListOptions"},
		{kind: "DeleteOptions"},
		{kind: "DeviceRequest"}, // a type of the package, but no kind
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if got := slices.Contains(names, tc.kind); got != tc.want {
				t.Errorf("stockKinds() = %v: has %s %v, want %v", names, tc.kind, got, tc.want)
			}
		})
	}
}

func TestSelectKinds(t *testing.T) {
	structs := func(names ...string) func(string) bool {
		return func(name string) bool { return slices.Contains(names, name) }
	}
	for _, tc := range []struct {
		name             string
		stock            []string
		isStruct         func(string) bool
		ours             []string
		served, unserved []string
		problems         int
		problemContains  string
	}{
		{
			name:     "same kinds",
			stock:    []string{"A", "AList"},
			isStruct: structs("A", "AList", "B"),
			ours:     []string{"A", "AList"},
			served:   []string{"A", "AList"},
		},
		{
			name:     "stock kind draext has no type for: unserved",
			stock:    []string{"A", "AList", "Rule", "RuleList"},
			isStruct: structs("A", "AList"),
			ours:     []string{"A", "AList"},
			served:   []string{"A", "AList"},
			unserved: []string{"Rule", "RuleList"},
		},
		{
			name:            "draext kind stock lacks",
			stock:           []string{"A"},
			isStruct:        structs("A", "B"),
			ours:            []string{"A", "B"},
			served:          []string{"A"},
			problems:        1,
			problemContains: "B: draext serves it",
		},
		{
			name:            "struct of a stock kind draext does not register",
			stock:           []string{"A", "B"},
			isStruct:        structs("A", "B"),
			ours:            []string{"A"},
			served:          []string{"A"},
			problems:        1,
			problemContains: "B: draext's resource.k8s.io/v1 has the struct type but does not register it",
		},
		{
			name:            "nothing served",
			stock:           []string{"A"},
			isStruct:        structs(),
			unserved:        []string{"A"},
			problems:        1,
			problemContains: "draext serves none",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := selectKinds(tc.stock, tc.isStruct, tc.ours, "v0.0.0")
			if !slices.Equal(sel.served, tc.served) || !slices.Equal(sel.unserved, tc.unserved) {
				t.Errorf("served %v, unserved %v; want %v, %v", sel.served, sel.unserved, tc.served, tc.unserved)
			}
			if len(sel.problems) != tc.problems {
				t.Errorf("problems %q, want %d", sel.problems, tc.problems)
			}
			if tc.problemContains != "" && !slices.ContainsFunc(sel.problems, func(p string) bool { return strings.Contains(p, tc.problemContains) }) {
				t.Errorf("problems %q, want one containing %q", sel.problems, tc.problemContains)
			}
		})
	}
}

func TestRegisteredKinds(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "register.go",
			src: `func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&DeviceClass{},
		&DeviceClassList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}`,
			want: []string{"DeviceClass", "DeviceClassList"},
		},
		{
			name: "other calls and arguments are not kinds",
			src: `func f(s *runtime.Scheme) {
	s.AddKnownTypeWithName(gv.WithKind("X"), &X{})
	s.AddKnownTypes(gv, &other.Y{}, Z{}, &Kind{})
	AddKnownTypes()
}`,
			want: []string{"Kind"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if got := registeredKinds(f); !slices.Equal(got, tc.want) {
				t.Errorf("registeredKinds = %v, want %v", got, tc.want)
			}
		})
	}
}
