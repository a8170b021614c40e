// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2ereport

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// focused is a run focused on "evicts|new": the specs it did not run are
// skipped without a message; "Gone" is a spec the suite no longer has.
const focused = `[{
  "StartTime": "2026-12-05T09:40:00Z",
  "SpecReports": [
    {"ContainerHierarchyTexts": ["Extended resources"], "ContainerHierarchyLabels": [["beyond-upstream"]],
     "LeafNodeType": "It", "LeafNodeText": "one pod | one GPU", "LeafNodeLabels": ["stock-driver"], "State": "skipped"},
    {"ContainerHierarchyTexts": ["Preemption"], "LeafNodeType": "It", "LeafNodeText": "evicts", "State": "passed", "RunTime": 7000000000},
    {"ContainerHierarchyTexts": ["Preemption"], "LeafNodeType": "It", "LeafNodeText": "new", "LeafNodeLabels": ["row:new"],
     "State": "failed", "RunTime": 66000000000, "Failure": {"Message": "Timed out after 60s.\nPodScheduled of pod slow"}},
    {"ContainerHierarchyTexts": ["Preemption"], "LeafNodeType": "It", "LeafNodeText": "not run, not on the page", "State": "skipped"},
    {"ContainerHierarchyTexts": ["Migration"], "LeafNodeType": "It", "LeafNodeText": "moves", "State": "skipped"}
  ]
}]`

func TestMerge(t *testing.T) {
	parse := func(report string) Result {
		t.Helper()
		r, err := Parse("v1.35.4", strings.NewReader(report))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	write := func(r Result) string {
		t.Helper()
		var b strings.Builder
		if err := r.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	read := func(page string) Result {
		t.Helper()
		r, err := ReadPage("v1.35.4.md", strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	full := parse(report)
	full.Specs = append(full.Specs, Spec{Name: "Gone spec", State: "passed", RunTime: time.Second})
	for i := range full.Specs {
		// A page has whole seconds.
		full.Specs[i].RunTime = full.Specs[i].RunTime.Round(time.Second)
	}
	page := read(write(full))
	if diff := cmp.Diff(full, page); diff != "" {
		t.Fatalf("ReadPage of WriteMarkdown (-wrote +read):\n%s", diff)
	}

	merged, err := Merge(page, parse(focused), "evicts|new")
	if err != nil {
		t.Fatal(err)
	}
	want := Result{
		Version: "v1.35.4",
		Started: time.Date(2026, 12, 4, 0, 10, 0, 0, time.UTC),
		Specs: []Spec{
			{Name: "Extended resources one pod | one GPU", Labels: []string{"beyond-upstream", "stock-driver"}, State: "passed", RunTime: 12 * time.Second},
			{Name: "Preemption evicts", State: "passed", RunTime: 7 * time.Second, Rerun: "2026-12-05 09:40 UTC"},
			{Name: "Migration moves", State: "skipped", Why: "no device-plugin node"},
			{Name: "Preemption new", Labels: []string{"row:new"}, State: "failed", RunTime: 66 * time.Second, Why: "Timed out after 60s. PodScheduled of pod slow", Rerun: "2026-12-05 09:40 UTC"},
		},
		Reruns: []string{"Re-run 2026-12-05 09:40 UTC: 2 spec(s) matching `evicts|new` (`make e2e-upstream VERSION=v1.35.4 FOCUS=...`); their Time cells say so."},
	}
	if diff := cmp.Diff(want, merged); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	out := write(merged)
	for _, line := range []string{
		"Run 2026-12-04 00:10 UTC by `make e2e-upstream VERSION=v1.35.4`: a local cluster of the release's stock binaries",
		want.Reruns[0],
		"Passed 2, failed 1, skipped 1 of 4 specs.",
		"| Preemption evicts |  | passed | 7s, re-run 2026-12-05 09:40 UTC |  |",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("merged page lacks the line %q:\n%s", line, out)
		}
	}
	// A second focused run keeps the first one's line and rows.
	again := parse(strings.Replace(strings.Replace(focused, "2026-12-05T09:40:00Z", "2026-12-06T08:00:00Z", 1),
		`"LeafNodeText": "evicts", "State": "passed"`, `"LeafNodeText": "evicts", "State": "skipped"`, 1))
	twice, err := Merge(read(out), again, "new")
	if err != nil {
		t.Fatal(err)
	}
	if len(twice.Reruns) != 2 || twice.Specs[1].Rerun != "2026-12-05 09:40 UTC" || twice.Specs[3].Rerun != "2026-12-06 08:00 UTC" {
		t.Errorf("second Merge: reruns %q, specs %+v", twice.Reruns, twice.Specs)
	}
	// The page of ParsePage (the README table's input) reads the merged page.
	p, err := ParsePage("v1.35.4.md", strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if p.Date != "2026-12-04" || p.Results["Preemption new"] != "failed" {
		t.Errorf("ParsePage of the merged page: %+v", p)
	}
}

func TestMergeErrors(t *testing.T) {
	page, err := Parse("v1.35.4", strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	other, err := Parse("v1.34.4", strings.NewReader(focused))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(page, other, "evicts"); err == nil || !strings.Contains(err.Error(), "the page is of v1.35.4, the run of v1.34.4") {
		t.Errorf("Merge of another release: %v", err)
	}
	none := strings.NewReplacer(`"State": "passed"`, `"State": "skipped"`, `"State": "failed"`, `"State": "skipped"`, `"Failure": {"Message": "Timed out after 60s.\nPodScheduled of pod slow"}`, `"RunTime": 0`).Replace(focused)
	idle, err := Parse("v1.35.4", strings.NewReader(none))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(page, idle, "nothing"); err == nil || !strings.Contains(err.Error(), "ran no spec") {
		t.Errorf("Merge of a run that ran nothing: %v", err)
	}
	for name, page := range map[string]string{
		"no run line": "# The e2e suite against stock v1.35.4\n\n| a |  | passed | 1s |  |\n",
		"bad time":    "# The e2e suite against stock v1.35.4\n\nRun 2026-12-04 00:10 UTC by x\n\n| a |  | passed | soon |  |\n",
	} {
		if _, err := ReadPage("p.md", strings.NewReader(page)); err == nil {
			t.Errorf("ReadPage of a page with %s: no error", name)
		}
	}
}
