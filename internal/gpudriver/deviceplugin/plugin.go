// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package deviceplugin is the classic device-plugin mode of the example GPU
// driver: it advertises the node's GPUs as an extended resource (by default
// nvidia.com/gpu) through the kubelet's device plugin API v1beta1, so that
// mixed clusters and the move from device plugins to DRA can be tested with
// the same GPUs and the same binary.
package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
)

// Config is what the device plugin needs to run on one node.
type Config struct {
	// ResourceName is the extended resource, e.g. nvidia.com/gpu.
	ResourceName string
	// Devices are the node's GPUs.
	Devices []gpu.Device
	// PluginDir is the kubelet's device plugin directory; kubelet.sock is
	// there and the plugin creates its own socket next to it.
	PluginDir string
	// Endpoint is the file name of the plugin's socket in PluginDir.
	Endpoint string
	// DevRoot is where the GPU device nodes are ("" means "/").
	DevRoot string
}

// registerRetry is how long the plugin waits before it registers again
// after a failure.
const registerRetry = 5 * time.Second

// Plugin is a running device plugin.
type Plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	cfg    Config
	byUUID map[string]gpu.Device

	mu        sync.Mutex
	unhealthy map[string]bool
	changed   chan struct{} // closed and replaced when health changes
	server    *grpc.Server
}

// New checks the configuration and returns a plugin that is not serving yet.
func New(cfg Config) (*Plugin, error) {
	if !strings.Contains(cfg.ResourceName, "/") {
		return nil, fmt.Errorf("resource name %q must be an extended resource name such as nvidia.com/gpu", cfg.ResourceName)
	}
	if cfg.Endpoint == "" || strings.Contains(cfg.Endpoint, "/") {
		return nil, fmt.Errorf("endpoint %q must be a socket file name in %s", cfg.Endpoint, cfg.PluginDir)
	}
	p := &Plugin{cfg: cfg, byUUID: map[string]gpu.Device{}, unhealthy: map[string]bool{}, changed: make(chan struct{})}
	for _, d := range cfg.Devices {
		p.byUUID[d.UUID] = d
	}
	return p, nil
}

// Run serves the plugin and registers it with the kubelet until ctx is done.
// A failed registration is retried. When the kubelet restarts (it removes every socket in its directory and
// recreates kubelet.sock), the plugin serves and registers again.
func (p *Plugin) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for {
		kubeletSock := filepath.Join(p.cfg.PluginDir, "kubelet.sock")
		if err := p.serve(ctx); err != nil {
			return err
		}
		if err := p.register(ctx, kubeletSock); err != nil {
			p.stopServer()
			if ctx.Err() != nil {
				return nil
			}
			// The kubelet may be (re)starting: try again, as it would
			// expect from a DaemonSet pod that keeps running.
			logger.Error(err, "Device plugin registration failed, retrying", "after", registerRetry)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(registerRetry):
			}
			continue
		}
		logger.Info("Device plugin registered", "resource", p.cfg.ResourceName, "gpus", len(p.cfg.Devices), "socket", p.socket())
		kubelet, _ := os.Stat(kubeletSock)
		if !p.waitForRestart(ctx, kubelet) {
			p.stopServer()
			return nil
		}
		logger.Info("Kubelet restarted, registering again")
		p.stopServer()
	}
}

func (p *Plugin) socket() string { return filepath.Join(p.cfg.PluginDir, p.cfg.Endpoint) }

func (p *Plugin) serve(ctx context.Context) error {
	if err := os.Remove(p.socket()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	lis, err := net.Listen("unix", p.socket())
	if err != nil {
		return fmt.Errorf("device plugin socket: %w", err)
	}
	server := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(server, p)
	p.mu.Lock()
	p.server = server
	p.mu.Unlock()
	logger := klog.FromContext(ctx)
	go func() {
		if err := server.Serve(lis); err != nil {
			logger.Error(err, "Device plugin server stopped")
		}
	}()
	return nil
}

func (p *Plugin) stopServer() {
	p.mu.Lock()
	server := p.server
	p.server = nil
	p.mu.Unlock()
	if server != nil {
		server.Stop()
	}
}

func (p *Plugin) register(ctx context.Context, kubeletSock string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+kubeletSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("connect to kubelet at %s: %w", kubeletSock, err)
	}
	defer func() { _ = conn.Close() }()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     p.cfg.Endpoint,
		ResourceName: p.cfg.ResourceName,
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		return fmt.Errorf("register %s with the kubelet at %s: %w", p.cfg.ResourceName, kubeletSock, err)
	}
	return nil
}

