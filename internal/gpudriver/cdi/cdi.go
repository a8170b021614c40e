// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package cdi writes the Container Device Interface specs through which the
// example driver hands prepared GPUs to containers: one transient spec per
// ResourceClaim, one CDI device per request of the claim.
//
// A container may be given the CDI devices of several requests of one claim
// (with KEP-5004 each extended resource of a container is its own request),
// and the driver cannot know which: NodePrepareResources names only the
// claim. CDI applies an env edit by replacing a variable of the same name, so
// a single variable listing a request's GPUs (NVIDIA_VISIBLE_DEVICES) would
// keep only the last request's GPUs. Each CDI device therefore sets one
// variable per GPU, named after the GPU (see GPUEnvName): the edits of any
// set of devices compose, and a container sees every GPU it was given.
package cdi

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"tags.cncf.io/container-device-interface/pkg/parser"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

const (
	// Vendor and Class form the CDI kind of every device the driver writes.
	Vendor = "k8s.gpu.draext.dev"
	Class  = "claim"
	// specVersion is the oldest CDI version that has every feature we use
	// (device nodes with host paths): containerd 1.7+ reads it.
	specVersion = "0.5.0"
	// GPUEnvPrefix starts the name of the variable that hands one GPU to a
	// container, in DRA mode and in device-plugin mode; see GPUEnvName.
	GPUEnvPrefix = "DRAEXT_GPU_"
)

// GPUEnvName returns the name of the variable whose value is the UUID of the
// GPU given to a container: GPUEnvPrefix followed by the UUID in upper case
// with every character outside [A-Z0-9] replaced by "_", e.g.
// DRAEXT_GPU_GPU_27CAAF52_4193_4DA6_AF70_F0131ED0712B for
// GPU-27caaf52-4193-4da6-af70-f0131ed0712b.
func GPUEnvName(uuid string) string {
	var b strings.Builder
	b.Grow(len(GPUEnvPrefix) + len(uuid))
	b.WriteString(GPUEnvPrefix)
	for _, r := range strings.ToUpper(uuid) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Writer writes and removes claim specs in one CDI directory.
type Writer struct {
	// Root is the CDI spec directory, e.g. /var/run/cdi.
	Root string
	// DevRoot is where the device nodes live on the host ("/" normally;
	// tests point it elsewhere). Nodes that do not exist are left out.
	DevRoot string
}

// SpecPath returns the file of the spec for a claim.
func (w *Writer) SpecPath(claimUID string) string {
	return filepath.Join(w.Root, specName(claimUID)+".json")
}

func specName(claimUID string) string {
	return strings.ReplaceAll(fmt.Sprintf("%s-%s_%s", strings.ReplaceAll(Vendor, "/", "_"), Class, claimUID), "/", "_")
}

var invalidNameChars = regexp.MustCompile(`[^A-Za-z0-9_.:-]`)

// SpecDeviceName returns the CDI device name for a request of a claim: the
// name of the device in the claim's spec, unqualified (Write and Spec return
// the fully qualified ID, Vendor/Class=name). It is not the name of a GPU in
// the ResourceSlice.
func SpecDeviceName(claimUID, request string) string {
	return claimUID + "-" + invalidNameChars.ReplaceAllString(request, "_")
}

// Write writes the spec of a claim whose requests got the given GPUs and
// returns the fully qualified CDI device ID for each request. Writing the
// same claim again replaces its spec (prepare is idempotent).
func (w *Writer) Write(claimUID string, requests map[string][]gpu.Device) (map[string]string, error) {
	spec, ids, err := w.Spec(claimUID, requests)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(w.Root, 0o755); err != nil {
		return nil, fmt.Errorf("create CDI directory: %w", err)
	}
	// Write and rename, so that a container runtime never reads half a spec.
	tmp, err := os.CreateTemp(w.Root, "."+specName(claimUID)+"-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		_ = tmp.Close()
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	if err := os.Rename(tmp.Name(), w.SpecPath(claimUID)); err != nil {
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	return ids, nil
}

// Remove deletes the spec of a claim. A claim without a spec is not an error
// (unprepare is idempotent).
func (w *Writer) Remove(claimUID string) error {
	if err := os.Remove(w.SpecPath(claimUID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove CDI spec of claim %s: %w", claimUID, err)
	}
	return nil
}

// Spec builds the spec of a claim without writing it.
func (w *Writer) Spec(claimUID string, requests map[string][]gpu.Device) (*cdispec.Spec, map[string]string, error) {
	if claimUID == "" {
		return nil, nil, errors.New("claim UID must not be empty")
	}
	if len(requests) == 0 {
		return nil, nil, fmt.Errorf("claim %s: no devices to write", claimUID)
	}
	names := make([]string, 0, len(requests))
	for r := range requests {
		names = append(names, r)
	}
	sort.Strings(names)

	spec := &cdispec.Spec{Version: specVersion, Kind: Vendor + "/" + Class}
	ids := map[string]string{}
	// envUUID is the UUID behind each variable of the claim: two GPUs
	// whose UUIDs give the same name would hide one another.
	envUUID := map[string]string{}
	for _, request := range names {
		devices := append([]gpu.Device(nil), requests[request]...)
		if len(devices) == 0 {
			return nil, nil, fmt.Errorf("claim %s: request %q has no devices", claimUID, request)
		}
		sort.Slice(devices, func(i, j int) bool { return devices[i].Index < devices[j].Index })
		name := SpecDeviceName(claimUID, request)
		if err := parser.ValidateDeviceName(name); err != nil {
			return nil, nil, fmt.Errorf("claim %s, request %q: %w", claimUID, request, err)
		}
		edits := cdispec.ContainerEdits{}
		for _, d := range devices {
			if d.UUID == "" {
				return nil, nil, fmt.Errorf("claim %s, request %q: GPU %d has no UUID", claimUID, request, d.Index)
			}
			env := GPUEnvName(d.UUID)
			if other, ok := envUUID[env]; ok && other != d.UUID {
				return nil, nil, fmt.Errorf("claim %s, request %q: GPUs %s and %s both map to variable %s", claimUID, request, other, d.UUID, env)
			}
			envUUID[env] = d.UUID
			edits.Env = append(edits.Env, env+"="+d.UUID)
			edits.DeviceNodes = append(edits.DeviceNodes, w.nodes(d.DeviceNode())...)
		}
		spec.Devices = append(spec.Devices, cdispec.Device{Name: name, ContainerEdits: edits})
		ids[request] = parser.QualifiedName(Vendor, Class, name)
	}
	spec.ContainerEdits.DeviceNodes = w.nodes(gpu.ControlDeviceNodes...)
	return spec, ids, nil
}

// nodes returns the device nodes among paths that exist under DevRoot.
func (w *Writer) nodes(paths ...string) []*cdispec.DeviceNode {
	var nodes []*cdispec.DeviceNode
	for _, p := range gpu.ExistingNodes(w.DevRoot, paths...) {
		nodes = append(nodes, &cdispec.DeviceNode{Path: p})
	}
	return nodes
}
