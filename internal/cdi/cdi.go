// Package cdi writes the Container Device Interface specs through which the
// example driver hands prepared GPUs to containers: one transient spec per
// ResourceClaim, one CDI device per request of the claim.
//
// A CDI device per request (not per GPU) is what makes NVIDIA_VISIBLE_DEVICES
// right: a container gets the devices of each request it uses, and every GPU
// of that request must appear in the one variable.
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

	"github.com/draext/draext/internal/gpu"
)

const (
	// Vendor and Class form the CDI kind of every device the driver writes.
	Vendor = "k8s.gpu.draext.dev"
	Class  = "claim"
	// specVersion is the oldest CDI version that has every feature we use
	// (device nodes with host paths): containerd 1.7+ reads it.
	specVersion = "0.5.0"
)

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

// DeviceName returns the CDI device name for a request of a claim.
func DeviceName(claimUID, request string) string {
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
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
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
	for _, request := range names {
		devices := append([]gpu.Device(nil), requests[request]...)
		if len(devices) == 0 {
			return nil, nil, fmt.Errorf("claim %s: request %q has no devices", claimUID, request)
		}
		sort.Slice(devices, func(i, j int) bool { return devices[i].Index < devices[j].Index })
		name := DeviceName(claimUID, request)
		if err := parser.ValidateDeviceName(name); err != nil {
			return nil, nil, fmt.Errorf("claim %s, request %q: %w", claimUID, request, err)
		}
		uuids := make([]string, len(devices))
		edits := cdispec.ContainerEdits{}
		for i, d := range devices {
			uuids[i] = d.UUID
			edits.DeviceNodes = append(edits.DeviceNodes, w.nodes(d.DeviceNode())...)
		}
		edits.Env = []string{"NVIDIA_VISIBLE_DEVICES=" + strings.Join(uuids, ",")}
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
