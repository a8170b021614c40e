// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2ereport

import (
	"strings"
	"testing"
	"time"
)

const testPage = `# The e2e suite against stock v1.35.4

Run 2026-12-04 01:01 UTC by ` + "`make e2e-upstream VERSION=v1.35.4`" + `: a local cluster.

Passed 2, failed 1, skipped 1 of 4 specs.

| Spec | Labels | Result | Time | Why |
|---|---|---|---|---|
| A spec \| with a bar | row:a | passed | 0s |  |
| B one | row:b | failed | 5s | want Invalid, got <nil> |
| B two | row:b | passed | 1s |  |
| C | row:c | skipped | 0s | no driver |
`

func TestParsePage(t *testing.T) {
	page, err := ParsePage("e2e-upstream/v1.35.4.md", strings.NewReader(testPage))
	if err != nil {
		t.Fatal(err)
	}
	if page.Version != "v1.35.4" || page.Date != "2026-12-04" {
		t.Errorf("version %q, date %q", page.Version, page.Date)
	}
	want := map[string]string{"A spec | with a bar": "passed", "B one": "failed", "B two": "passed", "C": "skipped"}
	if len(page.Results) != len(want) {
		t.Errorf("results %v, want %v", page.Results, want)
	}
	for name, state := range want {
		if page.Results[name] != state {
			t.Errorf("%q: %q, want %q", name, page.Results[name], state)
		}
	}
	if _, err := ParsePage("x.md", strings.NewReader("# something else\n")); err == nil {
		t.Error("a page that is not one of make e2e-upstream was accepted")
	}
}

func TestUpstreamTable(t *testing.T) {
	page135, err := ParsePage("docs/e2e-upstream/v1.35.4.md", strings.NewReader(testPage))
	if err != nil {
		t.Fatal(err)
	}
	page134 := Page{Version: "v1.34.4", Date: "2026-12-05", File: "docs/e2e-upstream/v1.34.4.md", Results: map[string]string{
		"A spec | with a bar": "failed", "B one": "failed", "B two": "failed",
	}}
	suite := []Spec{
		{Name: "A spec | with a bar", Labels: []string{"beyond-upstream", "row:a"}},
		{Name: "B one", Labels: []string{"row:b"}},
		{Name: "B two", Labels: []string{"row:b"}},
		{Name: "C", Labels: []string{"row:c"}},
		{Name: "D", Labels: nil},
	}
	readme := "# Title\n\n" + TableBegin + `
| Behaviour | Upstream | draext (v1.33.13) |
|---|---|---|
| Served by DRA <!-- row:a --> | old | yes \| really |
| Init containers <!-- row:b --> | old | yes |
| Driver <!-- row:c --> | old | yes |
` + TableEnd + "\n\nMore.\n"

	got, err := UpstreamTable(readme, suite, []Page{page135, page134})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\n" + TableBegin + `
| Behaviour | [v1.34.4](docs/e2e-upstream/v1.34.4.md) | [v1.35.4](docs/e2e-upstream/v1.35.4.md) | draext (v1.33.13) |
|---|---|---|---|
| Served by DRA <!-- row:a --> | no | yes | yes \| really |
| Init containers <!-- row:b --> | no | partly (1 of 2 passed) | yes |
| Driver <!-- row:c --> | not run | skipped | yes |
` + TableEnd + "\n\nMore.\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Generating again from its own output gives the same table.
	again, err := UpstreamTable(got, suite, []Page{page135, page134})
	if err != nil || again != got {
		t.Errorf("not stable: %v\n%s", err, again)
	}

	for name, tc := range map[string]struct {
		readme string
		suite  []Spec
		want   string
	}{
		"no markers":       {readme: "# Title\n", suite: suite, want: "markers"},
		"row without key":  {readme: TableBegin + "\n| X | a | b |\n" + TableEnd, suite: suite, want: "has no <!-- row:KEY --> comment"},
		"key without spec": {readme: TableBegin + "\n| X <!-- row:zz --> | a | b |\n" + TableEnd, suite: suite, want: "no spec of the suite has the label row:zz"},
		"label without row": {readme: TableBegin + "\n| X <!-- row:a --> | a | b |\n| Y <!-- row:b --> | a | b |\n" + TableEnd, suite: suite,
			want: "specs carry the row labels c, which no README table row has"},
		"duplicate key": {readme: TableBegin + "\n| X <!-- row:a --> | a | b |\n| Y <!-- row:a --> | a | b |\n" + TableEnd, suite: suite, want: `two rows have key "a"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := UpstreamTable(tc.readme, tc.suite, []Page{page135})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A page run against a release with its forward series applied reads back
// as version <release>+forward and gets its own column, right after the
// stock column of the same release.
func TestForwardPage(t *testing.T) {
	started, err := time.Parse(pageTime, "2026-12-06 18:00 UTC")
	if err != nil {
		t.Fatal(err)
	}
	run := Result{Version: "v1.35.4" + ForwardSuffix, Started: started, Specs: []Spec{
		{Name: "A spec | with a bar", Labels: []string{"row:a"}, State: "passed"},
		{Name: "B one", Labels: []string{"row:b"}, State: "passed"},
		{Name: "B two", Labels: []string{"row:b"}, State: "passed"},
		{Name: "C", Labels: []string{"row:c"}, State: "failed", Why: "no driver"},
	}}
	var b strings.Builder
	if err := run.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# The e2e suite against v1.35.4+forward: v1.35.4 with the forward series\n",
		"by `make e2e-upstream VERSION=v1.35.4 FORWARD=1`",
		"patches/v1.35, `RELEASE_BRANCH=v1.35 make build`",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q:\n%s", want, b.String())
		}
	}
	forward, err := ParsePage("docs/e2e-upstream/v1.35.4-forward.md", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if forward.Version != "v1.35.4+forward" || forward.Date != "2026-12-06" {
		t.Errorf("version %q, date %q", forward.Version, forward.Date)
	}
	stock, err := ParsePage("docs/e2e-upstream/v1.35.4.md", strings.NewReader(testPage))
	if err != nil {
		t.Fatal(err)
	}
	suite := []Spec{
		{Name: "A spec | with a bar", Labels: []string{"row:a"}},
		{Name: "B one", Labels: []string{"row:b"}},
		{Name: "B two", Labels: []string{"row:b"}},
		{Name: "C", Labels: []string{"row:c"}},
	}
	readme := TableBegin + "\n| Served <!-- row:a --> | x |\n| Init <!-- row:b --> | x |\n| Driver <!-- row:c --> | x |\n" + TableEnd
	// Both orders of the pages give the same table.
	for _, pages := range [][]Page{{forward, stock}, {stock, forward}} {
		got, err := UpstreamTable(readme, suite, pages)
		if err != nil {
			t.Fatal(err)
		}
		want := TableBegin + `
| Behaviour | [v1.35.4](docs/e2e-upstream/v1.35.4.md) | [v1.35.4 with the forward series](docs/e2e-upstream/v1.35.4-forward.md) | draext (v1.33.13) |
|---|---|---|---|
| Served <!-- row:a --> | yes | yes | x |
| Init <!-- row:b --> | partly (1 of 2 passed) | yes | x |
| Driver <!-- row:c --> | skipped | no | x |
` + TableEnd
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	}
}
