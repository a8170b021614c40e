// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package cdi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"tags.cncf.io/container-device-interface/pkg/cdi"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// inject resolves the CDI devices from the specs in dir with the CDI library
// (the code a container runtime runs) and injects them into one container,
// whose process env it returns.
func inject(t *testing.T, dir string, devices ...string) []string {
	t.Helper()
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		t.Fatalf("CDI cache of %s: %v", dir, err)
	}
	for path, errs := range cache.GetErrors() {
		t.Fatalf("CDI rejects %s: %v", path, errs)
	}
	spec := &oci.Spec{Process: &oci.Process{Env: []string{"PATH=/bin:/usr/bin"}}}
	unresolved, err := cache.InjectDevices(spec, devices...)
	if err != nil {
		t.Fatalf("inject %v: %v (unresolved: %v)", devices, err, unresolved)
	}
	return spec.Process.Env
}

// gpuEnv is what a container that got the GPUs should find: one variable per
// GPU, sorted.
func gpuEnv(devices ...[]gpu.Device) []string {
	var env []string
	for _, list := range devices {
		for _, d := range list {
			env = append(env, GPUEnvName(d.UUID)+"="+d.UUID)
		}
	}
	slices.Sort(env)
	return env
}

// TestInjectedRequestsCompose is the reason for one variable per GPU: the
// kubelet may give one container the CDI devices of several requests of a
// claim, and the container must see the GPUs of all of them.
func TestInjectedRequestsCompose(t *testing.T) {
	const claimUID = "0d7e2b3c-1c4b-4f0e-8c55-7a1f4c3e9b20"
	requests := map[string][]gpu.Device{
		"container-0-request-0": gpus(0),
		"container-0-request-1": gpus(3, 2),
		"container-1-request-0": gpus(5),
	}
	dir := t.TempDir()
	// No device nodes: the CDI library would stat them on this host.
	w := &Writer{Root: dir, DevRoot: fakeDevRoot(t)}
	ids, err := w.Write(claimUID, requests)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}

	testCases := map[string]struct {
		inject []string // requests whose CDI devices the container gets
		want   []string
	}{
		"two requests in one container": {
			inject: []string{"container-0-request-0", "container-0-request-1"},
			want:   gpuEnv(gpus(0, 2, 3)),
		},
		"the same two in the other order": {
			inject: []string{"container-0-request-1", "container-0-request-0"},
			want:   gpuEnv(gpus(0, 2, 3)),
		},
		"every request": {
			inject: []string{"container-0-request-0", "container-0-request-1", "container-1-request-0"},
			want:   gpuEnv(gpus(0, 2, 3, 5)),
		},
		"one request with two GPUs": {
			inject: []string{"container-0-request-1"},
			want:   gpuEnv(gpus(2, 3)),
		},
		"one request alone sees only its GPU": {
			inject: []string{"container-1-request-0"},
			want:   gpuEnv(gpus(5)),
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var devices []string
			for _, r := range tc.inject {
				devices = append(devices, ids[r])
			}
			env := inject(t, dir, devices...)
			var got []string
			for _, e := range env {
				if strings.HasPrefix(e, GPUEnvPrefix) {
					got = append(got, e)
				}
				if strings.HasPrefix(e, "NVIDIA_VISIBLE_DEVICES=") {
					t.Errorf("DRA mode sets %s: one variable for a request's GPUs does not compose", e)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("GPU variables of the container:\n got %q\nwant %q", got, tc.want)
			}
			if !slices.Contains(env, "PATH=/bin:/usr/bin") {
				t.Errorf("the container's own env is lost: %q", env)
			}
		})
	}
}

// TestOneVariablePerRequestDoesNotCompose shows what the driver used to do:
// each CDI device set NVIDIA_VISIBLE_DEVICES to its request's GPUs. CDI
// replaces a variable that an earlier device set, so a container with two
// requests saw only the GPUs of the last one.
func TestOneVariablePerRequestDoesNotCompose(t *testing.T) {
	dir := t.TempDir()
	a, b := gpus(0)[0].UUID, gpus(1)[0].UUID
	spec := cdispec.Spec{
		Version: specVersion,
		Kind:    Vendor + "/" + Class,
		Devices: []cdispec.Device{
			{Name: "request-a", ContainerEdits: cdispec.ContainerEdits{Env: []string{"NVIDIA_VISIBLE_DEVICES=" + a}}},
			{Name: "request-b", ContainerEdits: cdispec.ContainerEdits{Env: []string{"NVIDIA_VISIBLE_DEVICES=" + b}}},
		},
	}
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "per-request.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	testCases := map[string]struct {
		inject []string
		want   string
	}{
		"a, then b": {inject: []string{"request-a", "request-b"}, want: b},
		"b, then a": {inject: []string{"request-b", "request-a"}, want: a},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var devices []string
			for _, d := range tc.inject {
				devices = append(devices, Vendor+"/"+Class+"="+d)
			}
			var got []string
			for _, e := range inject(t, dir, devices...) {
				if v, ok := strings.CutPrefix(e, "NVIDIA_VISIBLE_DEVICES="); ok {
					got = append(got, v)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("NVIDIA_VISIBLE_DEVICES = %q, want only the last device's %q (CDI replaces the variable); "+
					"if CDI now merges it, the per-GPU variables may no longer be needed", got, tc.want)
			}
		})
	}
}
