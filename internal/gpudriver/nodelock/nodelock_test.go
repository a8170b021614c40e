// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package nodelock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAcquire(t *testing.T) {
	testCases := map[string]struct {
		holder  string // mode holding the lock, "" for none
		mode    string
		wantErr string
	}{
		"free":                         {mode: "dra"},
		"device plugin blocks DRA":     {holder: "device-plugin", mode: "dra", wantErr: "already served by the device-plugin mode (pid %d)"},
		"DRA blocks the device plugin": {holder: "dra", mode: "device-plugin", wantErr: "already served by the dra mode (pid %d)"},
		"DRA blocks a second DRA":      {holder: "dra", mode: "dra", wantErr: "already served by the dra mode (pid %d)"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "gpus.lock")
			if tc.holder != "" {
				// flock locks belong to the open file, so a second open in
				// this process conflicts just like another process would.
				held, err := Acquire(path, tc.holder)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = held.Release() }()
			}
			l, err := Acquire(path, tc.mode)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(path)
				if want := fmt.Sprintf("%s %d\n", tc.mode, os.Getpid()); string(data) != want {
					t.Errorf("lock file says %q, want %q", data, want)
				}
				if err := l.Release(); err != nil {
					t.Fatal(err)
				}
				again, err := Acquire(path, "device-plugin")
				if err != nil {
					t.Fatalf("lock not free after Release: %v", err)
				}
				_ = again.Release()
				return
			}
			if want := fmt.Sprintf(tc.wantErr, os.Getpid()); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want an error containing %q", err, want)
			}
		})
	}
}

// TestAcquireWriteFails: a lock whose holder line cannot be written is an
// error, not a lock that names nobody. /dev/full cannot be truncated (and
// any write to it fails with ENOSPC).
func TestAcquireWriteFails(t *testing.T) {
	t.Parallel()
	lock, err := Acquire("/dev/full", "dra")
	if err == nil {
		_ = lock.Release()
		t.Fatal("Acquire succeeded although the holder could not be written")
	}
	if !strings.Contains(err.Error(), "GPU lock /dev/full") {
		t.Errorf("error %q does not name the lock", err)
	}
}
