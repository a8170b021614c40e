// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-image writes a single-layer OCI image archive from a
// directory, for `ctr images import` on a machine without Docker or a
// registry, and for `docker load`.
//
//	draext-image --name localhost/draext/pause:3.10 --root DIR --entrypoint /pause --output pause.tar
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/draext/draext/internal/tooling/ociarchive"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var img ociarchive.Image
	var output string
	var entrypoint, cmd, env list
	var tags list
	flag.StringVar(&img.Name, "name", "", "full image reference with tag")
	flag.Var(&tags, "tag", "another full reference of the image (repeat for more)")
	flag.StringVar(&img.Root, "root", "", "directory that becomes the image's file system")
	flag.Var(&entrypoint, "entrypoint", "entrypoint argument (repeat for more)")
	flag.Var(&cmd, "cmd", "cmd argument (repeat for more)")
	flag.Var(&env, "env", "NAME=value (repeat for more)")
	flag.StringVar(&output, "output", "", "archive to write")
	flag.Parse()
	img.Entrypoint, img.Cmd, img.Env, img.Tags = entrypoint, cmd, env, tags
	if err := run(img, output); err != nil {
		fmt.Fprintln(os.Stderr, "draext-image:", err)
		os.Exit(1)
	}
}

func run(img ociarchive.Image, output string) error {
	if output == "" {
		return fmt.Errorf("--output is required")
	}
	tmp := output + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := ociarchive.Write(f, img); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, output)
}
