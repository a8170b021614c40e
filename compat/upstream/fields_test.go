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
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
)

// v1PkgPath is the package of the stock resource.k8s.io/v1 types.
var v1PkgPath = reflect.TypeFor[resourcev1.DeviceClass]().PkgPath()

// TestV1FieldsMatchStock compares the resource.k8s.io/v1 types of the
// patched tree (source, parsed) with stock k8s.io/api (reflection), type by
// type from the kinds both serve (TestV1Kinds) down: every field of draext's
// must be in stock with the same JSON name and options and the same protobuf
// number, wire type, label and name, and a type of the same structure.
func TestV1FieldsMatchStock(t *testing.T) {
	m := loadManifest(t)
	for _, name := range m.typeNames() {
		p := m.byName[name]
		t.Run(name, func(t *testing.T) {
			for _, problem := range p.problems {
				t.Errorf("%s.%s", name, problem)
			}
			for _, note := range p.notes {
				t.Logf("%s.%s", name, note)
			}
		})
	}
}

// TestV1StockOnlyFields lists the fields of stock resource.k8s.io/v1 that
// draext's types lack: fields added upstream after 1.33's v1beta2. They are
// allowed; the list goes to $DRAEXT_COMPAT_REPORT when set (one section per
// stock version, with the kinds draext does not serve and the enum values
// its types lack: TestV1Kinds, TestV1EnumValues), and to the log.
func TestV1StockOnlyFields(t *testing.T) {
	m := loadManifest(t)
	extras := m.stockOnly()
	t.Logf("stock k8s.io/api %s has %d field(s) of resource.k8s.io/v1 that draext lacks:", stockVersion(), len(extras))
	for _, f := range extras {
		t.Logf("  %s.%s  json:%q protobuf:%q  %s", f.typeName, f.field.Name, f.field.Tag.Get("json"), f.field.Tag.Get("protobuf"), f.field.Type)
	}
	if path := os.Getenv("DRAEXT_COMPAT_REPORT"); path != "" {
		if err := writeReport(path, stockVersion(), m, loadEnums(t)); err != nil {
			t.Fatalf("DRAEXT_COMPAT_REPORT: %v", err)
		}
	}
}

// ourField is one field of a struct in draext's types.go.
type ourField struct {
	name     string // the Go name; for an embedded field, its type's name
	embedded bool
	jsonTag  string
	protoTag string
	shape    string // see ourPackage.shape
	elem     string // the draext struct type the field holds, or ""
}

// ourPackage is draext's resource/v1 package, parsed.
type ourPackage struct {
	dir     string
	specs   map[string]*ast.TypeSpec
	imports map[string]map[string]string // per type: import name -> path
	kinds   []string                     // the types it registers (AddKnownTypes), sorted
}

// ourV1Dir is the directory of draext's resource/v1 package in the patched
// tree.
func ourV1Dir(t *testing.T) string {
	t.Helper()
	return filepath.Join(kubeTree(t), "staging", "src", "k8s.io", "api", "resource", "v1")
}

// parseOurPackage parses the non-generated files of draext's resource/v1.
func parseOurPackage(t *testing.T) *ourPackage {
	t.Helper()
	dir := ourV1Dir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (is the tree patched with resource.k8s.io/v1?): %v", dir, err)
	}
	pkg := &ourPackage{dir: dir, specs: map[string]*ast.TypeSpec{}, imports: map[string]map[string]string{}}
	fset := token.NewFileSet()
	for _, file := range files {
		if base := filepath.Base(file); strings.HasSuffix(base, "_test.go") || strings.Contains(base, "generated") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]string{}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := filepath.Base(path)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = path
		}
		for _, decl := range f.Decls {
			if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.TYPE {
				for _, spec := range gen.Specs {
					ts := spec.(*ast.TypeSpec)
					pkg.specs[ts.Name.Name] = ts
					pkg.imports[ts.Name.Name] = imports
				}
			}
		}
		pkg.kinds = append(pkg.kinds, registeredKinds(f)...)
	}
	sort.Strings(pkg.kinds)
	pkg.kinds = slices.Compact(pkg.kinds)
	return pkg
}

// registeredKinds are the types that the calls of AddKnownTypes in f
// register: the arguments &T{} after the group version.
func registeredKinds(f *ast.File) []string {
	var kinds []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "AddKnownTypes" || len(call.Args) == 0 {
			return true
		}
		for _, arg := range call.Args[1:] {
			if u, ok := arg.(*ast.UnaryExpr); ok && u.Op == token.AND {
				if lit, ok := u.X.(*ast.CompositeLit); ok {
					if id, ok := lit.Type.(*ast.Ident); ok {
						kinds = append(kinds, id.Name)
					}
				}
			}
		}
		return true
	})
	return kinds
}

