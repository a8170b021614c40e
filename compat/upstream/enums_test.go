// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestV1EnumValues compares the values of the string enums of
// resource.k8s.io/v1 (constants of the package's named types, such as
// DeviceTaintEffect or DeviceAllocationMode) in draext's sources and stock's:
// every value draext's types declare must be a value stock declares for the
// type of the same name, or draext's apiserver would send a value that stock
// clients do not know. Values only stock has are allowed; they are logged and
// go to the report.
func TestV1EnumValues(t *testing.T) {
	c := loadEnums(t)
	t.Logf("stock k8s.io/api %s has %d enum value(s) in resource.k8s.io/v1 that draext's types lack:", stockVersion(), len(c.stockOnly))
	for _, v := range c.stockOnly {
		t.Logf("  %s", v)
	}
	for _, note := range c.notes {
		t.Log(note)
	}
	for _, problem := range c.problems {
		t.Error(problem)
	}
}

// enumValue is one string constant of a named type of the package.
type enumValue struct {
	typeName  string
	constName string
	value     string
	// byName: an untyped constant, counted as the type's because its name
	// is the type's followed by more (AllocationConfigSourceClass), as
	// stock's AllocationConfigSource values were until v0.35.
	byName bool
}

func (v enumValue) String() string {
	s := fmt.Sprintf("%s %s = %q", v.typeName, v.constName, v.value)
	if v.byName {
		s += " (untyped; the type's by its name)"
	}
	return s
}

// enumPackage is what the sources of one package declare.
type enumPackage struct {
	dir    string
	types  map[string]bool // the named types of the package
	values []enumValue     // sorted by type, value and constant
}

// parseEnumDir parses the Go files of dir, leaving out tests, protobuf code
// and zz_generated files.
func parseEnumDir(dir string) (*enumPackage, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if base := filepath.Base(name); strings.HasSuffix(base, "_test.go") || strings.HasSuffix(base, ".pb.go") || strings.HasPrefix(base, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	pkg := collectEnums(files)
	pkg.dir = dir
	return pkg, nil
}

// constDecl is one constant of the package before its value is resolved.
type constDecl struct {
	name     string
	typeName string // a named type of the package, or ""
	explicit bool   // typed: a type in the spec, or a conversion T("...")
	value    string
	resolved bool   // value is known
	ref      string // the constant whose value it has, when not resolved
}

// collectEnums finds the string constants of the package's named types in
// files: "X T = "v"" (alone or in a grouped block with the type per spec),
// "X = T("v")", constants that repeat the spec before them in a block, and
// constants whose value is another constant of the package. An untyped
// string constant whose name starts with the name of a named string type of
// the package counts as that type's (see enumValue.byName).
func collectEnums(files []*ast.File) *enumPackage {
	pkg := &enumPackage{types: map[string]bool{}}
	var stringTypes []string
	for _, f := range files {
		for _, decl := range f.Decls {
			if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.TYPE {
				for _, spec := range gen.Specs {
					ts := spec.(*ast.TypeSpec)
					pkg.types[ts.Name.Name] = true
					if id, ok := ts.Type.(*ast.Ident); ok && id.Name == "string" && !ts.Assign.IsValid() {
						stringTypes = append(stringTypes, ts.Name.Name)
					}
				}
			}
		}
	}
	var consts []*constDecl
	byName := map[string]*constDecl{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			var prevType ast.Expr
			var prevValues []ast.Expr
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				typ, values := vs.Type, vs.Values
				if typ == nil && len(values) == 0 { // repeats the spec before
					typ, values = prevType, prevValues
				} else {
					prevType, prevValues = typ, values
				}
				for i, name := range vs.Names {
					if name.Name == "_" || i >= len(values) {
						continue
					}
					c := &constDecl{name: name.Name, explicit: typ != nil}
					expr := unparen(values[i])
					if id, ok := typ.(*ast.Ident); ok && pkg.types[id.Name] {
						c.typeName = id.Name
					} else if call, ok := expr.(*ast.CallExpr); ok && typ == nil && len(call.Args) == 1 {
						if id, ok := unparen(call.Fun).(*ast.Ident); ok && pkg.types[id.Name] {
							c.typeName, c.explicit, expr = id.Name, true, unparen(call.Args[0])
						}
					}
					switch e := expr.(type) {
					case *ast.BasicLit:
						if e.Kind != token.STRING {
							continue
						}
						v, err := strconv.Unquote(e.Value)
						if err != nil {
							continue
						}
						c.value, c.resolved = v, true
					case *ast.Ident:
						c.ref = e.Name
					default:
						continue
					}
					consts = append(consts, c)
					byName[c.name] = c
				}
			}
		}
	}
	// Values given as another constant: an untyped constant takes the
	// type of the one it names, as in Go.
	for progress := true; progress; {
		progress = false
		for _, c := range consts {
			if c.resolved {
				continue
			}
			if to, ok := byName[c.ref]; ok && to.resolved {
				c.value, c.resolved, progress = to.value, true, true
				if !c.explicit {
					c.typeName, c.explicit = to.typeName, to.explicit
				}
			}
		}
	}
	// Longest type name first: "DeviceTaintEffectX" is DeviceTaintEffect's,
	// not DeviceTaint's.
	sort.Slice(stringTypes, func(i, j int) bool { return len(stringTypes[i]) > len(stringTypes[j]) })
	for _, c := range consts {
		switch {
		case !c.resolved:
		case c.typeName != "":
			pkg.values = append(pkg.values, enumValue{typeName: c.typeName, constName: c.name, value: c.value})
		case !c.explicit:
			for _, st := range stringTypes {
				if len(c.name) > len(st) && strings.HasPrefix(c.name, st) {
					pkg.values = append(pkg.values, enumValue{typeName: st, constName: c.name, value: c.value, byName: true})
					break
				}
			}
		}
	}
	sortEnumValues(pkg.values)
	return pkg
}

