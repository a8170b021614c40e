// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/draext/draext/internal/gpudriver/gpu"
)

// deviceIDs maps the device IDs that a device plugin gave containers to the
// GPUs of this node. The schemes a real node uses, under one resource name:
//
//	GPU-<uuid>                   a whole GPU (NVIDIA's default, --device-id-strategy=uuid)
//	<index>                      a whole GPU by its NVML index (--device-id-strategy=index)
//	<index>:<MIG index>          a MIG device by the index of its GPU (index strategy, MIG)
//	MIG-<uuid>                   a MIG device (MIG strategy single); NVML names its GPU
//	MIG-GPU-<uuid>/<gi>/<ci>     a MIG device, drivers before R470: the UUID of its GPU is in it
//	<any of these>::<n>          replica n of a time-sliced device (NVIDIA's convention)
//
// A GPU UUID of a GPU this node does not have is another node's (a host
// whose kubelets share one device-plugin socket, like the local cluster):
// it maps to nothing when ignoreForeign is set. Every other ID cannot be
// mapped, and then no GPU can be known to be free.
type deviceIDs struct {
	byUUID  map[string]bool
	byIndex map[int]string
	// migParent returns the UUID of the GPU of a MIG device (MIG-<uuid>);
	// nil: such IDs cannot be mapped.
	migParent     func(migUUID string) (string, error)
	ignoreForeign bool

	// migCache keeps what migParent answered: a MIG device keeps its GPU
	// for its lifetime, and a new one gets a new UUID.
	mu       sync.Mutex
	migCache map[string]string
}

// maxMIGCache bounds migCache; it starts over when full (a node has at most
// a few dozen MIG devices at a time).
const maxMIGCache = 256

func newDeviceIDs(devices []gpu.Device, migParent func(string) (string, error), ignoreForeign bool) *deviceIDs {
	m := &deviceIDs{byUUID: map[string]bool{}, byIndex: map[int]string{}, migParent: migParent, ignoreForeign: ignoreForeign}
	for _, d := range devices {
		m.byUUID[d.UUID] = true
		m.byIndex[d.Index] = d.UUID
	}
	return m
}

// gpuOf returns the UUID of the GPU of this node that the device-plugin ID
// stands for. ok is false without an error for an ignored foreign GPU; an
// error says why the ID cannot be mapped.
func (m *deviceIDs) gpuOf(id string) (uuid string, ok bool, err error) {
	base, _, _ := strings.Cut(id, "::")
	switch {
	case m.byUUID[base]:
		return base, true, nil
	case strings.HasPrefix(base, gpu.MIGPrefix+"GPU-"):
		// MIG-GPU-<uuid>/<gi>/<ci>
		parent, _, _ := strings.Cut(strings.TrimPrefix(base, gpu.MIGPrefix), "/")
		return m.mine(parent, "the GPU of MIG device "+base)
	case strings.HasPrefix(base, gpu.MIGPrefix):
		if m.migParent == nil {
			return "", false, fmt.Errorf("MIG device %s: its GPU cannot be looked up", base)
		}
		parent, err := m.parentOf(base)
		if err != nil {
			return "", false, fmt.Errorf("MIG device %s: %w", base, err)
		}
		if !m.byUUID[parent] {
			return "", false, fmt.Errorf("MIG device %s: its GPU %s is not one of this node's", base, parent)
		}
		return parent, true, nil
	case strings.HasPrefix(base, "GPU-"):
		return m.mine(base, "GPU "+base)
	}
	// <index> or <index>:<MIG index>
	index, migIndex, isMIG := strings.Cut(base, ":")
	if i, ok := parseIndex(index); ok && (!isMIG || validIndex(migIndex)) {
		if uuid, ok := m.byIndex[i]; ok {
			return uuid, true, nil
		}
		return "", false, fmt.Errorf("no GPU has index %d", i)
	}
	return "", false, fmt.Errorf("%q is none of the device ID schemes of NVIDIA's device plugin", id)
}

// parentOf asks migParent, once per MIG device that it knows.
func (m *deviceIDs) parentOf(migUUID string) (string, error) {
	m.mu.Lock()
	parent, ok := m.migCache[migUUID]
	m.mu.Unlock()
	if ok {
		return parent, nil
	}
	parent, err := m.migParent(migUUID)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.migCache == nil || len(m.migCache) >= maxMIGCache {
		m.migCache = map[string]string{}
	}
	m.migCache[migUUID] = parent
	return parent, nil
}

// mine maps a GPU UUID: this node's, another node's (ignored with
// ignoreForeign) or an error. what names the UUID in the error.
func (m *deviceIDs) mine(uuid, what string) (string, bool, error) {
	switch {
	case m.byUUID[uuid]:
		return uuid, true, nil
	case m.ignoreForeign:
		return "", false, nil
	}
	return "", false, fmt.Errorf("%s is not one of this node's GPUs", what)
}

// parseIndex parses a device index: decimal digits, no sign, no leading
// zero.
func parseIndex(s string) (int, bool) {
	if !validIndex(s) {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil
}

func validIndex(s string) bool {
	if s == "" || len(s) > 4 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
