// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package e2ereport turns the JSON report of a Ginkgo run of the e2e suite
// into the Markdown page of make e2e-upstream: which spec passed, failed or
// skipped against one release, and why.
package e2ereport

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// suiteReport holds the fields of Ginkgo's types.Report that are read here.
type suiteReport struct {
	StartTime   time.Time
	SpecReports []specReport
}

type specReport struct {
	ContainerHierarchyTexts  []string
	ContainerHierarchyLabels [][]string
	LeafNodeType             string
	LeafNodeText             string
	LeafNodeLabels           []string
	State                    string
	RunTime                  time.Duration
	Failure                  *struct{ Message string }
}

// Spec is one spec of the suite and what happened to it.
type Spec struct {
	Name    string
	Labels  []string
	State   string
	RunTime time.Duration
	// Why is the first line of the failure or skip message (two when the
	// first only says that an assertion timed out).
	Why string
	// Filtered is a spec that the run's focus or label filter left out:
	// Ginkgo reports it as skipped, without a message.
	Filtered bool
	// Rerun is when a focused run that Merge took this spec from started
	// (a page's time format), empty for the run of the page.
	Rerun string
}

// Result is one run of the suite against one release.
type Result struct {
	Version string
	Started time.Time
	Specs   []Spec
	// Reruns are the lines of a page that say which focused runs Merge
	// took specs from, oldest first.
	Reruns []string
}

// Parse reads Ginkgo's JSON report (a list of suite reports) and returns its
// specs in their order in the suite, without the suite's setup nodes.
func Parse(version string, r io.Reader) (Result, error) {
	var suites []suiteReport
	if err := json.NewDecoder(r).Decode(&suites); err != nil {
		return Result{}, fmt.Errorf("reading the Ginkgo JSON report: %w", err)
	}
	if len(suites) == 0 {
		return Result{}, fmt.Errorf("the Ginkgo JSON report has no suite")
	}
	result := Result{Version: version, Started: suites[0].StartTime}
	for _, suite := range suites {
		for _, s := range suite.SpecReports {
			if s.LeafNodeType != "It" {
				continue
			}
			spec := Spec{
				Name:    strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " "),
				State:   s.State,
				RunTime: s.RunTime,
			}
			seen := map[string]bool{}
			for _, labels := range append(append([][]string{}, s.ContainerHierarchyLabels...), s.LeafNodeLabels) {
				for _, l := range labels {
					if !seen[l] {
						seen[l] = true
						spec.Labels = append(spec.Labels, l)
					}
				}
			}
			sort.Strings(spec.Labels)
			if s.Failure != nil && s.State != "passed" {
				spec.Why = why(s.Failure.Message)
			}
			spec.Filtered = s.State == "skipped" && s.Failure == nil
			result.Specs = append(result.Specs, spec)
		}
	}
	return result, nil
}

// why returns the first line of a failure message, and the line after it
// when the first says only that something timed out or was not as expected
// (Gomega puts the assertion's description there).
func why(message string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(message), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > 1 && (strings.HasPrefix(lines[0], "Timed out after") || strings.HasPrefix(lines[0], "Failed after") || lines[0] == "Expected") {
		return lines[0] + " " + lines[1]
	}
	return lines[0]
}

// Count returns how many specs ended in state.
func (r Result) Count(state string) int {
	n := 0
	for _, s := range r.Specs {
		if s.State == state {
			n++
		}
	}
	return n
}

// WriteMarkdown writes the page of one release.
func (r Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	if release, ok := strings.CutSuffix(r.Version, ForwardSuffix); ok {
		minor := release[:strings.LastIndex(release, ".")]
		fmt.Fprintf(&b, "# The e2e suite against %s: %s with the forward series\n\n", r.Version, release)
		fmt.Fprintf(&b, "Run %s by `%s`: a local cluster of %s's binaries\n", r.Started.UTC().Format(pageTime), runCommand(r.Version), release)
		fmt.Fprintf(&b, "with the forward series (patches/%s, `RELEASE_BRANCH=%s make build`), two nodes (DRA and\n", minor, minor)
		b.WriteString("device plugin), the example driver and the stock-library driver. A spec that fails here\n")
		b.WriteString("checks behaviour that the release lacks even with the series, or needs something of the\n")
		b.WriteString("cluster that it lacks; the reason is the spec's first message line.\n\n")
	} else {
		fmt.Fprintf(&b, "# The e2e suite against stock %s\n\n", r.Version)
		fmt.Fprintf(&b, "Run %s by `%s`: a local cluster of the release's stock binaries\n", r.Started.UTC().Format(pageTime), runCommand(r.Version))
		b.WriteString("(`make build-upstream`) with two nodes (DRA and device plugin), the example driver and the\n")
		b.WriteString("stock-library driver. A spec that fails here checks behaviour this release does not have, or\n")
		b.WriteString("needs something of the cluster that it lacks; the reason is the spec's first message line.\n\n")
	}
	for _, line := range r.Reruns {
		b.WriteString(line + "\n\n")
	}
	fmt.Fprintf(&b, "Passed %d, failed %d, skipped %d of %d specs.\n\n", r.Count("passed"), r.Count("failed")+r.Count("panicked")+r.Count("timedout")+r.Count("interrupted"), r.Count("skipped")+r.Count("pending"), len(r.Specs))
	b.WriteString("| Spec | Labels | Result | Time | Why |\n|---|---|---|---|---|\n")
	for _, s := range r.Specs {
		runTime := s.RunTime.Round(time.Second).String()
		if s.Rerun != "" {
			runTime += rerunMark + s.Rerun
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(s.Name), cell(strings.Join(s.Labels, ", ")), s.State, runTime, cell(truncate(s.Why, 200)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
