// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// SumsFile records the SHA-256 of series and of every patch, as written by
// make patches-export. A patch that replays and re-exports to the same bytes
// can still have been edited by hand (a commit message, say); the checksum is
// what notices that.
const SumsFile = "SHA256SUMS"

// WriteSums writes SumsFile for the series file and the given patch files, in
// the format of sha256sum(1).
func WriteSums(dir string, patches []string) error {
	var b strings.Builder
	for _, name := range append([]string{"series"}, patches...) {
		sum, err := fileSum(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644)
}

// checkSums compares every file named in SumsFile, and requires that it names
// exactly series and the listed patches.
func checkSums(dir string, patches []string) []error {
	data, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return []error{fmt.Errorf("%s: %v (make patches-export writes it)", SumsFile, err)}
	}
	want := map[string]string{}
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != sha256.Size*2 {
			return []error{fmt.Errorf("%s:%d: not a sha256sum line: %q", SumsFile, i+1, line)}
		}
		want[name] = sum
	}
	var errs []error
	for _, name := range append([]string{"series"}, patches...) {
		w, ok := want[name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: has no checksum in %s (run make patches-export)", name, SumsFile))
			continue
		}
		delete(want, name)
		got, err := fileSum(filepath.Join(dir, name))
		if err != nil {
			continue // reported by the caller
		}
		if got != w {
			errs = append(errs, fmt.Errorf("%s: content does not match its checksum in %s: the file was edited by hand; make the change as a commit on the draext branch and run make patches-export", name, SumsFile))
		}
	}
	for name := range want {
		errs = append(errs, fmt.Errorf("%s: names %s, which is not in series (run make patches-export)", SumsFile, name))
	}
	return errs
}

func fileSum(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
