// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-staging exports the k8s.io staging modules of the patched
// Kubernetes tree as module versions into a file-based Go module proxy, for
// Go code (the e2e suite, staging/example, users' own) that needs the API
// fields the series adds.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/draext/draext/internal/tooling/staging"
)

const usage = `usage: draext-staging export -out DIR -version VERSION -time RFC3339 [-sums FILE] SRC MODULE...

Exports MODULE... and every staging module they require from SRC (a tree's
staging/src) at VERSION into the module proxy DIR (GOPROXY=file://DIR), with
TIME in the .info files, and writes their go.sum lines to FILE.
`

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "draext-staging: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	switch {
	case len(args) == 0:
		return fmt.Errorf("missing command\n%s", usage)
	case args[0] != "export":
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("out", "", "module proxy directory")
	version := fs.String("version", "", "module version, e.g. v0.33.13-draext.1")
	stamp := fs.String("time", "", "time for the .info files (RFC 3339)")
	sumsFile := fs.String("sums", "", "file for the go.sum lines of the exported modules")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%v\n%s", err, usage)
	}
	if *out == "" || *version == "" || *stamp == "" || fs.NArg() < 2 {
		return fmt.Errorf("export needs -out, -version, -time, SRC and at least one MODULE\n%s", usage)
	}
	t, err := time.Parse(time.RFC3339, *stamp)
	if err != nil {
		return fmt.Errorf("-time: %w", err)
	}
	src := fs.Arg(0)
	modules, err := staging.Closure(src, fs.Args()[1:])
	if err != nil {
		return err
	}
	var sums []string
	for _, m := range modules {
		lines, err := staging.Export(*out, src, m, *version, t)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s\n", m, *version)
		sums = append(sums, lines...)
	}
	if *sumsFile != "" {
		sort.Strings(sums)
		if err := os.MkdirAll(filepath.Dir(*sumsFile), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(*sumsFile, []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}
