// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/klog/v2/ktesting"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
	"github.com/draext/draext/internal/gpudriver/testutil"
)

type fixture struct {
	dir     string
	writer  *cdi.Writer
	devices []gpu.Device
}

func newFixture(t testing.TB) *fixture {
	dir := t.TempDir()
	return &fixture{dir: dir, writer: &cdi.Writer{Root: filepath.Join(dir, "cdi"), DevRoot: dir}, devices: testutil.GPUs("node-a", 8)}
}

func (f *fixture) open(ctx context.Context, t testing.TB) *State {
	t.Helper()
	s, err := New(ctx, f.devices, f.writer, filepath.Join(f.dir, "plugin", "checkpoint.json"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func uuids(idx ...int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, gpu.DeterministicUUID("node-a", i))
	}
	return out
}

func TestPrepareUnprepare(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	requests := map[string][]string{"gpu": uuids(0, 1)}

	ids, err := s.Prepare(ctx, "claim-a", requests)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if !strings.HasPrefix(ids["gpu"], cdi.Vendor+"/"+cdi.Class+"=") {
		t.Errorf("CDI ID %q", ids["gpu"])
	}
	if _, err := os.Stat(f.writer.SpecPath("claim-a")); err != nil {
		t.Errorf("no CDI spec after Prepare: %v", err)
	}

	// Idempotent: the same request again, in another order, gives the same IDs.
	again, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(1, 0)})
	if err != nil || again["gpu"] != ids["gpu"] {
		t.Errorf("second Prepare = %v, %v; want %v", again, err, ids)
	}
	// Other devices for a prepared claim are refused.
	if _, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(2)}); err == nil ||
		!strings.Contains(err.Error(), "already prepared with other devices") {
		t.Errorf("Prepare with other devices: %v", err)
	}

	if err := s.Unprepare(ctx, "claim-a"); err != nil {
		t.Fatalf("Unprepare: %v", err)
	}
	if _, err := os.Stat(f.writer.SpecPath("claim-a")); !os.IsNotExist(err) {
		t.Errorf("CDI spec still there after Unprepare: %v", err)
	}
	if err := s.Unprepare(ctx, "claim-a"); err != nil {
		t.Errorf("Unprepare twice: %v", err)
	}
	if err := s.Unprepare(ctx, "never-prepared"); err != nil {
		t.Errorf("Unprepare of an unknown claim: %v", err)
	}
	if got := s.Claims(); len(got) != 0 {
		t.Errorf("claims left: %v", got)
	}
}

func TestPrepareRejects(t *testing.T) {
	testCases := map[string]struct {
		requests map[string][]string
		want     string
	}{
		"GPU of another node": {
			requests: map[string][]string{"gpu": {gpu.DeterministicUUID("node-b", 0)}},
			want:     "is not on this node",
		},
		"GPU held by another claim": {
			requests: map[string][]string{"a": uuids(6), "b": uuids(7)},
			want:     "GPU " + uuids(7)[0] + " is already prepared for claim claim-other",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t)
			s := f.open(ctx, t)
			if _, err := s.Prepare(ctx, "claim-other", map[string][]string{"gpu": uuids(7)}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Prepare(ctx, "claim-a", tc.requests)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Prepare: got %v, want an error containing %q", err, tc.want)
			}
			if got := s.Claims(); len(got) != 1 || got[0] != "claim-other" {
				t.Errorf("a failed Prepare changed the claims: %v", got)
			}
			if _, err := os.Stat(f.writer.SpecPath("claim-a")); !os.IsNotExist(err) {
				t.Errorf("a failed Prepare left a CDI spec: %v", err)
			}
		})
	}
}