// waitForRestart returns true when the kubelet was restarted (our socket is
// gone or kubelet.sock is a new file), false when ctx is done.
func (p *Plugin) waitForRestart(ctx context.Context, kubelet os.FileInfo) bool {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
		if _, err := os.Stat(p.socket()); err != nil {
			return true
		}
		now, err := os.Stat(filepath.Join(p.cfg.PluginDir, "kubelet.sock"))
		if err == nil && kubelet != nil && !os.SameFile(now, kubelet) {
			return true
		}
	}
}

// MarkUnhealthy reports a GPU (all GPUs when the event names none) as
// unhealthy to the kubelet, which stops handing it out.
func (p *Plugin) MarkUnhealthy(e gpu.HealthEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uuid := range p.byUUID {
		if e.UUID == "" || e.UUID == uuid {
			p.unhealthy[uuid] = true
		}
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// list is the device list the kubelet sees, and the channel that is closed
// on the next change.
func (p *Plugin) list() ([]*pluginapi.Device, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	devices := make([]*pluginapi.Device, 0, len(p.cfg.Devices))
	for _, d := range p.cfg.Devices {
		health := pluginapi.Healthy
		if p.unhealthy[d.UUID] {
			health = pluginapi.Unhealthy
		}
		devices = append(devices, &pluginapi.Device{ID: d.UUID, Health: health})
	}
	return devices, p.changed
}

// GetDevicePluginOptions implements pluginapi.DevicePluginServer.
func (p *Plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

// ListAndWatch implements pluginapi.DevicePluginServer: the GPUs with their
// health, sent again on every change.
func (p *Plugin) ListAndWatch(_ *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	for {
		devices, changed := p.list()
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: devices}); err != nil {
			return err
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changed:
		}
	}
}

// GetPreferredAllocation implements pluginapi.DevicePluginServer: the
// lowest-index available GPUs first, so that allocations are predictable.
func (p *Plugin) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range req.ContainerRequests {
		chosen := append([]string(nil), c.MustIncludeDeviceIDs...)
		taken := map[string]bool{}
		for _, id := range chosen {
			taken[id] = true
		}
		available := append([]string(nil), c.AvailableDeviceIDs...)
		sort.Slice(available, func(i, j int) bool { return p.byUUID[available[i]].Index < p.byUUID[available[j]].Index })
		for _, id := range available {
			if len(chosen) >= int(c.AllocationSize) {
				break
			}
			if !taken[id] {
				chosen = append(chosen, id)
				taken[id] = true
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: chosen})
	}
	return resp, nil
}

// Allocate implements pluginapi.DevicePluginServer: each container gets
// NVIDIA_VISIBLE_DEVICES with its GPUs' UUIDs, one variable per GPU named by
// cdi.GPUEnvName (what DRA mode sets, so that consumers read the GPUs the same
// way in both modes), and the device nodes that exist. Here one variable for
// all GPUs is right: Allocate is called with the container's whole set.
func (p *Plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		var devices []gpu.Device
		for _, id := range c.DevicesIDs {
			d, ok := p.byUUID[id]
			if !ok {
				return nil, fmt.Errorf("allocate: GPU %s is not on this node", id)
			}
			devices = append(devices, d)
		}
		sort.Slice(devices, func(i, j int) bool { return devices[i].Index < devices[j].Index })
		uuids := make([]string, len(devices))
		nodes := make([]string, len(devices))
		for i, d := range devices {
			uuids[i] = d.UUID
			nodes[i] = d.DeviceNode()
		}
		cr := &pluginapi.ContainerAllocateResponse{Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(uuids, ",")}}
		for _, uuid := range uuids {
			cr.Envs[cdi.GPUEnvName(uuid)] = uuid
		}
		for _, n := range gpu.ExistingNodes(p.cfg.DevRoot, append(nodes, gpu.ControlDeviceNodes...)...) {
			cr.Devices = append(cr.Devices, &pluginapi.DeviceSpec{ContainerPath: n, HostPath: n, Permissions: "rw"})
		}
		resp.ContainerResponses = append(resp.ContainerResponses, cr)
	}
	return resp, nil
}
