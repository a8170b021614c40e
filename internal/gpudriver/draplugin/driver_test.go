// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1beta1"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/gpu"
)

func allocatedClaim(uid, name string, results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: results},
		}},
	}
}

func result(request, driver, pool, device string) resourceapi.DeviceRequestAllocationResult {
	return resourceapi.DeviceRequestAllocationResult{Request: request, Driver: driver, Pool: pool, Device: device}
}

func TestAllocatedGPUs(t *testing.T) {
	devices := mockDevices(t, "dgxa100", "node-a")
	byName := map[string]gpu.Device{}
	for _, d := range devices {
		byName[SliceDeviceName(d)] = d
	}
	testCases := map[string]struct {
		claim        *resourceapi.ResourceClaim
		wantRequests map[string][]string
		wantErr      string
	}{
		"one request, two GPUs": {
			claim:        allocatedClaim("u1", "c", result("gpus", DefaultDriverName, "node-a", "gpu-3"), result("gpus", DefaultDriverName, "node-a", "gpu-5")),
			wantRequests: map[string][]string{"gpus": {devices[3].UUID, devices[5].UUID}},
		},
		"other drivers and pools are skipped": {
			claim: allocatedClaim("u1", "c",
				result("nic", "nic.example.com", "node-a", "eth0"),
				result("gpu", DefaultDriverName, "node-b", "gpu-1"),
				result("gpu", DefaultDriverName, "node-a", "gpu-0")),
			wantRequests: map[string][]string{"gpu": {devices[0].UUID}},
		},
		"subrequest": {
			claim:        allocatedClaim("u1", "c", result("gpu/big", DefaultDriverName, "node-a", "gpu-7")),
			wantRequests: map[string][]string{"gpu/big": {devices[7].UUID}},
		},
		"not allocated": {
			claim:   &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c"}},
			wantErr: "claim default/c is not allocated",
		},
		"unknown device": {
			claim:   allocatedClaim("u1", "c", result("gpu", DefaultDriverName, "node-a", "gpu-9")),
			wantErr: `claim default/c, request "gpu": device "gpu-9" is not a GPU of pool "node-a"`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			got, _, err := allocatedGPUs(tc.claim, DefaultDriverName, "node-a", byName)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.wantRequests) {
				t.Fatalf("got %v, want %v", got, tc.wantRequests)
			}
			for r, want := range tc.wantRequests {
				if strings.Join(got[r], ",") != strings.Join(want, ",") {
					t.Errorf("request %s: got %v, want %v", r, got[r], want)
				}
			}
		})
	}
}

