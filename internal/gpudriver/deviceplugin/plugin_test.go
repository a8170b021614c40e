// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/klog/v2/ktesting"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
	"github.com/draext/draext/internal/gpudriver/testutil"
)

// fakeKubelet is the kubelet's registration service.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	requests chan *pluginapi.RegisterRequest
	server   *grpc.Server
}

func (k *fakeKubelet) Register(_ context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.requests <- r
	return &pluginapi.Empty{}, nil
}

func startKubelet(t *testing.T, dir string) *fakeKubelet {
	t.Helper()
	sock := filepath.Join(dir, "kubelet.sock")
	_ = os.Remove(sock)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{requests: make(chan *pluginapi.RegisterRequest, 4), server: grpc.NewServer()}
	pluginapi.RegisterRegistrationServer(k.server, k)
	go func() { _ = k.server.Serve(lis) }()
	t.Cleanup(k.server.Stop)
	return k
}

func (k *fakeKubelet) expectRegister(t *testing.T) *pluginapi.RegisterRequest {
	t.Helper()
	select {
	case r := <-k.requests:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the plugin did not register")
		return nil
	}
}

func TestNew(t *testing.T) {
	testCases := map[string]struct {
		cfg  Config
		want string
	}{
		"ok":                  {cfg: Config{ResourceName: "nvidia.com/gpu", Endpoint: "gpu.sock"}},
		"no domain":           {cfg: Config{ResourceName: "gpu", Endpoint: "gpu.sock"}, want: `resource name "gpu" must be an extended resource name`},
		"endpoint is a path":  {cfg: Config{ResourceName: "nvidia.com/gpu", Endpoint: "/tmp/gpu.sock"}, want: `endpoint "/tmp/gpu.sock" must be a socket file name`},
		"endpoint is missing": {cfg: Config{ResourceName: "nvidia.com/gpu"}, want: `endpoint "" must be a socket file name`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPlugin(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dir := testutil.SocketDir(t, "dp")
	devRoot := filepath.Join(dir, "root")
	for _, n := range []string{"/dev/nvidia1", "/dev/nvidia3", "/dev/nvidiactl"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(devRoot, n)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(devRoot, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	devices := testutil.GPUs("node-a", 4)
	kubelet := startKubelet(t, dir)
	p, err := New(Config{ResourceName: "nvidia.com/gpu", Devices: devices, PluginDir: dir, Endpoint: "draext-gpu.sock", DevRoot: devRoot})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	reg := kubelet.expectRegister(t)
	if reg.ResourceName != "nvidia.com/gpu" || reg.Endpoint != "draext-gpu.sock" || reg.Version != pluginapi.Version {
		t.Fatalf("register request %+v", reg)
	}

	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "draext-gpu.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	client := pluginapi.NewDevicePluginClient(conn)

	stream, err := client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	expectHealth(t, stream, "Healthy,Healthy,Healthy,Healthy")
	p.MarkUnhealthy(gpu.HealthEvent{UUID: devices[2].UUID, XID: 79})
	expectHealth(t, stream, "Healthy,Healthy,Unhealthy,Healthy")

	alloc, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIDs: []string{devices[3].UUID, devices[1].UUID}},
		{DevicesIDs: []string{devices[0].UUID}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Each container gets NVIDIA_VISIBLE_DEVICES with all its GPUs and the
	// per-GPU variables that DRA mode sets, nothing else.
	perGPU := func(env map[string]string, ds ...gpu.Device) map[string]string {
		for _, d := range ds {
			env[cdi.GPUEnvName(d.UUID)] = d.UUID
		}
		return env
	}
	testCases := []struct {
		env   map[string]string
		nodes string
	}{
		{
			env:   perGPU(map[string]string{"NVIDIA_VISIBLE_DEVICES": devices[1].UUID + "," + devices[3].UUID}, devices[1], devices[3]),
			nodes: "/dev/nvidia1,/dev/nvidia3,/dev/nvidiactl",
		},
		{
			env:   perGPU(map[string]string{"NVIDIA_VISIBLE_DEVICES": devices[0].UUID}, devices[0]),
			nodes: "/dev/nvidiactl",
		},
	}
	if len(alloc.ContainerResponses) != len(testCases) {
		t.Fatalf("%d container responses for %d containers", len(alloc.ContainerResponses), len(testCases))
	}
	for i, tc := range testCases {
		cr := alloc.ContainerResponses[i]
		var nodes []string
		for _, d := range cr.Devices {
			if d.HostPath != d.ContainerPath || d.Permissions != "rw" {
				t.Errorf("container %d: device %+v", i, d)
			}
			nodes = append(nodes, d.HostPath)
		}
		if !maps.Equal(cr.Envs, tc.env) {
			t.Errorf("container %d: env %v, want %v", i, cr.Envs, tc.env)
		}
		if strings.Join(nodes, ",") != tc.nodes {
			t.Errorf("container %d: device nodes %v, want %s", i, nodes, tc.nodes)
		}
	}
	if _, err := client.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIDs: []string{gpu.DeterministicUUID("node-b", 0)}},
	}}); err == nil || !strings.Contains(err.Error(), "is not on this node") {
		t.Errorf("Allocate of a foreign GPU: %v", err)
	}

	// A kubelet restart removes the plugin's socket: the plugin serves and
	// registers again.
	if err := os.Remove(filepath.Join(dir, "draext-gpu.sock")); err != nil {
		t.Fatal(err)
	}
	kubelet.expectRegister(t)

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func expectHealth(t *testing.T, stream pluginapi.DevicePlugin_ListAndWatchClient, want string) {
	t.Helper()
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range resp.Devices {
		got = append(got, d.Health)
	}
	if strings.Join(got, ",") != want {
		t.Fatalf("device health %v, want %s", got, want)
	}
}

func TestGetPreferredAllocation(t *testing.T) {
	devices := testutil.GPUs("node-a", 8)
	p, err := New(Config{ResourceName: "nvidia.com/gpu", Devices: devices, Endpoint: "x.sock"})
	if err != nil {
		t.Fatal(err)
	}
	id := func(i int) string { return devices[i].UUID }
	testCases := map[string]struct {
		available, must []string
		size            int32
		want            []string
	}{
		"lowest indexes first": {available: []string{id(5), id(2), id(7), id(3)}, size: 2, want: []string{id(2), id(3)}},
		"must-include kept":    {available: []string{id(5), id(2), id(7)}, must: []string{id(7)}, size: 2, want: []string{id(7), id(2)}},
		"fewer than asked":     {available: []string{id(4)}, size: 3, want: []string{id(4)}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			resp, err := p.GetPreferredAllocation(context.Background(), &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{
				{AvailableDeviceIDs: tc.available, MustIncludeDeviceIDs: tc.must, AllocationSize: tc.size},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.ContainerResponses[0].DeviceIDs; strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
