// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package testselect chooses the upstream tests that make test runs for a
// patch series: it maps the files the series changes to the Go packages whose
// tests cover them (Packages), and to the test packages that guard the shared
// mechanisms those files touch, with the packages whose concurrency tests
// must pass under the race detector (Guards). cmd/draext-series prints both
// (its packages and guards commands).
package testselect
