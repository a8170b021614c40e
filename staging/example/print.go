// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// outputAPIVersion is the apiVersion of the plugin's own -o json|yaml
// objects (kinds NodeExtendedResourceList, PodExtendedResources,
// DeviceClassExtendedResourceList). Their field names are stable.
const outputAPIVersion = "draext.dev/v1alpha1"

// Output formats of -o.
const (
	outputTable = ""
	outputWide  = "wide"
	outputJSON  = "json"
	outputYAML  = "yaml"
)

// checkOutput validates -o.
func checkOutput(format string) error {
	switch format {
	case outputTable, outputWide, outputJSON, outputYAML:
		return nil
	}
	return fmt.Errorf("unknown output format %q for -o/--output: want json, yaml or wide", format)
}

// printObject writes v as JSON or YAML; it reports whether format is one
// of those.
func printObject(out io.Writer, format string, v any) (bool, error) {
	switch format {
	case outputJSON:
		data, err := json.MarshalIndent(v, "", "    ")
		if err != nil {
			return true, fmt.Errorf("encode the output as JSON: %w", err)
		}
		_, err = fmt.Fprintf(out, "%s\n", data)
		return true, err
	case outputYAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return true, fmt.Errorf("encode the output as YAML: %w", err)
		}
		_, err = out.Write(data)
		return true, err
	}
	return false, nil
}

// table writes rows under upper-case headers, aligned like kubectl get.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, columns []string) *table {
	// kubectl's printers.GetNewTabWriter settings.
	t := &table{w: tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)}
	t.row(columns...)
	return t
}

// cellCleaner keeps a cell on one line and in one column.
var cellCleaner = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

func (t *table) row(cells ...string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = cellCleaner.Replace(c)
	}
	fmt.Fprintln(t.w, strings.Join(clean, "\t"))
}

func (t *table) flush() error { return t.w.Flush() }

// orNone is kubectl's <none> for an empty cell.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
