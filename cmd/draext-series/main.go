// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-series is the small helper behind the patch-series scripts:
// it checks a series directory, derives versions, maps changed files to Go
// packages and restores exec bits in a tree assembled from module zips.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/draext/draext/internal/tooling/e2ereport"
	"github.com/draext/draext/internal/tooling/modzip"
	"github.com/draext/draext/internal/tooling/series"
	"github.com/draext/draext/internal/tooling/testselect"
)

const usage = `usage: draext-series <command> [args]

commands:
  lint [-docs ROOT] DIR
                       check a series directory (series file, checksums, names, subjects, trailers,
                       release notes, the texts of messages and TOPICS.md); -docs ROOT also checks the
                       texts of ROOT's docs/*.md (not docs/patches.md), README.md and CHANGELOG.md:
                       no patch named by its number or place, no reference to this project's tracker
  number [-renumber N] COMMITTED DIR
                       give the patch files that git format-patch wrote into DIR their stable
                       numbers: a patch keeps the number of the patch with its subject (or,
                       when only its message was reworded, its change) in the committed series
                       directory COMMITTED, a new one takes the next free number; -renumber N
                       numbers N, 2N, ... instead; writes DIR/series
  topics [-upstream] DIR
                       print the topics of the series in stacking order, one line each:
                       the topic id, then its patch files in series order; -upstream puts
                       where upstream stands (carry, proposal or local) after the id
  layout DIR           print how the topics of the series relate (TOPICS.md's "- Topics:" line):
                       stacked (each needs the ones above it) or independent (each applies
                       to the base release alone)
  pr DIR TOPIC         print the pull request description of TOPIC, in the sections of
                       kubernetes/kubernetes' .github/PULL_REQUEST_TEMPLATE.md; only a proposal
                       topic has one (upstream has a carry topic, only this series needs a local one)
  write-sums DIR       record the checksums of series and its patches in DIR/SHA256SUMS
  version DIR          print the version the patched binaries report (GIT_TAG + RELEASE)
  staging-version TAG  print the k8s.io/* staging module version for a release tag
  packages TREE        read changed paths (one per line) on stdin, print the Go packages covering them
  guards               read changed paths (one per line) on stdin, print the upstream test packages
                       that guard the shared mechanisms they touch; "# why" lines say which,
                       "race PKG" lines name packages whose *Concurrent* tests run with -race
  fix-exec-bits DIR    make files that start with "#!" executable
  table DIR DOC        write the table of the series' patches (subjects and trailers) into the
                       Markdown document DOC, between its BEGIN and END markers
  table-check DIR DOC  fail when the table in DOC is not the one the series gives
  e2e-results [-merge PAGE FOCUS] VERSION REPORT
                       print the Markdown page of one run of the e2e suite against a release
                       (make e2e-upstream) from Ginkgo's JSON REPORT; -merge: of a run focused
                       on FOCUS, print PAGE with the rows of the specs that the run ran replaced
  upstream-table [-check] SUITE README PAGE...
                       write the release columns of the README table "What works, against
                       upstream" from the pages of make e2e-upstream, joining their results to
                       the row labels of the specs in SUITE (the JSON report of a dry run);
                       -check fails when the README's table is not that one
`

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "draext-series: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("missing command\n%s", usage)
	}
	cmd, args := args[0], args[1:]
	need := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %d argument(s), got %d\n%s", cmd, n, len(args), usage)
		}
		return nil
	}
	switch cmd {
	case "lint":
		docsRoot := ""
		if len(args) > 0 && args[0] == "-docs" {
			if len(args) < 2 {
				return fmt.Errorf("lint: -docs takes the repository root\n%s", usage)
			}
			docsRoot, args = args[1], args[2:]
		}
		if err := need(1); err != nil {
			return err
		}
		var problems []error
		s, err := series.Load(args[0])
		if err != nil {
			problems = append(problems, fmt.Errorf("series %s is not valid:\n%s", args[0], indent(err.Error())))
		}
		if docsRoot != "" {
			if err := series.LintDocs(docsRoot); err != nil {
				problems = append(problems, fmt.Errorf("the docs of %s name patches by number or place, or refer to this project's tracker (name patches by subject or topic, say what a tracker item was about):\n%s", docsRoot, indent(err.Error())))
			}
		}
		if len(problems) > 0 {
			return errors.Join(problems...)
		}
		fmt.Fprintf(stdout, "series %s: %d patch(es) in %d topic(s) on %s, version %s, metadata complete\n", args[0], len(s.Patches), len(s.Topics), s.GitTag, s.Version())
		return nil
	case "number":
		step := 0
		if len(args) > 0 && args[0] == "-renumber" {
			if len(args) < 2 {
				return fmt.Errorf("number: -renumber takes a step\n%s", usage)
			}
			n, err := strconv.Atoi(args[1])
			if err != nil || n < 1 {
				return fmt.Errorf("number: -renumber %q: want a positive step", args[1])
			}
			step, args = n, args[2:]
		}
		if err := need(2); err != nil {
			return err
		}
		committed, err := series.Committed(args[0])
		if err != nil {
			return err
		}
		return series.Renumber(args[1], committed, step)
	case "topics", "pr":
		n, withUpstream := 1, false
		if cmd == "pr" {
			n = 2
		} else if len(args) > 0 && args[0] == "-upstream" {
			withUpstream, args = true, args[1:]
		}
		if err := need(n); err != nil {
			return err
		}
		s, err := series.Load(args[0])
		if err != nil {
			return fmt.Errorf("series %s is not valid:\n%s", args[0], indent(err.Error()))
		}
		if cmd == "pr" {
			text, err := s.PullRequest(args[1])
			if err != nil {
				return err
			}
			_, err = io.WriteString(stdout, text)
			return err
		}
		for _, t := range s.Topics {
			files := []string{t.ID}
			if withUpstream {
				files = append(files, t.Upstream)
			}
			for _, p := range s.TopicPatches(t.ID) {
				files = append(files, p.File)
			}
			fmt.Fprintln(stdout, strings.Join(files, " "))
		}
		return nil
	case "write-sums":
		if err := need(1); err != nil {
			return err
		}
		names, err := series.ReadSeries(args[0])
		if err != nil {
			return err
		}
		return series.WriteSums(args[0], names)
	case "layout":
		if err := need(1); err != nil {
			return err
		}
		data, err := os.ReadFile(filepath.Join(args[0], series.TopicsFile))
		if err != nil {
			return err
		}
		layout, err := series.ParseLayout(data)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, layout)
		return nil
	case "version":
		if err := need(1); err != nil {
			return err
		}
		v, err := version(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, v)
		return nil
	case "staging-version":
		if err := need(1); err != nil {
			return err
		}
		v, err := series.ValidateGitTag(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, v)
		return nil
	case "packages":
		if err := need(1); err != nil {
			return err
		}
		files, err := readLines(stdin)
		if err != nil {
			return err
		}
		for _, p := range testselect.Packages(testselect.OSFS(args[0]), files) {
			fmt.Fprintln(stdout, p)
		}
		return nil
	case "guards":
		if err := need(0); err != nil {
			return err
		}
		files, err := readLines(stdin)
		if err != nil {
			return err
		}
		pkgs, race, reasons := testselect.Guards(files)
		for _, r := range reasons {
			fmt.Fprintf(stdout, "# %s\n", r)
		}
		for _, p := range pkgs {
			fmt.Fprintln(stdout, p)
		}
		for _, p := range race {
			fmt.Fprintf(stdout, "race %s\n", p)
		}
		return nil
	case "e2e-results":
		var pagePath, focus string
		if len(args) > 0 && args[0] == "-merge" {
			if len(args) != 5 {
				return fmt.Errorf("e2e-results -merge takes a page, the focus, the version and the report\n%s", usage)
			}
			pagePath, focus, args = args[1], args[2], args[3:]
		}
		if err := need(2); err != nil {
			return err
		}
		data, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		result, err := e2ereport.Parse(args[0], bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", args[1], err)
		}
		if pagePath != "" {
			pageData, err := os.ReadFile(pagePath)
			if err != nil {
				return err
			}
			page, err := e2ereport.ReadPage(pagePath, bytes.NewReader(pageData))
			if err != nil {
				return err
			}
			if result, err = e2ereport.Merge(page, result, focus); err != nil {
				return fmt.Errorf("%s: %w", pagePath, err)
			}
		}
		return result.WriteMarkdown(stdout)
	case "upstream-table":
		check := len(args) > 0 && args[0] == "-check"
		if check {
			args = args[1:]
		}
		if len(args) < 3 {
			return fmt.Errorf("upstream-table takes a suite report, the README and at least one page\n%s", usage)
		}
		return upstreamTable(args[0], args[1], args[2:], check)
	case "fix-exec-bits":
		if err := need(1); err != nil {
			return err
		}
		n, err := modzip.RestoreExecBits(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "made %d script(s) executable\n", n)
		return nil
	case "table", "table-check":
		if err := need(2); err != nil {
			return err
		}
		return table(args[0], args[1], cmd == "table-check")
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// version reads only GIT_TAG and RELEASE, so that it works while patches are
// being edited.
func version(dir string) (string, error) {
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		return strings.TrimSpace(string(b)), err
	}
	tag, err := read("GIT_TAG")
	if err != nil {
		return "", err
	}
	if _, err := series.ValidateGitTag(tag); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, "GIT_TAG"), err)
	}
	rel, err := read("RELEASE")
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(rel); err != nil || n < 1 {
		return "", fmt.Errorf("%s: %q must be a positive integer", filepath.Join(dir, "RELEASE"), rel)
	}
	return tag + "-draext." + rel, nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// readLines returns the non-empty lines of r, trimmed.
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

