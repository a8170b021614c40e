// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// classList is the output of `kubectl draext classes`.
type classList struct {
	APIVersion         string       `json:"apiVersion"`
	Kind               string       `json:"kind"`
	ResourceAPIVersion string       `json:"resourceAPIVersion"`
	Items              []classEntry `json:"items"`
}

// classEntry is a DeviceClass and the extended resource names it serves.
type classEntry struct {
	Name    string    `json:"name"`
	Created time.Time `json:"creationTimestamp"`
	// ExtendedResourceName is spec.extendedResourceName, "" when unset.
	ExtendedResourceName string `json:"extendedResourceName,omitempty"`
	// ExtendedResourceNames are the names the class serves: its explicit
	// name unless it loses it to another class, and its implicit name.
	ExtendedResourceNames []string `json:"extendedResourceNames"`
	// Conflicts are the other classes with the same explicit name.
	Conflicts []string `json:"conflicts,omitempty"`
	// LosesTo is the class that serves the explicit name instead.
	LosesTo   string   `json:"losesTo,omitempty"`
	Selectors []string `json:"selectors,omitempty"`
}

// buildClassList lists the classes, sorted by name.
func buildClassList(apiVersion string, classes []deviceClass) *classList {
	res := newResolver(classes)
	out := &classList{APIVersion: outputAPIVersion, Kind: "DeviceClassExtendedResourceList", ResourceAPIVersion: apiVersion, Items: []classEntry{}}
	for _, c := range classes {
		e := classEntry{Name: c.Name, Created: c.Created, ExtendedResourceName: c.ExtendedResourceName, Selectors: c.Selectors, ExtendedResourceNames: []string{}}
		if c.ExtendedResourceName != "" {
			for _, other := range res.candidates(c.ExtendedResourceName) {
				if other != c.Name {
					e.Conflicts = append(e.Conflicts, other)
				}
			}
			if res.winsExplicit(c) {
				e.ExtendedResourceNames = append(e.ExtendedResourceNames, c.ExtendedResourceName)
			} else {
				e.LosesTo = res.class(c.ExtendedResourceName).Name
			}
		}
		if implicit, ok := implicitName(c.Name); ok {
			e.ExtendedResourceNames = append(e.ExtendedResourceNames, implicit)
		}
		out.Items = append(out.Items, e)
	}
	slices.SortFunc(out.Items, func(a, b classEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var (
	classColumns     = []string{"DEVICECLASS", "EXTENDED RESOURCE NAMES", "CONFLICTS"}
	classWideColumns = []string{"CREATED", "SELECTORS"}
)

func printClassTable(out io.Writer, list *classList, wide bool) error {
	columns := classColumns
	if wide {
		columns = append(slices.Clone(columns), classWideColumns...)
	}
	t := newTable(out, columns)
	for _, e := range list.Items {
		conflicts := strings.Join(e.Conflicts, ",")
		if e.LosesTo != "" {
			conflicts = fmt.Sprintf("%s served by %s", e.ExtendedResourceName, e.LosesTo)
		}
		cells := []string{e.Name, orNone(strings.Join(e.ExtendedResourceNames, ", ")), orNone(conflicts)}
		if wide {
			cells = append(cells, e.Created.UTC().Format(time.RFC3339), orNone(strings.Join(e.Selectors, " && ")))
		}
		t.row(cells...)
	}
	return t.flush()
}