func TestRestartFromCheckpoint(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	ids, err := s.Prepare(ctx, "claim-a", map[string][]string{"container-0-request-0": uuids(3)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prepare(ctx, "claim-b", map[string][]string{"gpu": uuids(4, 5)}); err != nil {
		t.Fatal(err)
	}

	// A new process on the same node.
	restarted := f.open(ctx, t)
	if got := restarted.Claims(); len(got) != 2 || got[0] != "claim-a" || got[1] != "claim-b" {
		t.Fatalf("claims after restart: %v", got)
	}
	again, err := restarted.Prepare(ctx, "claim-a", map[string][]string{"container-0-request-0": uuids(3)})
	if err != nil || again["container-0-request-0"] != ids["container-0-request-0"] {
		t.Errorf("Prepare after restart = %v, %v; want %v", again, err, ids)
	}
	if err := restarted.Unprepare(ctx, "claim-b"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.writer.SpecPath("claim-b")); !os.IsNotExist(err) {
		t.Errorf("CDI spec of claim-b still there: %v", err)
	}
	if got := f.open(ctx, t).Claims(); len(got) != 1 || got[0] != "claim-a" {
		t.Errorf("claims after unprepare and another restart: %v", got)
	}
}

func TestCorruptCheckpoint(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	testCases := map[string]struct {
		content string
		wantErr string
	}{
		"not JSON": {content: "{", wantErr: "is corrupt"},
		"truncated": {
			content: `{"version":"draext.gpu/v1","claims":{"claim-a":{"requests":{"gpu":["GPU-`,
			wantErr: "is corrupt (unexpected end of JSON input): move it away and restart the driver",
		},
		"other version": {content: `{"version":"draext.gpu/v0","claims":{}}`, wantErr: `has version "draext.gpu/v0"`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			path := filepath.Join(f.dir, "checkpoint.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := New(ctx, f.devices, f.writer, path); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestConcurrentPrepareOfOneClaim(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	requests := map[string][]string{"gpu": uuids(0, 1, 2, 3)}
	const workers = 16
	results := make([]map[string]string, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = s.Prepare(ctx, "claim-a", requests)
		}(i)
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i]["gpu"] != results[0]["gpu"] {
			t.Errorf("worker %d: %v, %v", i, results[i], errs[i])
		}
	}
	entries, err := os.ReadDir(f.writer.Root)
	if err != nil || len(entries) != 1 {
		t.Errorf("CDI directory: %d entries, %v; want exactly one spec", len(entries), err)
	}
}

// BenchmarkPrepare8GPUs measures prepare (CDI spec and checkpoint written)
// plus unprepare of a claim with eight GPUs.
func BenchmarkPrepare8GPUs(b *testing.B) {
	ctx := context.Background()
	f := newFixture(b)
	s := f.open(ctx, b)
	requests := map[string][]string{"gpu": uuids(0, 1, 2, 3, 4, 5, 6, 7)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Prepare(ctx, "claim-a", requests); err != nil {
			b.Fatal(err)
		}
		if err := s.Unprepare(ctx, "claim-a"); err != nil {
			b.Fatal(err)
		}
	}
}

// After a reboot the checkpoint (on disk) still lists a claim but its CDI
// spec (on tmpfs) is gone, and the kubelet prepares the claim again: the spec
// must come back, the same as before, or the container cannot start.
func TestPrepareAfterRebootRewritesSpec(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	requests := map[string][]string{"container-0-request-0": uuids(0, 1), "container-1-request-0": uuids(2)}
	ids, err := s.Prepare(ctx, "claim-a", requests)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(f.writer.SpecPath("claim-a"))
	if err != nil {
		t.Fatal(err)
	}

	// Reboot: the CDI root is empty, the driver starts from its checkpoint.
	if err := os.RemoveAll(f.writer.Root); err != nil {
		t.Fatal(err)
	}
	rebooted := f.open(ctx, t)
	again, err := rebooted.Prepare(ctx, "claim-a", map[string][]string{"container-0-request-0": uuids(1, 0), "container-1-request-0": uuids(2)})
	if err != nil {
		t.Fatalf("Prepare after reboot: %v", err)
	}
	if len(again) != len(ids) || again["container-0-request-0"] != ids["container-0-request-0"] || again["container-1-request-0"] != ids["container-1-request-0"] {
		t.Errorf("CDI IDs after reboot %v, before %v", again, ids)
	}
	after, err := os.ReadFile(f.writer.SpecPath("claim-a"))
	if err != nil {
		t.Fatalf("no CDI spec after Prepare following a reboot: %v", err)
	}
	if string(after) != string(before) {
		t.Errorf("CDI spec after reboot differs:\n%s\nbefore:\n%s", after, before)
	}
}

// blockCheckpointWrites makes every checkpoint save fail: a directory sits
// where the temporary file is written. The returned function removes it.
func blockCheckpointWrites(t *testing.T, f *fixture) func() {
	t.Helper()
	tmp := filepath.Join(f.dir, "plugin", "checkpoint.json.tmp")
	if err := os.MkdirAll(filepath.Join(tmp, "blocker"), 0o755); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.RemoveAll(tmp); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUnprepareKeepsClaimWhenSaveFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	ids, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(0)})
	if err != nil {
		t.Fatal(err)
	}

	unblock := blockCheckpointWrites(t, f)
	if err := s.Unprepare(ctx, "claim-a"); err == nil {
		t.Fatal("Unprepare succeeded although the checkpoint cannot be written")
	}
	// Nothing is lost: the claim is still prepared, here and on disk, so the
	// kubelet's retry finds it and no GPU stays held by a forgotten claim.
	if got := s.Claims(); len(got) != 1 || got[0] != "claim-a" {
		t.Errorf("claims after a failed Unprepare: %v", got)
	}
	if got := f.open(ctx, t).Claims(); len(got) != 1 || got[0] != "claim-a" {
		t.Errorf("checkpoint after a failed Unprepare: %v", got)
	}
	if again, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(0)}); err != nil || again["gpu"] != ids["gpu"] {
		t.Errorf("Prepare after a failed Unprepare = %v, %v; want %v", again, err, ids)
	}

	unblock()
	if err := s.Unprepare(ctx, "claim-a"); err != nil {
		t.Fatalf("retried Unprepare: %v", err)
	}
	if got := s.Claims(); len(got) != 0 {
		t.Errorf("claims after the retry: %v", got)
	}
	if _, err := os.Stat(f.writer.SpecPath("claim-a")); !os.IsNotExist(err) {
		t.Errorf("CDI spec still there after the retry: %v", err)
	}
	if got := f.open(ctx, t).Claims(); len(got) != 0 {
		t.Errorf("checkpoint after the retry: %v", got)
	}
	// The GPU is free again.
	if _, err := s.Prepare(ctx, "claim-b", map[string][]string{"gpu": uuids(0)}); err != nil {
		t.Errorf("Prepare of the freed GPU: %v", err)
	}
}

func TestPrepareRollsBackWhenSaveFails(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	f := newFixture(t)
	s := f.open(ctx, t)
	unblock := blockCheckpointWrites(t, f)
	if _, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(0)}); err == nil {
		t.Fatal("Prepare succeeded although the checkpoint cannot be written")
	}
	if got := s.Claims(); len(got) != 0 {
		t.Errorf("claims after a failed Prepare: %v", got)
	}
	if _, err := os.Stat(f.writer.SpecPath("claim-a")); !os.IsNotExist(err) {
		t.Errorf("a failed Prepare left a CDI spec: %v", err)
	}
	unblock()
	if _, err := s.Prepare(ctx, "claim-a", map[string][]string{"gpu": uuids(0)}); err != nil {
		t.Errorf("retried Prepare: %v", err)
	}
}
