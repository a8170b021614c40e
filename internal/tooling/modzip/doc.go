// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package modzip repairs a source tree assembled from Go module zips, which
// carry no file modes: RestoreExecBits makes its scripts executable again.
// cmd/draext-series runs it (its fix-exec-bits command).
package modzip
