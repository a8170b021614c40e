// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2ereport

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// RowLabelPrefix starts the Ginkgo label that ties a spec to a row of the
// README table "What works, against upstream": a spec labelled
// "row:init-sidecar" checks the row whose behaviour cell ends with the
// comment <!-- row:init-sidecar -->.
const RowLabelPrefix = "row:"

// The markers around the generated table in the README.
const (
	TableBegin = "<!-- upstream-table:begin (make upstream-table writes the release columns from docs/e2e-upstream; edit the other cells) -->"
	TableEnd   = "<!-- upstream-table:end -->"
)

// Page is what UpstreamTable reads of one page that WriteMarkdown wrote:
// the release, when the suite ran, and the result of every spec by name.
type Page struct {
	Version string
	Date    string
	// File is the page's path relative to the README, for the links.
	File    string
	Results map[string]string
}

// pageTitle is the first line of a page: "against stock v1.35.4", or for a
// release with a forward series applied (version v1.37.2+forward) "against
// v1.37.2+forward: ...".
var pageTitle = regexp.MustCompile(`^# The e2e suite against (?:stock (v\d+\.\d+\.\d+)|(v\d+\.\d+\.\d+\+forward):.*)$`)

// ForwardSuffix marks the version of a page that was run against a release
// with the forward series of its minor applied (patches/v1.MM).
const ForwardSuffix = "+forward"

// runCommand is the make command that writes the page of version.
func runCommand(version string) string {
	if release, ok := strings.CutSuffix(version, ForwardSuffix); ok {
		return "make e2e-upstream VERSION=" + release + " FORWARD=1"
	}
	return "make e2e-upstream VERSION=" + version
}

// columnTitle is a page's column heading in the README table.
func columnTitle(version string) string {
	if release, ok := strings.CutSuffix(version, ForwardSuffix); ok {
		return release + " with the forward series"
	}
	return version
}

// ParsePage reads a page of WriteMarkdown (through ReadPage): its release,
// the day of its run and each spec's result.
func ParsePage(file string, r io.Reader) (Page, error) {
	result, err := ReadPage(file, r)
	if err != nil {
		return Page{}, err
	}
	page := Page{Version: result.Version, Date: result.Started.Format("2006-01-02"), File: file, Results: map[string]string{}}
	for _, s := range result.Specs {
		page.Results[s.Name] = s.State
	}
	return page, nil
}

// splitRow returns the cells of a Markdown table row, unescaped; nil for a
// line that is not one.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil
	}
	var cells []string
	var cur strings.Builder
	body := line[1 : len(line)-1]
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '\\' && i+1 < len(body) && body[i+1] == '|':
			cur.WriteByte('|')
			i++
		case body[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(body[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// rowKey is the key of a README row: the row:KEY comment in its first cell.
var rowKey = regexp.MustCompile(`<!-- row:([a-z0-9-]+) -->`)

// UpstreamTable rewrites the table between TableBegin and TableEnd of the
// README: for every row, the behaviour cell (first) and the draext cell
// (last) stay as written; there is one column per page, in version order,
// and its cell says what the specs labelled with the row's key did against
// that release. suite lists every spec of the suite with its labels (a dry
// run's report). A row without a key, or a key no spec carries, is an
// error: the table must say only what a run showed.
func UpstreamTable(readme string, suite []Spec, pages []Page) (string, error) {
	begin := strings.Index(readme, TableBegin)
	end := strings.Index(readme, TableEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("the README has no %q ... %q markers", TableBegin, TableEnd)
	}
	old := readme[begin+len(TableBegin) : end]
	// semver ignores build metadata: a release's forward column follows its
	// stock one.
	sort.Slice(pages, func(i, j int) bool {
		if c := semver.Compare(pages[i].Version, pages[j].Version); c != 0 {
			return c < 0
		}
		return pages[i].Version < pages[j].Version
	})

	specsOf := map[string][]string{}
	for _, s := range suite {
		for _, l := range s.Labels {
			if key, ok := strings.CutPrefix(l, RowLabelPrefix); ok {
				specsOf[key] = append(specsOf[key], s.Name)
			}
		}
	}

	var b strings.Builder
	b.WriteString("\n| Behaviour |")
	for _, p := range pages {
		fmt.Fprintf(&b, " [%s](%s) |", columnTitle(p.Version), p.File)
	}
	b.WriteString(" draext (v1.33.13) |\n|---|")
	for range pages {
		b.WriteString("---|")
	}
	b.WriteString("---|\n")
	rows, used := 0, map[string]bool{}
	for _, line := range strings.Split(old, "\n") {
		cells := splitRow(line)
		if len(cells) < 2 || cells[0] == "Behaviour" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		m := rowKey.FindStringSubmatch(cells[0])
		if m == nil {
			return "", fmt.Errorf("README table row %q has no <!-- row:KEY --> comment", truncate(cells[0], 60))
		}
		key := m[1]
		if used[key] {
			return "", fmt.Errorf("README table: two rows have key %q", key)
		}
		used[key] = true
		specs := specsOf[key]
		if len(specs) == 0 {
			return "", fmt.Errorf("README table row %q: no spec of the suite has the label %s%s", key, RowLabelPrefix, key)
		}
		fmt.Fprintf(&b, "| %s |", escape(cells[0]))
		for _, p := range pages {
			fmt.Fprintf(&b, " %s |", rowCell(specs, p))
		}
		fmt.Fprintf(&b, " %s |\n", escape(cells[len(cells)-1]))
		rows++
	}
	if rows == 0 {
		return "", fmt.Errorf("the README table between the markers has no row")
	}
	var keys []string
	for key := range specsOf {
		if !used[key] {
			keys = append(keys, key)
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return "", fmt.Errorf("specs carry the row labels %s, which no README table row has", strings.Join(keys, ", "))
	}
	return readme[:begin+len(TableBegin)] + b.String() + readme[end:], nil
}

// rowCell is what the specs of one row did against one release: "yes"
// when every spec that ran passed, "no" when every one failed, "partly"
// otherwise; skipped specs and specs the page does not list (added after
// the run) are counted apart.
func rowCell(specs []string, p Page) string {
	var passed, failed, skipped, missing int
	for _, name := range specs {
		switch state, ok := p.Results[name]; {
		case !ok:
			missing++
		case state == "passed":
			passed++
		case state == "skipped" || state == "pending":
			skipped++
		default:
			failed++
		}
	}
	var verdict string
	switch {
	case passed > 0 && failed == 0:
		verdict = "yes"
	case passed == 0 && failed > 0:
		verdict = "no"
	case passed > 0 && failed > 0:
		verdict = fmt.Sprintf("partly (%d of %d passed)", passed, passed+failed)
	case skipped > 0:
		verdict = "skipped"
	default:
		verdict = "not run"
	}
	var notes []string
	if skipped > 0 && verdict != "skipped" {
		notes = append(notes, fmt.Sprintf("%d skipped", skipped))
	}
	if missing > 0 && verdict != "not run" {
		notes = append(notes, fmt.Sprintf("%d not run", missing))
	}
	if len(notes) > 0 {
		verdict += " (" + strings.Join(notes, ", ") + ")"
	}
	return verdict
}

func escape(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
