// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2ereport

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const report = `[{
  "StartTime": "2026-12-04T00:10:00Z",
  "SpecReports": [
    {"LeafNodeType": "BeforeSuite", "State": "passed"},
    {"ContainerHierarchyTexts": ["Extended resources"], "ContainerHierarchyLabels": [["beyond-upstream"]],
     "LeafNodeType": "It", "LeafNodeText": "one pod | one GPU", "LeafNodeLabels": ["stock-driver", "beyond-upstream"],
     "State": "passed", "RunTime": 12400000000},
    {"ContainerHierarchyTexts": ["Preemption"], "ContainerHierarchyLabels": [[]],
     "LeafNodeType": "It", "LeafNodeText": "evicts", "State": "failed", "RunTime": 60000000000,
     "Failure": {"Message": "Timed out after 60s.\npod p is not Running\nExpected"}},
    {"ContainerHierarchyTexts": ["Migration"], "LeafNodeType": "It", "LeafNodeText": "moves", "State": "skipped",
     "Failure": {"Message": "no device-plugin node"}}
  ]
}]`

func TestParse(t *testing.T) {
	got, err := Parse("v1.35.4", strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Version: "v1.35.4",
		Started: time.Date(2026, 12, 4, 0, 10, 0, 0, time.UTC),
		Specs: []Spec{
			{Name: "Extended resources one pod | one GPU", Labels: []string{"beyond-upstream", "stock-driver"}, State: "passed", RunTime: 12400 * time.Millisecond},
			{Name: "Preemption evicts", State: "failed", RunTime: time.Minute, Why: "Timed out after 60s. pod p is not Running"},
			{Name: "Migration moves", State: "skipped", Why: "no device-plugin node"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	var b strings.Builder
	if err := got.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"Passed 1, failed 1, skipped 1 of 3 specs.",
		`| Extended resources one pod \| one GPU | beyond-upstream, stock-driver | passed | 12s |  |`,
		"| Preemption evicts |  | failed | 1m0s | Timed out after 60s. pod p is not Running |",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("page lacks the line %q:\n%s", line, b.String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for name, input := range map[string]string{
		"not JSON":  "ginkgo",
		"no suites": "[]",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse("v1.34.4", strings.NewReader(input)); err == nil {
				t.Errorf("Parse(%q) did not fail", input)
			}
		})
	}
}
