// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package modzip

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// RestoreExecBits makes every regular file under root that starts with "#!"
// executable (u+x, and g+x/o+x where the file is readable by them).
//
// Module zips from the Go module proxy carry no file modes, so the hack/
// scripts of an upstream tree assembled from them lose their exec bits. A
// shebang is the best evidence left of which files were executable. It
// returns the number of files changed.
func RestoreExecBits(root string) (int, error) {
	changed := 0
	buf := make([]byte, 2)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode().Perm()
		if mode&0o100 != 0 {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		n, err := io.ReadFull(f, buf)
		_ = f.Close() // only read
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return err
		}
		if n < 2 || !bytes.Equal(buf, []byte("#!")) {
			return nil
		}
		// Mirror read bits into exec bits, like git's 100755 does for 100644.
		if err := os.Chmod(p, mode|(mode&0o444)>>2); err != nil {
			return err
		}
		changed++
		return nil
	})
	return changed, err
}
