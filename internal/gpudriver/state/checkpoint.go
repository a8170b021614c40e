// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// checkpoint is the file format, version checkpointVersion.
type checkpoint struct {
	Version string                   `json:"version"`
	Claims  map[string]PreparedClaim `json:"claims"`
}

// loadCheckpoint reads the claims recorded at path. A missing file is no
// claim. A file that cannot be decoded is an error that says what to do:
// the driver cannot know which GPUs its claims hold without it.
func loadCheckpoint(path string) (map[string]PreparedClaim, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return map[string]PreparedClaim{}, nil
	case err != nil:
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt (%v): move it away and restart the driver; "+
			"it then knows no prepared claim, and the kubelet prepares the claims of new and restarted pods again", path, err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s has version %q, this driver reads %q", path, cp.Version, checkpointVersion)
	}
	if cp.Claims == nil {
		cp.Claims = map[string]PreparedClaim{}
	}
	return cp.Claims, nil
}

// saveCheckpoint records claims at path durably: the file is written next to
// it as path.tmp, synced, renamed over path, and the directory is synced, so
// that after a crash or power loss the file is either the old or the new
// version, complete.
func saveCheckpoint(path string, claims map[string]PreparedClaim) error {
	data, err := json.MarshalIndent(checkpoint{Version: checkpointVersion, Claims: claims}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return errors.Join(fmt.Errorf("write checkpoint: %w", werr), os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write checkpoint: %w", err), os.Remove(tmp))
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync checkpoint directory: %w", err)
	}
	defer func() { _ = d.Close() }() // only synced
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync checkpoint directory: %w", err)
	}
	return nil
}
