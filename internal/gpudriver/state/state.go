// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package state keeps the claims that the example driver has prepared on its
// node: it writes their CDI specs and records them in a checkpoint file, so
// that a restarted driver still knows (and can unprepare) every claim.
package state

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"k8s.io/klog/v2"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
)

// State prepares and unprepares claims. It is safe for concurrent use: all
// operations are serialized by one lock (each is a file write or two, about a
// millisecond), and a claim prepared twice with the same devices gives the
// same result.
type State struct {
	devices    map[string]gpu.Device // by UUID
	cdi        *cdi.Writer
	checkpoint string

	mu     sync.Mutex
	claims map[string]PreparedClaim
}

// New loads the checkpoint at path (a missing file is an empty state) for a
// node with the given GPUs.
func New(ctx context.Context, devices []gpu.Device, writer *cdi.Writer, path string) (*State, error) {
	claims, err := loadCheckpoint(path)
	if err != nil {
		return nil, err
	}
	s := &State{devices: map[string]gpu.Device{}, cdi: writer, checkpoint: path, claims: claims}
	for _, d := range devices {
		s.devices[d.UUID] = d
	}
	klog.FromContext(ctx).V(2).Info("Loaded checkpoint", "path", path, "claims", len(s.claims))
	return s, nil
}

// Prepare makes the GPUs of a claim available to containers: it writes the
// claim's CDI spec and records the claim, and returns the CDI device ID of
// each request. requests maps request names to GPU UUIDs of this node.
//
// Preparing a prepared claim again with the same GPUs writes its CDI spec
// again, from the checkpoint, byte for byte as before: after a reboot the
// checkpoint (kept on disk) still lists the claim, but the spec (on tmpfs)
// is gone, and the kubelet prepares the claim again.
func (s *State) Prepare(ctx context.Context, claimUID string, requests map[string][]string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.claims[claimUID]; ok {
		if !sameRequests(prev.Requests, requests) {
			return nil, fmt.Errorf("claim %s is already prepared with other devices; unprepare it first", claimUID)
		}
		devices, err := s.devicesOf(claimUID, prev.Requests, claimUID)
		if err != nil {
			return nil, err
		}
		if _, err := s.cdi.Write(claimUID, devices); err != nil {
			return nil, fmt.Errorf("claim %s: write its CDI spec again: %w", claimUID, err)
		}
		return prev.CDIDeviceIDs, nil
	}
	devices, err := s.devicesOf(claimUID, requests, "")
	if err != nil {
		return nil, err
	}
	ids, err := s.cdi.Write(claimUID, devices)
	if err != nil {
		return nil, err
	}
	s.claims[claimUID] = PreparedClaim{Requests: copyRequests(requests), CDIDeviceIDs: ids}
	if err := s.save(); err != nil {
		delete(s.claims, claimUID)
		return nil, errors.Join(err, s.cdi.Remove(claimUID))
	}
	klog.FromContext(ctx).V(2).Info("Checkpointed prepared claim", "claimUID", claimUID, "cdiDevices", ids)
	return ids, nil
}

// devicesOf looks up the GPUs of a claim's requests. A GPU that this node
// does not have, or that a claim other than owner holds, is an error. The
// caller holds s.mu.
func (s *State) devicesOf(claimUID string, requests map[string][]string, owner string) (map[string][]gpu.Device, error) {
	devices := map[string][]gpu.Device{}
	for request, uuids := range requests {
		for _, uuid := range uuids {
			d, ok := s.devices[uuid]
			if !ok {
				return nil, fmt.Errorf("claim %s, request %q: GPU %s is not on this node", claimUID, request, uuid)
			}
			if holder := s.ownerOf(uuid); holder != "" && holder != owner {
				return nil, fmt.Errorf("claim %s, request %q: GPU %s is already prepared for claim %s", claimUID, request, uuid, holder)
			}
			devices[request] = append(devices[request], d)
		}
	}
	return devices, nil
}

// Unprepare forgets a claim and removes its CDI spec. An unknown claim is
// not an error (its spec is still removed, should one be left). When the
// checkpoint cannot be written, the claim stays prepared, in memory and on
// disk, so that the kubelet's retry finds it: forgetting it in memory only
// would leave its GPUs held by the checkpoint, and refused, after the next
// restart.
func (s *State) Unprepare(ctx context.Context, claimUID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.claims[claimUID]
	if !ok {
		return s.cdi.Remove(claimUID)
	}
	delete(s.claims, claimUID)
	if err := s.save(); err != nil {
		s.claims[claimUID] = prev
		return fmt.Errorf("unprepare claim %s: %w", claimUID, err)
	}
	if err := s.cdi.Remove(claimUID); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Checkpointed unprepared claim", "claimUID", claimUID)
	return nil
}

// Claims returns the UIDs of the prepared claims, sorted.
func (s *State) Claims() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	uids := make([]string, 0, len(s.claims))
	for uid := range s.claims {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	return uids
}

// ownerOf returns the prepared claim that holds a GPU, or "". The caller
// holds s.mu. The scheduler never gives one GPU to two claims, but the driver
// is the last line of defense if something went wrong.
func (s *State) ownerOf(uuid string) string {
	for uid, c := range s.claims {
		for _, uuids := range c.Requests {
			for _, u := range uuids {
				if u == uuid {
					return uid
				}
			}
		}
	}
	return ""
}

// save writes the checkpoint durably. The caller holds s.mu.
func (s *State) save() error {
	return saveCheckpoint(s.checkpoint, s.claims)
}

func sameRequests(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for r, x := range a {
		y, ok := b[r]
		if !ok || len(x) != len(y) {
			return false
		}
		xs, ys := append([]string(nil), x...), append([]string(nil), y...)
		sort.Strings(xs)
		sort.Strings(ys)
		for i := range xs {
			if xs[i] != ys[i] {
				return false
			}
		}
	}
	return true
}

func copyRequests(in map[string][]string) map[string][]string {
	out := make(map[string][]string, len(in))
	for k, v := range in {
		out[k] = append([]string(nil), v...)
	}
	return out
}
