// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

const (
	// cdiVersion is the CDI spec version written: env edits need no newer.
	cdiVersion = "0.5.0"
	// cdiClass is the class of the CDI kind <driver name>/claim.
	cdiClass = "claim"
	// envPrefix starts the variable that hands one mock GPU to a container.
	envPrefix = "MOCK_GPU_"
	// driverEnv names the driver in every container given one of its devices.
	driverEnv = "MOCK_GPU_DRIVER"
)

// cdiSpec, cdiDevice and cdiEdits are the part of the CDI spec format
// (github.com/cncf-tags/container-device-interface, SPEC.md) the driver
// writes.
type cdiSpec struct {
	Version        string      `json:"cdiVersion"`
	Kind           string      `json:"kind"`
	Devices        []cdiDevice `json:"devices"`
	ContainerEdits cdiEdits    `json:"containerEdits"`
}

type cdiDevice struct {
	Name           string   `json:"name"`
	ContainerEdits cdiEdits `json:"containerEdits"`
}

type cdiEdits struct {
	Env []string `json:"env,omitempty"`
}

// envName is the variable of a mock GPU: envPrefix and the device name in
// upper case with every character outside [A-Z0-9] replaced by "_"
// (gpu-0: MOCK_GPU_GPU_0).
func envName(device string) string {
	return envPrefix + strings.Map(func(r rune) rune {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, strings.ToUpper(device))
}

// cdiWriter writes the specs of one driver's claims into one CDI directory,
// the one the node's container runtime reads.
type cdiWriter struct {
	dir    string
	driver string
}

func (w cdiWriter) kind() string { return w.driver + "/" + cdiClass }

// path is the spec file of a claim.
func (w cdiWriter) path(claim types.UID) string {
	return filepath.Join(w.dir, w.driver+"-"+cdiClass+"_"+string(claim)+".json")
}

// spec is the CDI spec of a claim with the devices, in their order, and the
// fully qualified CDI device ID of each device. The CDI device names start
// with the claim UID, so that no name is reused for another claim (a runtime
// may cache specs).
func (w cdiWriter) spec(claim types.UID, devices []string) (cdiSpec, map[string]string, error) {
	if claim == "" {
		return cdiSpec{}, nil, errors.New("claim UID must not be empty")
	}
	if len(devices) == 0 {
		return cdiSpec{}, nil, fmt.Errorf("claim %s: no devices", claim)
	}
	spec := cdiSpec{
		Version:        cdiVersion,
		Kind:           w.kind(),
		ContainerEdits: cdiEdits{Env: []string{driverEnv + "=" + w.driver}},
	}
	ids := make(map[string]string, len(devices))
	for _, device := range devices {
		if _, ok := ids[device]; ok {
			return cdiSpec{}, nil, fmt.Errorf("claim %s: device %s is allocated twice", claim, device)
		}
		name := string(claim) + "-" + device
		spec.Devices = append(spec.Devices, cdiDevice{
			Name:           name,
			ContainerEdits: cdiEdits{Env: []string{envName(device) + "=" + device}},
		})
		ids[device] = w.kind() + "=" + name
	}
	return spec, ids, nil
}

// write writes the spec of a claim (again: prepare is idempotent) and
// returns the CDI device ID of each device.
func (w cdiWriter) write(claim types.UID, devices []string) (map[string]string, error) {
	spec, ids, err := w.spec(claim, devices)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, err
	}
	// Write and rename: the runtime never reads half a spec.
	tmp := w.path(claim) + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	if err := os.Rename(tmp, w.path(claim)); err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("write CDI spec: %w", err)
	}
	return ids, nil
}

// remove deletes the spec of a claim; a missing spec is not an error.
func (w cdiWriter) remove(claim types.UID) error {
	if err := os.Remove(w.path(claim)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove CDI spec: %w", err)
	}
	return nil
}
