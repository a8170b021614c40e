// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// GeneratedDoc is the document whose table make patches-export writes from
// the series; it cites patches by number on purpose.
const GeneratedDoc = "docs/patches.md"

// DocFiles lists the documents of the repository at root whose text lint
// checks, relative to root: docs/*.md except the generated table, the README
// and the CHANGELOG. The design notes under docs/design/ are dated records of
// how the series came to be and keep the numbers of their time.
func DocFiles(root string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		rel, err := filepath.Rel(root, m)
		if err != nil {
			return nil, err
		}
		if filepath.ToSlash(rel) != GeneratedDoc {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	for _, name := range []string{"README.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			out = append(out, name)
		}
	}
	return out, nil
}

// LintDocs checks the texts of the documents DocFiles lists the way the
// commit messages are checked (TextProblems): no patch named by its number or
// place, no reference to this project's tracker. Fenced code blocks are
// skipped. Each problem names the file and line.
func LintDocs(root string) error {
	files, err := DocFiles(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range DocProblems(data) {
			errs = append(errs, fmt.Errorf("%s:%s", name, p))
		}
	}
	return errors.Join(errs...)
}

// DocProblems returns "LINE: problem" for each problem of a Markdown text.
// It checks paragraphs (lines up to a blank one), so that a phrase broken
// over two lines is found, and names the line where the phrase starts.
// Fenced code blocks are skipped.
func DocProblems(data []byte) []string {
	var out []string
	var para []string
	first := 0 // line number of para[0]
	flush := func() {
		text := strings.Join(para, "\n")
		for _, p := range textProblems(text) {
			line := first + strings.Count(text[:p.at], "\n")
			out = append(out, fmt.Sprintf("%d: %s", line, p.why))
		}
		para = nil
	}
	inFence := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			inFence = !inFence
		case inFence:
		case t == "":
			flush()
		default:
			if len(para) == 0 {
				first = n
			}
			para = append(para, line)
		}
	}
	flush()
	return out
}