// TestDriver runs the plugin on real gRPC sockets the way the kubelet calls
// it, with a fake API server behind the kubeletplugin helper.
func TestDriver(t *testing.T) {
	// Default verbosity, buffered: prepare and unprepare must be visible
	// without -v.
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(0), ktesting.BufferLogs(true)))
	ctx := klog.NewContext(context.Background(), logger)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	claim := allocatedClaim("uid-1", "claim-1",
		result("gpu", DefaultDriverName, "node-a", "gpu-2"),
		result("gpu", DefaultDriverName, "node-a", "gpu-4"))
	bad := allocatedClaim("uid-2", "claim-2", result("gpu", DefaultDriverName, "node-a", "gpu-6"))
	client := fake.NewClientset(claim, bad, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", UID: "node-a-uid"}})
	generateNames(client)

	td := startTestDriver(ctx, t, client, "drv")
	drv, devices, pluginDir, registrarDir, writer := td.Driver, td.devices, td.pluginDir, td.registrarDir, td.writer
	defer drv.Stop()

	waitForSliceDevices(ctx, t, client, 8)

	hc, err := StartHealthcheck(ctx, "127.0.0.1:0", DefaultDriverName, registrarDir, pluginDir)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Stop()
	if resp, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{}); err != nil || resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("health check: %v, %v", resp, err)
	}

	conn, err := dialUnix(filepath.Join(pluginDir, "dra.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	node := drapb.NewDRAPluginClient(conn)

	// GPU 6 fails; its claim must not be prepared.
	if err := drv.MarkUnhealthy(ctx, gpu.HealthEvent{UUID: devices[6].UUID, XID: 79}); err != nil {
		t.Fatal(err)
	}
	waitForSliceDevices(ctx, t, client, 7)

	prep, err := node.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: []*drapb.Claim{
		{Namespace: "default", Name: "claim-1", UID: "uid-1"},
		{Namespace: "default", Name: "claim-2", UID: "uid-2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	good := prep.Claims["uid-1"]
	if good.Error != "" || len(good.Devices) != 2 {
		t.Fatalf("claim-1: %+v", good)
	}
	wantID := cdi.Vendor + "/" + cdi.Class + "=" + cdi.SpecDeviceName("uid-1", "gpu")
	for i, d := range good.Devices {
		if d.PoolName != "node-a" || d.DeviceName != []string{"gpu-2", "gpu-4"}[i] ||
			len(d.CDIDeviceIDs) != 1 || d.CDIDeviceIDs[0] != wantID || strings.Join(d.RequestNames, ",") != "gpu" {
			t.Errorf("claim-1 device %d: %+v, want CDI device %s", i, d, wantID)
		}
	}
	spec, err := os.ReadFile(writer.SpecPath("uid-1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []gpu.Device{devices[2], devices[4]} {
		if !strings.Contains(string(spec), `"`+cdi.GPUEnvName(d.UUID)+"="+d.UUID+`"`) {
			t.Errorf("CDI spec does not hand GPU %s to the container:\n%s", d.UUID, spec)
		}
	}
	if e := prep.Claims["uid-2"].Error; !strings.Contains(e, "is unhealthy (XID 79)") {
		t.Errorf("claim-2 on an unhealthy GPU: error %q", e)
	}

	unprep, err := node.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: []*drapb.Claim{
		{Namespace: "default", Name: "claim-1", UID: "uid-1"},
		{Namespace: "default", Name: "gone", UID: "uid-never-prepared"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for uid, r := range unprep.Claims {
		if r.Error != "" {
			t.Errorf("unprepare %s: %s", uid, r.Error)
		}
	}
	if _, err := os.Stat(writer.SpecPath("uid-1")); !os.IsNotExist(err) {
		t.Errorf("CDI spec still there after unprepare: %v", err)
	}

	// One line per claim and outcome, naming the claim, its UID and devices.
	logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
	for _, want := range [][]string{
		{`INFO`, `Prepared claim `, `claim="default/claim-1" uid="uid-1" devices=["node-a/gpu-2","node-a/gpu-4"]`},
		{`ERROR`, `Preparing claim failed err=`, `is unhealthy (XID 79)`, `claim="default/claim-2" uid="uid-2"`},
		{`INFO`, `Unprepared claim `, `claim="default/claim-1" uid="uid-1"`},
		{`INFO`, `Unprepared claim `, `claim="default/gone" uid="uid-never-prepared"`},
	} {
		if !hasLine(logs, want...) {
			t.Errorf("no log line has all of %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "Checkpointed") {
		t.Errorf("verbosity-2 lines logged at verbosity 0:\n%s", logs)
	}
}

// generateNames gives created objects a name from their generateName, as
// the apiserver does and the fake clientset does not.
func generateNames(client *fake.Clientset) {
	var n atomic.Int64
	client.PrependReactor("create", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		obj := action.(k8stesting.CreateAction).GetObject()
		if meta, err := apimeta.Accessor(obj); err == nil && meta.GetName() == "" && meta.GetGenerateName() != "" {
			meta.SetName(fmt.Sprintf("%s%05d", meta.GetGenerateName(), n.Add(1)))
		}
		return false, nil, nil
	})
}

func waitForSliceDevices(ctx context.Context, t *testing.T, client *fake.Clientset, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		slices, err := client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := -1
		if len(slices.Items) == 1 {
			s := slices.Items[0]
			if s.Spec.Driver == DefaultDriverName && s.Spec.NodeName == "node-a" && s.Spec.Pool.Name == "node-a" {
				got = len(s.Spec.Devices)
			}
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one ResourceSlice of node-a with %d devices, got %d slices: %+v", want, len(slices.Items), slices.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hasLine reports whether one line of logs contains all parts.
func hasLine(logs string, parts ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