// table writes the series' table into the document, or with check only
// compares.
func table(dir, doc string, check bool) error {
	s, err := series.Load(dir)
	if err != nil {
		return fmt.Errorf("series %s is not valid:\n%s", dir, indent(err.Error()))
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	updated, err := series.ReplaceTable(string(old), s.Table())
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	if updated == string(old) {
		return nil
	}
	if check {
		return fmt.Errorf("%s: the table of patches differs from the series %s: run make patches-export (or draext-series table %s %s)", doc, dir, dir, doc)
	}
	return os.WriteFile(doc, []byte(updated), 0o644)
}

// upstreamTable rewrites (or, with check, verifies) the release columns of
// the README's upstream table; the links to the pages are relative to the
// README.
func upstreamTable(suitePath, readmePath string, pagePaths []string, check bool) error {
	data, err := os.ReadFile(suitePath)
	if err != nil {
		return err
	}
	suite, err := e2ereport.Parse("dry run", bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", suitePath, err)
	}
	readmeDir, err := filepath.Abs(filepath.Dir(readmePath))
	if err != nil {
		return err
	}
	var pages []e2ereport.Page
	for _, path := range pagePaths {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			_ = f.Close()
			return err
		}
		rel, err := filepath.Rel(readmeDir, abs)
		if err != nil {
			_ = f.Close()
			return err
		}
		page, err := e2ereport.ParsePage(filepath.ToSlash(rel), f)
		if closeErr := f.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			return err
		}
		pages = append(pages, page)
	}
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		return err
	}
	table, err := e2ereport.UpstreamTable(string(readme), suite.Specs, pages)
	if err != nil {
		return fmt.Errorf("%s: %w", readmePath, err)
	}
	if check {
		if table != string(readme) {
			return fmt.Errorf("the table of %s is not the one the e2e-upstream pages give: run make upstream-table", readmePath)
		}
		return nil
	}
	return os.WriteFile(readmePath, []byte(table), 0o644)
}