func unparen(e ast.Expr) ast.Expr {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// typedness says how a value's constant is declared.
func typedness(v enumValue) string {
	if v.byName {
		return "untyped (the type's by its name)"
	}
	return "typed"
}

func sortEnumValues(values []enumValue) {
	sort.Slice(values, func(i, j int) bool {
		a, b := values[i], values[j]
		if a.typeName != b.typeName {
			return a.typeName < b.typeName
		}
		if a.value != b.value {
			return a.value < b.value
		}
		return a.constName < b.constName
	})
}

// enumComparison is the result of comparing draext's enum values with
// stock's.
type enumComparison struct {
	// stockOnly: values stock declares for a type and draext does not
	// declare for the type of that name (or draext has no such type).
	stockOnly []enumValue
	// ourTypes: the named types of draext's package.
	ourTypes map[string]bool
	// problems: values draext declares that stock does not (the test
	// fails on them).
	problems []string
	// notes: differences that do not change the wire (constant names,
	// typed or untyped).
	notes []string
}

// compareEnums compares the enum values of draext's package (ours) with
// stock's, by type name and value. stockVersion only goes into the messages.
func compareEnums(ours, stock *enumPackage, stockVersion string) enumComparison {
	c := enumComparison{ourTypes: ours.types}
	type key struct{ typeName, value string }
	index := func(values []enumValue) map[key][]enumValue {
		m := map[key][]enumValue{}
		for _, v := range values {
			k := key{v.typeName, v.value}
			m[k] = append(m[k], v)
		}
		return m
	}
	ourIndex, stockIndex := index(ours.values), index(stock.values)
	for _, v := range ours.values {
		same := stockIndex[key{v.typeName, v.value}]
		switch {
		case len(same) > 0:
			if !slices.ContainsFunc(same, func(s enumValue) bool { return s.constName == v.constName }) {
				c.notes = append(c.notes, fmt.Sprintf("%s %q: draext names the constant %s, stock %s", v.typeName, v.value, v.constName, same[0].constName))
			}
			if !slices.ContainsFunc(same, func(s enumValue) bool { return s.byName == v.byName }) {
				c.notes = append(c.notes, fmt.Sprintf("%s %q: %s is %s in draext, %s in stock k8s.io/api %s", v.typeName, v.value, v.constName, typedness(v), typedness(same[0]), stockVersion))
			}
		case !stock.types[v.typeName]:
			c.problems = append(c.problems, fmt.Sprintf("%s: stock k8s.io/api %s has no type %s in resource.k8s.io/v1", v, stockVersion, v.typeName))
		default:
			var known []string
			for _, s := range stock.values {
				if s.typeName == v.typeName {
					known = append(known, strconv.Quote(s.value))
				}
			}
			c.problems = append(c.problems, fmt.Sprintf("%s: stock k8s.io/api %s does not know this value of %s (it knows: %s); its clients may reject or misread it",
				v, stockVersion, v.typeName, strings.Join(known, ", ")))
		}
	}
	for _, v := range stock.values {
		if len(ourIndex[key{v.typeName, v.value}]) == 0 {
			c.stockOnly = append(c.stockOnly, v)
		}
	}
	return c
}

// loadEnums parses draext's resource/v1 and stock's (the module cache
// directory that stockVersion reads the version from) and compares their
// enum values.
func loadEnums(t *testing.T) enumComparison {
	t.Helper()
	ours, err := parseEnumDir(ourV1Dir(t))
	if err != nil {
		t.Fatalf("draext's resource.k8s.io/v1: %v", err)
	}
	if len(ours.values) == 0 {
		t.Fatalf("no enum values in %s: is it resource.k8s.io/v1 of a patched tree?", ours.dir)
	}
	dir := filepath.Dir(stockSourceFile())
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no sources of stock k8s.io/api %s resource/v1 at %s (the path its code was built from): %v", stockVersion(), dir, err)
	}
	stock, err := parseEnumDir(dir)
	if err != nil {
		t.Fatalf("stock k8s.io/api %s resource/v1: %v", stockVersion(), err)
	}
	if len(stock.values) == 0 {
		t.Fatalf("no enum values in %s", dir)
	}
	return compareEnums(ours, stock, stockVersion())
}

