// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2ereport

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
)

const (
	// pageTime is how a page writes when a run started.
	pageTime = "2006-01-02 15:04 MST"
	// rerunMark joins a spec's run time and the start of the focused run
	// that its row comes from, in the Time cell.
	rerunMark = ", re-run "
)

// ReadPage reads a page that WriteMarkdown wrote back into a Result: the
// release, when its run started, the lines about focused runs, and every
// spec's row (the reason as the page has it, maybe shortened).
func ReadPage(file string, r io.Reader) (Result, error) {
	var result Result
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for scanner.Scan() {
		line := scanner.Text()
		if m := pageTitle.FindStringSubmatch(line); m != nil {
			result.Version = m[1] + m[2]
			continue
		}
		if rest, ok := strings.CutPrefix(line, "Run "); ok && result.Started.IsZero() {
			if len(rest) < len("2006-01-02 15:04 UTC") {
				return Result{}, fmt.Errorf("%s: the run line %q has no time", file, line)
			}
			started, err := time.Parse(pageTime, rest[:len("2006-01-02 15:04 UTC")])
			if err != nil {
				return Result{}, fmt.Errorf("%s: the run line %q: %w", file, line, err)
			}
			result.Started = started
			continue
		}
		if strings.HasPrefix(line, "Re-run ") {
			result.Reruns = append(result.Reruns, line)
			continue
		}
		cells := splitRow(line)
		if len(cells) != 5 || cells[0] == "Spec" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		spec := Spec{Name: cells[0], State: cells[2], Why: cells[4]}
		if cells[1] != "" {
			spec.Labels = strings.Split(cells[1], ", ")
		}
		runTime, rerun, _ := strings.Cut(cells[3], rerunMark)
		d, err := time.ParseDuration(runTime)
		if err != nil {
			return Result{}, fmt.Errorf("%s: the time of spec %q: %w", file, spec.Name, err)
		}
		spec.RunTime, spec.Rerun = d, rerun
		result.Specs = append(result.Specs, spec)
	}
	if err := scanner.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", file, err)
	}
	if result.Version == "" || result.Started.IsZero() || len(result.Specs) == 0 {
		return Result{}, fmt.Errorf("%s is not a page of make e2e-upstream (title, run line or spec table missing)", file)
	}
	return result, nil
}

// Merge returns the page with the specs that a focused run of the suite
// against the same release ran (focus is how it was focused, for the
// page): their rows are the run's, marked with its start; the other specs
// keep their rows. Rows stay in the page's order, so that the page's diff
// shows only what changed: a spec that the run ran and the page lacks is
// added at the end, one that the suite no longer has (not in the run's
// report) is dropped.
func Merge(page, run Result, focus string) (Result, error) {
	if page.Version != run.Version {
		return Result{}, fmt.Errorf("the page is of %s, the run of %s", page.Version, run.Version)
	}
	stamp := run.Started.UTC().Format(pageTime)
	inRun := map[string]Spec{}
	ran := 0
	for _, s := range run.Specs {
		if !s.Filtered {
			s.Rerun = stamp
			ran++
		}
		inRun[s.Name] = s
	}
	if ran == 0 {
		return Result{}, fmt.Errorf("the run of %s started %s ran no spec (focus %q; or the suite's setup failed: see its log)", run.Version, stamp, focus)
	}
	merged := Result{Version: page.Version, Started: page.Started, Reruns: append([]string{}, page.Reruns...)}
	onPage := map[string]bool{}
	for _, s := range page.Specs {
		onPage[s.Name] = true
		switch r, ok := inRun[s.Name]; {
		case !ok:
		case r.Filtered:
			merged.Specs = append(merged.Specs, s)
		default:
			merged.Specs = append(merged.Specs, r)
		}
	}
	for _, s := range run.Specs {
		if !s.Filtered && !onPage[s.Name] {
			merged.Specs = append(merged.Specs, inRun[s.Name])
		}
	}
	merged.Reruns = append(merged.Reruns, fmt.Sprintf("Re-run %s: %d spec(s) matching `%s` (`%s FOCUS=...`); their Time cells say so.", stamp, ran, strings.ReplaceAll(focus, "`", "'"), runCommand(run.Version)))
	return merged, nil
}