// fields returns the fields of draext's struct type name, or false when
// there is no such struct type.
func (p *ourPackage) fields(name string) ([]ourField, bool) {
	spec, ok := p.specs[name]
	if !ok {
		return nil, false
	}
	st, ok := spec.Type.(*ast.StructType)
	if !ok {
		return nil, false
	}
	var fields []ourField
	for _, f := range st.Fields.List {
		var tag reflect.StructTag
		if f.Tag != nil {
			unquoted, _ := strconv.Unquote(f.Tag.Value)
			tag = reflect.StructTag(unquoted)
		}
		names := make([]string, 0, len(f.Names))
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		if len(names) == 0 { // embedded: named after its type
			names = []string{typeName(f.Type)}
		}
		for _, n := range names {
			fields = append(fields, ourField{
				name:     n,
				embedded: len(f.Names) == 0,
				jsonTag:  tag.Get("json"),
				protoTag: tag.Get("protobuf"),
				shape:    p.shape(f.Type, p.imports[name]),
				elem:     p.elem(f.Type),
			})
		}
	}
	return fields, true
}

// shape is a type's structure as far as the wire cares, comparable with
// stockShape: "{}" for a struct of the package (those are compared field by
// field), the underlying type for the package's other named types,
// "<import path>.<name>" for types of other packages.
func (p *ourPackage) shape(e ast.Expr, imports map[string]string) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return "*" + p.shape(e.X, imports)
	case *ast.ArrayType:
		return "[]" + p.shape(e.Elt, imports)
	case *ast.MapType:
		return "map[" + p.shape(e.Key, imports) + "]" + p.shape(e.Value, imports)
	case *ast.SelectorExpr:
		return imports[typeName(e.X)] + "." + e.Sel.Name
	case *ast.Ident:
		spec, ok := p.specs[e.Name]
		switch {
		case !ok && e.Name == "byte":
			return "uint8"
		case !ok && e.Name == "rune":
			return "int32"
		case !ok:
			return e.Name // predeclared
		case isStruct(spec):
			return "{}"
		default:
			return p.shape(spec.Type, imports)
		}
	}
	return fmt.Sprintf("<%T>", e)
}

// elem is the struct type of the package that a field of type e holds
// (directly, by pointer, in a slice or as map value), or "".
func (p *ourPackage) elem(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return p.elem(e.X)
	case *ast.ArrayType:
		return p.elem(e.Elt)
	case *ast.MapType:
		return p.elem(e.Value)
	case *ast.Ident:
		if spec, ok := p.specs[e.Name]; ok && isStruct(spec) {
			return e.Name
		}
	}
	return ""
}

func isStruct(spec *ast.TypeSpec) bool {
	_, ok := spec.Type.(*ast.StructType)
	return ok
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.StarExpr:
		return typeName(e.X)
	}
	return fmt.Sprintf("<%T>", e)
}

// stockShape is ourPackage.shape for a stock type.
func stockShape(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" && t.PkgPath() != v1PkgPath {
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + stockShape(t.Elem())
	case reflect.Slice:
		return "[]" + stockShape(t.Elem())
	case reflect.Map:
		return "map[" + stockShape(t.Key()) + "]" + stockShape(t.Elem())
	case reflect.Struct:
		return "{}"
	}
	return t.Kind().String()
}

// stockElem is ourPackage.elem for a stock type.
func stockElem(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return stockElem(t.Elem())
	case reflect.Struct:
		if t.PkgPath() == v1PkgPath {
			return t
		}
	}
	return nil
}

// pairing is one draext struct type and the stock type in its place.
type pairing struct {
	name     string // draext's
	stock    reflect.Type
	keep     []bool   // per stock field: draext has it
	problems []string // "Field: ..." differences that break the wire
	notes    []string // "Field: ..." differences that do not
}

// manifest is the result of comparing draext's types with stock ones.
type manifest struct {
	byName  map[string]*pairing
	byStock map[reflect.Type]*pairing
	kinds   kindSelection
	roots   []reflect.Type // the stock types of kinds.served
}

