// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MaxNumber is the largest number a four-digit file name can carry.
const MaxNumber = 9999

// Numbered is a patch as far as numbering is concerned: its subject, the
// number its file had in the committed series (0 for a new patch), and its
// change (ChangeOf), which tells a reworded patch from a new one.
type Numbered struct {
	Subject string
	Number  int
	Change  string
}

// ChangeOf identifies what a format-patch file changes: a hash of everything
// after the commit message (the diffstat and the diff), so that a patch whose
// message alone was reworded has the change it had.
func ChangeOf(data []byte) string {
	i := bytes.Index(data, []byte("\n---\n"))
	if i < 0 {
		return ""
	}
	sum := sha256.Sum256(data[i:])
	return hex.EncodeToString(sum[:])
}

// Reworded gives the committed patches whose subject was reworded the new
// subject, so that AssignNumbers keeps their numbers: a committed patch whose
// subject the export no longer has, and whose change exactly one exported
// patch with a subject the committed series does not have makes, is that
// patch. A change that several patches make on either side matches nothing.
func Reworded(committed, exported []Numbered) []Numbered {
	subjects := map[string]bool{}
	for _, e := range exported {
		subjects[e.Subject] = true
	}
	committedSubjects := map[string]bool{}
	changes := map[string]int{}
	for _, c := range committed {
		committedSubjects[c.Subject] = true
		if c.Change != "" {
			changes[c.Change]++
		}
	}
	byChange := map[string][]string{}
	for _, e := range exported {
		if e.Change != "" {
			byChange[e.Change] = append(byChange[e.Change], e.Subject)
		}
	}
	out := make([]Numbered, len(committed))
	for i, c := range committed {
		out[i] = c
		if subjects[c.Subject] || c.Change == "" || changes[c.Change] != 1 {
			continue
		}
		if news := byChange[c.Change]; len(news) == 1 && !committedSubjects[news[0]] {
			out[i].Subject = news[0]
		}
	}
	return out
}

// AssignNumbers gives each subject of a freshly exported series (in series
// order) its file number. Numbers are stable: a patch keeps the number of the
// committed patch with the same subject, so a patch added, folded away or
// split elsewhere does not rename the files around it; gaps are allowed.
// Numbers must rise in series order, so of the kept numbers the longest
// rising run is kept and a patch moved against it gets a new number. A new
// patch takes the number after the one before it, which must stay below the
// next kept number: where there is no room, AssignNumbers says so and the
// caller renumbers (step > 0 numbers step, 2*step, ... and keeps nothing).
func AssignNumbers(committed []Numbered, subjects []string, step int) ([]int, error) {
	numbers := make([]int, len(subjects))
	if step > 0 {
		for i := range subjects {
			numbers[i] = (i + 1) * step
		}
		if n := len(subjects) * step; n > MaxNumber {
			return nil, fmt.Errorf("renumbering %d patches in steps of %d ends at %d, beyond %04d", len(subjects), step, n, MaxNumber)
		}
		return numbers, nil
	}

	// A subject that is not unique on either side cannot say which number it
	// had: such patches are new.
	count := map[string]int{}
	for _, s := range subjects {
		count[s]++
	}
	previous := map[string]int{}
	ambiguous := map[string]bool{}
	for _, c := range committed {
		if _, dup := previous[c.Subject]; dup {
			ambiguous[c.Subject] = true
		}
		previous[c.Subject] = c.Number
	}
	kept := make([]int, len(subjects))
	for i, s := range subjects {
		if n, ok := previous[s]; ok && n > 0 && count[s] == 1 && !ambiguous[s] {
			kept[i] = n
		}
	}
	for i, keep := range longestRising(kept) {
		if !keep {
			kept[i] = 0
		}
	}

	last := 0
	for i, s := range subjects {
		if kept[i] > 0 {
			numbers[i], last = kept[i], kept[i]
			continue
		}
		next := MaxNumber + 1
		nextAt := -1
		for j := i + 1; j < len(subjects); j++ {
			if kept[j] > 0 {
				next, nextAt = kept[j], j
				break
			}
		}
		n := last + 1
		if n >= next {
			where := fmt.Sprintf("after %04d", last)
			if nextAt >= 0 {
				where = fmt.Sprintf("between %04d and %04d (%q)", last, next, subjects[nextAt])
			}
			return nil, fmt.Errorf("no free number for the new patch %q %s: renumber the series (make patches-export RENUMBER=1)", s, where)
		}
		numbers[i], last = n, n
	}
	return numbers, nil
}

// longestRising marks the entries of one longest strictly rising
// subsequence of the positive values (zeros are never part of it).
func longestRising(values []int) []bool {
	n := len(values)
	length := make([]int, n)
	prev := make([]int, n)
	best, bestAt := 0, -1
	for i := 0; i < n; i++ {
		prev[i] = -1
		if values[i] <= 0 {
			continue
		}
		length[i] = 1
		for j := 0; j < i; j++ {
			if values[j] > 0 && values[j] < values[i] && length[j]+1 > length[i] {
				length[i], prev[i] = length[j]+1, j
			}
		}
		if length[i] > best {
			best, bestAt = length[i], i
		}
	}
	keep := make([]bool, n)
	for i := bestAt; i >= 0; i = prev[i] {
		keep[i] = true
	}
	return keep
}

// Committed reads the numbers and subjects of the series in dir as it is
// committed. A directory without a series file has none; a listed file
// that cannot be read or parsed is left out (its subject cannot be matched).
func Committed(dir string) ([]Numbered, error) {
	names, err := ReadSeries(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Numbered
	for _, name := range names {
		m := fileNameRE.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		h, err := ParseHeader(data)
		if err != nil {
			continue
		}
		out = append(out, Numbered{Subject: h.Subject, Number: n, Change: ChangeOf(data)})
	}
	return out, nil
}

// Renumber gives the patch files that git format-patch wrote into dir
// (numbered from 0001 in series order) their stable numbers from the
// committed series (see AssignNumbers; a patch whose message alone was
// reworded keeps its number, see Reworded), renames them and writes
// dir/series.
func Renumber(dir string, committed []Numbered, step int) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	subjects := make([]string, len(files))
	exported := make([]Numbered, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		h, err := ParseHeader(data)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		subjects[i] = h.Subject
		exported[i] = Numbered{Subject: h.Subject, Change: ChangeOf(data)}
	}
	numbers, err := AssignNumbers(Reworded(committed, exported), subjects, step)
	if err != nil {
		return err
	}
	names := make([]string, len(files))
	for i, f := range files {
		base := filepath.Base(f)
		if m := fileNameRE.FindStringSubmatch(base); m == nil {
			return fmt.Errorf("%s: not a file name that git format-patch writes", base)
		}
		names[i] = fmt.Sprintf("%04d%s", numbers[i], base[4:])
	}
	// Rename through temporary names: a new number may be the old number of
	// a file not yet renamed.
	for i, f := range files {
		if err := os.Rename(f, filepath.Join(dir, names[i]+".renumber")); err != nil {
			return err
		}
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(dir, name+".renumber"), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + "\n")
	}
	return os.WriteFile(filepath.Join(dir, "series"), []byte(b.String()), 0o644)
}