func TestCollectEnums(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string // enumValue.String()
	}{
		{
			name: "typed, alone and grouped",
			src: `type Effect string
const EffectA Effect = "A"
const (
	EffectB Effect = "B"
	// a comment
	EffectC Effect = "C"
)`,
			want: []string{`Effect EffectA = "A"`, `Effect EffectB = "B"`, `Effect EffectC = "C"`},
		},
		{
			name: "conversion",
			src: `type Mode string
const (
	ModeAll = Mode("All")
	ModeOne = (Mode)(("One"))
)`,
			want: []string{`Mode ModeAll = "All"`, `Mode ModeOne = "One"`},
		},
		{
			name: "untyped, by the name of a string type",
			src: `type Source string
type SourceList struct{}
const (
	SourceClass = "FromClass"
	SourceListX = "x"
	Sources = 3
	OtherConst = "other"
)`,
			want: []string{`Source SourceClass = "FromClass" (untyped; the type's by its name)`, `Source SourceListX = "x" (untyped; the type's by its name)`},
		},
		{
			name: "longest type name wins",
			src: `type Taint string
type TaintEffect string
const TaintEffectX = "x"`,
			want: []string{`TaintEffect TaintEffectX = "x" (untyped; the type's by its name)`},
		},
		{
			name: "typed with a predeclared or foreign type: not an enum",
			src: `type Prefix string
const (
	PrefixA string = "a"
	PrefixB other.Type = "b"
	PrefixC = string("c")
)`,
		},
		{
			name: "not a string",
			src: `type Level int
type Name string
const (
	LevelHigh Level = 3
	NameMaxLength = 63
	NameMax = 1 << 4
)`,
		},
		{
			name: "repeated spec and references",
			src: `type Op string
const (
	OpExists Op = "Exists"
	OpSame
	OpAlias = OpExists
	OpTyped Op = OpEqual
	OpEqual Op = "Equal"
	OpUnknown = other.Value
)`,
			want: []string{`Op OpEqual = "Equal"`, `Op OpTyped = "Equal"`, `Op OpAlias = "Exists"`, `Op OpExists = "Exists"`, `Op OpSame = "Exists"`},
		},
		{
			name: "type alias of string: no type of the package's own",
			src: `type Alias = string
const AliasX = "x"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tc.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range collectEnums([]*ast.File{f}).values {
				got = append(got, v.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestCompareEnums(t *testing.T) {
	pkg := func(types []string, values ...enumValue) *enumPackage {
		p := &enumPackage{types: map[string]bool{}, values: values}
		for _, name := range types {
			p.types[name] = true
		}
		sortEnumValues(p.values)
		return p
	}
	effect := func(name, value string) enumValue {
		return enumValue{typeName: "Effect", constName: name, value: value}
	}
	for _, tc := range []struct {
		name                      string
		ours, stock               *enumPackage
		stockOnly                 []string
		problems, notes           int
		problemHas, noteHas       string
		stockOnlyHasTypeDraextHas []bool
	}{
		{
			name:  "same",
			ours:  pkg([]string{"Effect"}, effect("EffectA", "A")),
			stock: pkg([]string{"Effect"}, effect("EffectA", "A")),
		},
		{
			name:                      "stock has more: listed",
			ours:                      pkg([]string{"Effect"}, effect("EffectA", "A")),
			stock:                     pkg([]string{"Effect", "Skip"}, effect("EffectA", "A"), effect("EffectNone", "None"), enumValue{typeName: "Skip", constName: "SkipAll", value: "*"}),
			stockOnly:                 []string{`Effect EffectNone = "None"`, `Skip SkipAll = "*"`},
			stockOnlyHasTypeDraextHas: []bool{true, false},
		},
		{
			name:       "draext has a value stock lacks: problem",
			ours:       pkg([]string{"Effect"}, effect("EffectA", "A"), effect("EffectB", "B")),
			stock:      pkg([]string{"Effect"}, effect("EffectA", "A")),
			problems:   1,
			problemHas: `Effect EffectB = "B": stock k8s.io/api v0.0.0 does not know this value of Effect (it knows: "A")`,
		},
		{
			name:       "draext has a type stock lacks: problem",
			ours:       pkg([]string{"Mode"}, enumValue{typeName: "Mode", constName: "ModeAll", value: "All"}),
			stock:      pkg([]string{"Effect"}, effect("EffectA", "A")),
			stockOnly:  []string{`Effect EffectA = "A"`},
			problems:   1,
			problemHas: "has no type Mode",
		},
		{
			name:    "same value, other constant name: note",
			ours:    pkg([]string{"Effect"}, effect("EffectAlpha", "A")),
			stock:   pkg([]string{"Effect"}, effect("EffectA", "A")),
			notes:   1,
			noteHas: `Effect "A": draext names the constant EffectAlpha, stock EffectA`,
		},
		{
			name:    "untyped in draext, typed in stock: note",
			ours:    pkg([]string{"Effect"}, enumValue{typeName: "Effect", constName: "EffectA", value: "A", byName: true}),
			stock:   pkg([]string{"Effect"}, effect("EffectA", "A")),
			notes:   1,
			noteHas: `Effect "A": EffectA is untyped (the type's by its name) in draext, typed in stock k8s.io/api v0.0.0`,
		},
		{
			name:  "same value of another type: not the same",
			ours:  pkg([]string{"Effect", "Mode"}, enumValue{typeName: "Mode", constName: "ModeA", value: "A"}),
			stock: pkg([]string{"Effect", "Mode"}, effect("EffectA", "A")),
			// draext's Mode "A" is unknown to stock's Mode; stock's
			// Effect "A" is lacking in draext's Effect.
			stockOnly:                 []string{`Effect EffectA = "A"`},
			stockOnlyHasTypeDraextHas: []bool{true},
			problems:                  1,
			problemHas:                `Mode ModeA = "A"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compareEnums(tc.ours, tc.stock, "v0.0.0")
			var stockOnly []string
			var has []bool
			for _, v := range c.stockOnly {
				stockOnly = append(stockOnly, v.String())
				has = append(has, c.ourTypes[v.typeName])
			}
			if !slices.Equal(stockOnly, tc.stockOnly) {
				t.Errorf("stock only:\n  %s\nwant\n  %s", strings.Join(stockOnly, "\n  "), strings.Join(tc.stockOnly, "\n  "))
			}
			if tc.stockOnlyHasTypeDraextHas != nil && !slices.Equal(has, tc.stockOnlyHasTypeDraextHas) {
				t.Errorf("draext has the types of the stock-only values: %v, want %v", has, tc.stockOnlyHasTypeDraextHas)
			}
			if len(c.problems) != tc.problems || len(c.notes) != tc.notes {
				t.Errorf("problems %q, notes %q; want %d, %d", c.problems, c.notes, tc.problems, tc.notes)
			}
			if tc.problemHas != "" && !slices.ContainsFunc(c.problems, func(s string) bool { return strings.Contains(s, tc.problemHas) }) {
				t.Errorf("problems %q, want one containing %q", c.problems, tc.problemHas)
			}
			if tc.noteHas != "" && !slices.ContainsFunc(c.notes, func(s string) bool { return strings.Contains(s, tc.noteHas) }) {
				t.Errorf("notes %q, want one containing %q", c.notes, tc.noteHas)
			}
		})
	}
}