// loadManifest parses draext's types and pairs them with stock ones from
// the kinds of stock's scheme that draext serves (selectKinds), following
// the fields both have.
func loadManifest(t *testing.T) *manifest {
	t.Helper()
	ours := parseOurPackage(t)
	if len(ours.kinds) == 0 {
		t.Fatalf("no kinds registered (AddKnownTypes) in %s", ours.dir)
	}
	stock, err := stockKinds()
	if err != nil {
		t.Fatalf("stock k8s.io/api %s: %v", stockVersion(), err)
	}
	stockByName := map[string]reflect.Type{}
	names := make([]string, 0, len(stock))
	for _, st := range stock {
		stockByName[st.Name()] = st
		names = append(names, st.Name())
	}
	isStruct := func(name string) bool {
		_, ok := ours.fields(name)
		return ok
	}
	m := &manifest{
		byName:  map[string]*pairing{},
		byStock: map[reflect.Type]*pairing{},
		kinds:   selectKinds(names, isStruct, ours.kinds, stockVersion()),
	}
	for _, name := range m.kinds.served {
		root := stockByName[name]
		m.roots = append(m.roots, root)
		m.pair(ours, name, root)
	}
	return m
}

// pair compares draext's struct type name with stock type st, then the
// struct types their common fields hold.
func (m *manifest) pair(ours *ourPackage, name string, st reflect.Type) {
	if p, done := m.byName[name]; done {
		if p.stock != st {
			p.problems = append(p.problems, fmt.Sprintf("(type): draext uses it where stock has both %s and %s", p.stock, st))
		}
		return
	}
	p := &pairing{name: name, stock: st, keep: make([]bool, st.NumField())}
	m.byName[name] = p
	m.byStock[st] = p
	if name != st.Name() {
		p.notes = append(p.notes, fmt.Sprintf("(type): stock names it %s", st.Name()))
	}
	fields, ok := ours.fields(name)
	if !ok {
		p.problems = append(p.problems, fmt.Sprintf("(type): no struct type %s in %s", name, ours.dir))
		return
	}
	for _, of := range fields {
		i, how := findStockField(st, of)
		if i < 0 {
			p.problems = append(p.problems, fmt.Sprintf("%s: draext has it (json:%q protobuf:%q %s), stock k8s.io/api %s does not", of.name, of.jsonTag, of.protoTag, of.shape, stockVersion()))
			continue
		}
		sf := st.Field(i)
		p.keep[i] = true
		if how != "" {
			p.notes = append(p.notes, fmt.Sprintf("%s: %s", of.name, how))
		}
		problems, notes := compareField(name, of, sf)
		for _, s := range problems {
			p.problems = append(p.problems, fmt.Sprintf("%s: %s", of.name, s))
		}
		for _, s := range notes {
			p.notes = append(p.notes, fmt.Sprintf("%s: %s", of.name, s))
		}
		if of.elem != "" {
			if se := stockElem(sf.Type); se != nil {
				m.pair(ours, of.elem, se)
			}
		}
	}
}

// findStockField finds draext's field in stock by Go name, else by JSON
// name (a Go rename does not change the wire); how says which when not by
// Go name. -1 when stock has neither.
func findStockField(st reflect.Type, of ourField) (int, string) {
	if sf, ok := st.FieldByName(of.name); ok && len(sf.Index) == 1 {
		return sf.Index[0], ""
	}
	name, _ := parseJSONTag(of.jsonTag)
	if name == "" {
		return -1, ""
	}
	for i := range st.NumField() {
		if n, _ := parseJSONTag(st.Field(i).Tag.Get("json")); n == name {
			return i, fmt.Sprintf("stock names the Go field %s (same JSON name %q)", st.Field(i).Name, name)
		}
	}
	return -1, ""
}

// stockJSONTagChanges are JSON tags that stock itself changed between the
// versions this test covers. omitempty only decides whether an empty value is
// sent: a missing member and null decode to nil, an empty list to an empty
// slice, which Kubernetes treats alike; stock clients of each version read
// the others' objects. draext may have either tag; the test notes the
// difference instead of failing.
var stockJSONTagChanges = map[string][]string{
	// v0.34: "devices"; from v0.35 on: "devices,omitempty".
	"ResourceSliceSpec.Devices": {"devices", "devices,omitempty"},
}

