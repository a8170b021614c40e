// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
)

// stockVersion is the version of k8s.io/api this test is built with (go.mod,
// or go.v0NN.mod with -modfile). Test binaries carry no build information of
// their dependencies, so it comes from the path of a stock source file in the
// module cache, .../k8s.io/api@<version>/resource/v1/register.go.
func stockVersion() string {
	file := stockSourceFile()
	if _, rest, ok := strings.Cut(filepath.ToSlash(file), "k8s.io/api@"); ok {
		version, _, _ := strings.Cut(rest, "/")
		return version
	}
	return "(version unknown: " + file + ")"
}

// stockSourceFile is the source file of stock's resource/v1 that defines
// resourcev1.Resource (register.go), as the compiler saw it: in the module
// cache, in the directory of the package's other sources.
func stockSourceFile() string {
	fn := runtime.FuncForPC(reflect.ValueOf(resourcev1.Resource).Pointer())
	file, _ := fn.FileLine(fn.Entry())
	return file
}

const (
	reportTitle   = "# resource.k8s.io/v1: draext's types and stock k8s.io/api\n"
	sectionPrefix = "## k8s.io/api "
)

// writeReport writes the section of stock version v into the Markdown file
// at path, replacing an earlier section of v and keeping those of other
// versions: the test runs once per stock version, all into one file.
func writeReport(path, v string, m *manifest, enums enumComparison) error {
	sections := map[string]string{}
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !strings.HasPrefix(string(old), reportTitle):
		return fmt.Errorf("%s is not a report of this test: remove it", path)
	default:
		for _, s := range strings.Split(string(old), "\n"+sectionPrefix)[1:] {
			version, _, _ := strings.Cut(s, "\n")
			sections[version] = sectionPrefix + s
		}
	}
	sections[v] = reportSection(v, m, enums)
	versions := make([]string, 0, len(sections))
	for version := range sections {
		versions = append(versions, version)
	}
	sort.Slice(versions, func(i, j int) bool { return versionLess(versions[i], versions[j]) })
	var b strings.Builder
	b.WriteString(reportTitle + "\n")
	b.WriteString("Written by compat/upstream (TestV1StockOnlyFields, DRAEXT_COMPAT_REPORT), one section per stock\n")
	b.WriteString("version: the fields of stock resource.k8s.io/v1 that draext's resource.k8s.io/v1 does not have\n")
	b.WriteString("(added upstream after 1.33's v1beta2, which draext's v1 is built from), and where the two differ;\n")
	b.WriteString("the kinds draext does not serve and the enum values draext's types lack (TestV1Kinds, TestV1EnumValues).\n")
	for _, version := range versions {
		b.WriteString("\n" + strings.TrimRight(sections[version], "\n") + "\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func reportSection(v string, m *manifest, enums enumComparison) string {
	var b strings.Builder
	extras := m.stockOnly()
	fmt.Fprintf(&b, "%s%s\n\n", sectionPrefix, v)
	fmt.Fprintf(&b, "%d field(s) of stock that draext lacks. A stock client sends one only when it is set,\n", len(extras))
	b.WriteString("unless the table says always. draext's apiserver does not keep it: a JSON request gets a\n")
	b.WriteString("warning, or an error under strict field validation; in protobuf it is dropped silently.\n\n")
	b.WriteString("| Type | Field | JSON | Protobuf | Go type | Sent |\n|---|---|---|---|---|---|\n")
	for _, f := range extras {
		jsonTag := f.field.Tag.Get("json")
		sent := "when set"
		if _, opts := parseJSONTag(jsonTag); !slices.Contains(opts, "omitempty") && !slices.Contains(opts, "omitzero") {
			sent = "always"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | `%s` | `%s` | %s |\n", f.typeName, f.field.Name, jsonTag, f.field.Tag.Get("protobuf"), f.field.Type, sent)
	}
	var problems, notes []string
	for _, name := range m.typeNames() {
		for _, s := range m.byName[name].problems {
			problems = append(problems, name+"."+s)
		}
		for _, s := range m.byName[name].notes {
			notes = append(notes, name+"."+s)
		}
	}
	reportLists(&b, problems, notes)
	reportUnserved(&b, m.kinds)
	reportEnums(&b, enums)
	return b.String()
}

// reportLists writes the disagreements and the differences that do not
// change the wire, when there are any.
func reportLists(b *strings.Builder, problems, notes []string) {
	if len(problems) > 0 {
		b.WriteString("\nDisagreements (the test fails on them):\n\n")
		for _, s := range problems {
			fmt.Fprintf(b, "- %s\n", s)
		}
	}
	if len(notes) > 0 {
		b.WriteString("\nDifferences that do not change the wire:\n\n")
		for _, s := range notes {
			fmt.Fprintf(b, "- %s\n", s)
		}
	}
}

// reportUnserved lists the kinds of stock that draext has no type for.
func reportUnserved(b *strings.Builder, kinds kindSelection) {
	b.WriteString("\n### Kinds of stock resource.k8s.io/v1 that draext does not serve\n\n")
	if len(kinds.unserved) == 0 {
		b.WriteString("None: draext serves every kind of stock's resource.k8s.io/v1.\n")
	} else {
		b.WriteString("draext's resource.k8s.io/v1 has no type of these kinds (stock's scheme registers them): draext's\n")
		b.WriteString("apiserver does not serve them in v1, and a stock client's request for them fails as for any\n")
		b.WriteString("resource the server does not have.\n\n")
		for _, kind := range kinds.unserved {
			fmt.Fprintf(b, "- `%s`\n", kind)
		}
	}
	reportLists(b, kinds.problems, nil)
}

// reportEnums lists the enum values of stock that draext's types lack.
func reportEnums(b *strings.Builder, enums enumComparison) {
	b.WriteString("\n### Enum values of stock that draext's types lack\n\n")
	if len(enums.stockOnly) == 0 {
		b.WriteString("None: draext's types declare every value that stock's declare.\n")
	} else {
		b.WriteString("String constants of stock's named types that draext's type of the same name does not declare.\n")
		b.WriteString("A stock client may send them. The external types do not name them, but the API server may still\n")
		b.WriteString("accept one: docs/tools.md says which (a device taint's effect None is accepted and has no effect).\n\n")
		b.WriteString("| Type | Constant | Value |\n|---|---|---|\n")
		for _, v := range enums.stockOnly {
			typeName := "`" + v.typeName + "`"
			if !enums.ourTypes[v.typeName] {
				typeName += " (draext has no such type)"
			}
			constName := "`" + v.constName + "`"
			if v.byName {
				constName += " (untyped)"
			}
			fmt.Fprintf(b, "| %s | %s | `%q` |\n", typeName, constName, v.value)
		}
	}
	reportLists(b, enums.problems, enums.notes)
}

// versionLess orders v0.34.13 before v0.35.1; what does not parse sorts last.
func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return a < b
}

func versionParts(v string) [3]int {
	parts := [3]int{1 << 30, 1 << 30, 1 << 30}
	core, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), "-")
	for i, s := range strings.SplitN(core, ".", 3) {
		if n, err := strconv.Atoi(s); err == nil {
			parts[i] = n
		}
	}
	return parts
}
