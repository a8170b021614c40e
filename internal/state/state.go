// Package state keeps the claims that the example driver has prepared on its
// node: it writes their CDI specs and records them in a checkpoint file, so
// that a restarted driver still knows (and can unprepare) every claim.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"k8s.io/klog/v2"

	"github.com/draext/draext/internal/cdi"
	"github.com/draext/draext/internal/gpu"
)

// checkpointVersion changes whenever the file format does.
const checkpointVersion = "draext.gpu/v1"

// PreparedClaim is one claim as the checkpoint records it.
type PreparedClaim struct {
	// Requests maps each request of the claim to its GPUs' UUIDs.
	Requests map[string][]string `json:"requests"`
	// CDIDeviceIDs maps each request to the CDI device that serves it.
	CDIDeviceIDs map[string]string `json:"cdiDeviceIDs"`
}

type checkpoint struct {
	Version string                   `json:"version"`
	Claims  map[string]PreparedClaim `json:"claims"`
}

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
	s := &State{devices: map[string]gpu.Device{}, cdi: writer, checkpoint: path, claims: map[string]PreparedClaim{}}
	for _, d := range devices {
		s.devices[d.UUID] = d
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt: %w", path, err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %q, this driver reads %q", path, cp.Version, checkpointVersion)
	}
	for uid, c := range cp.Claims {
		s.claims[uid] = c
	}
	klog.FromContext(ctx).V(2).Info("Loaded checkpoint", "path", path, "claims", len(s.claims))
	return s, nil
}

// Prepare makes the GPUs of a claim available to containers: it writes the
// claim's CDI spec and records the claim, and returns the CDI device ID of
// each request. requests maps request names to GPU UUIDs of this node.
func (s *State) Prepare(ctx context.Context, claimUID string, requests map[string][]string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.claims[claimUID]; ok {
		if sameRequests(prev.Requests, requests) {
			return prev.CDIDeviceIDs, nil
		}
		return nil, fmt.Errorf("claim %s is already prepared with other devices; unprepare it first", claimUID)
	}
	devices := map[string][]gpu.Device{}
	for request, uuids := range requests {
		for _, uuid := range uuids {
			d, ok := s.devices[uuid]
			if !ok {
				return nil, fmt.Errorf("claim %s, request %q: GPU %s is not on this node", claimUID, request, uuid)
			}
			if owner := s.ownerOf(uuid); owner != "" {
				return nil, fmt.Errorf("claim %s, request %q: GPU %s is already prepared for claim %s", claimUID, request, uuid, owner)
			}
			devices[request] = append(devices[request], d)
		}
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
	klog.FromContext(ctx).V(2).Info("Prepared claim", "claim", claimUID, "cdiDevices", ids)
	return ids, nil
}

// Unprepare removes a claim's CDI spec and forgets it. An unknown claim is
// not an error.
func (s *State) Unprepare(ctx context.Context, claimUID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.cdi.Remove(claimUID); err != nil {
		return err
	}
	if _, ok := s.claims[claimUID]; !ok {
		return nil
	}
	delete(s.claims, claimUID)
	if err := s.save(); err != nil {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Unprepared claim", "claim", claimUID)
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

// save writes the checkpoint atomically. The caller holds s.mu.
func (s *State) save() error {
	data, err := json.MarshalIndent(checkpoint{Version: checkpointVersion, Claims: s.claims}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.checkpoint), 0o755); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	tmp := s.checkpoint + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := os.Rename(tmp, s.checkpoint); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
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