// compareField compares one field's tags and type: problems break the wire,
// notes do not.
func compareField(typeName string, of ourField, sf reflect.StructField) (problems, notes []string) {
	ourJSON, stockJSON := of.jsonTag, sf.Tag.Get("json")
	ourName, ourOpts := parseJSONTag(ourJSON)
	stockName, stockOpts := parseJSONTag(stockJSON)
	switch {
	case ourName == stockName && slices.Equal(ourOpts, stockOpts):
	case of.embedded && sf.Anonymous && ourName == "" && stockName == "" &&
		slices.Equal(withoutInline(ourOpts), withoutInline(stockOpts)):
		// encoding/json inlines an embedded struct that has no JSON name;
		// ",inline" is for Kubernetes' generators and changes no byte.
		notes = append(notes, fmt.Sprintf("json tag: draext %q, stock %q (embedded: inlined either way)", ourJSON, stockJSON))
	case slices.Contains(stockJSONTagChanges[typeName+"."+of.name], ourJSON) && slices.Contains(stockJSONTagChanges[typeName+"."+of.name], stockJSON):
		notes = append(notes, fmt.Sprintf("json tag: draext %q, stock %q (stock changed it between versions; see stockJSONTagChanges)", ourJSON, stockJSON))
	default:
		problems = append(problems, fmt.Sprintf("json tag: draext %q, stock %q", ourJSON, stockJSON))
	}
	ours, stock := parseProtobufTag(of.protoTag), parseProtobufTag(sf.Tag.Get("protobuf"))
	if ours.wire != stock.wire {
		problems = append(problems, fmt.Sprintf("protobuf tag: draext %q, stock %q", of.protoTag, sf.Tag.Get("protobuf")))
	} else if ours.goOnly != stock.goOnly {
		// casttype, castkey and castvalue choose the Go type gogo's
		// generated code converts to; the bytes are the same.
		notes = append(notes, fmt.Sprintf("protobuf tag: draext %q, stock %q (Go-side options only)", of.protoTag, sf.Tag.Get("protobuf")))
	}
	if ss := stockShape(sf.Type); of.shape != ss {
		problems = append(problems, fmt.Sprintf("type: draext %s, stock %s", of.shape, ss))
	}
	return problems, notes
}

func withoutInline(opts []string) []string {
	return slices.DeleteFunc(slices.Clone(opts), func(o string) bool { return o == "inline" })
}

// parseJSONTag splits a json tag into name and sorted options.
func parseJSONTag(tag string) (string, []string) {
	name, opts, _ := strings.Cut(tag, ",")
	if opts == "" {
		return name, nil
	}
	list := strings.Split(opts, ",")
	sort.Strings(list)
	return name, list
}

// protobufTag is a protobuf struct tag: what decides the bytes on the wire
// (wire type, field number, label, name, packed) and the options that only
// affect gogo's generated Go code.
type protobufTag struct {
	wire   string
	goOnly string
}

func parseProtobufTag(tag string) protobufTag {
	var wire, goOnly []string
	for i, part := range strings.Split(tag, ",") {
		key, _, _ := strings.Cut(part, "=")
		switch {
		case i < 2, key == "opt", key == "rep", key == "req", key == "name", key == "packed":
			wire = append(wire, part)
		default:
			goOnly = append(goOnly, part)
		}
	}
	sort.Strings(goOnly)
	return protobufTag{wire: strings.Join(wire, ","), goOnly: strings.Join(goOnly, ",")}
}

// typeNames are the paired draext types, sorted.
func (m *manifest) typeNames() []string {
	names := make([]string, 0, len(m.byName))
	for name := range m.byName {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// stockOnlyField is a field of a stock type that draext's type lacks.
type stockOnlyField struct {
	typeName string
	field    reflect.StructField
}

// stockOnly lists the stock fields that draext lacks, by type and field.
func (m *manifest) stockOnly() []stockOnlyField {
	var out []stockOnlyField
	for _, name := range m.typeNames() {
		p := m.byName[name]
		for i, keep := range p.keep {
			if !keep {
				out = append(out, stockOnlyField{typeName: p.stock.Name(), field: p.stock.Field(i)})
			}
		}
	}
	return out
}

// kubeTree is the patched Kubernetes tree: $KUBE_TREE, by default
// ../../_output/kubernetes.
func kubeTree(t *testing.T) string {
	t.Helper()
	tree := os.Getenv("KUBE_TREE")
	if tree == "" {
		tree = filepath.Join("..", "..", "_output", "kubernetes")
	}
	if _, err := os.Stat(tree); err != nil {
		t.Fatalf("no patched tree at %s (run make patches-apply, or set KUBE_TREE): %v", tree, err)
	}
	return tree
}
