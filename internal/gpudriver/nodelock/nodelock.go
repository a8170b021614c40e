// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package nodelock makes sure that one process at a time serves the GPUs of
// a node: the DRA driver and the device plugin must never hand out the same
// GPUs, and neither may run twice.
package nodelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Lock is a held lock.
type Lock struct {
	f *os.File
}

// Acquire takes the lock at path for mode (e.g. "dra" or "device-plugin").
// It does not wait: when another process holds the lock, the error names
// that process's mode and PID. The lock goes away with the process, so a
// crashed holder never blocks its successor.
func Acquire(path, mode string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("GPU lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("GPU lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		_ = f.Close() // only read
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("the GPUs of this node are already served by %s (lock %s): run either the DRA driver or the device plugin on a node, once", describe(string(holder)), path)
		}
		return nil, fmt.Errorf("GPU lock %s: %w", path, err)
	}
	// The holder's line, for the error of the next process that tries.
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(fmt.Sprintf("%s %d\n", mode, os.Getpid())), 0)
	}
	if err != nil {
		_ = f.Close() // the error above is the one to report
		return nil, fmt.Errorf("GPU lock %s: write the holder: %w", path, err)
	}
	return &Lock{f: f}, nil
}

func describe(holder string) string {
	fields := strings.Fields(holder)
	if len(fields) != 2 {
		return "another process"
	}
	return fmt.Sprintf("the %s mode (pid %s)", fields[0], fields[1])
}

// Release gives the lock up.
func (l *Lock) Release() error {
	return l.f.Close()
}
