// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// kubelet133Service is the DRA gRPC service a v1.33 kubelet uses with a
// plugin that advertises the given services: v1beta1.DRAPlugin when it is
// among them, else v1alpha4.Node, which it assumes for every plugin that
// advertises neither (read from pkg/kubelet/cm/dra/plugin/registration.go
// of v1.33.13).
func kubelet133Service(advertised []string) string {
	if slices.Contains(advertised, "v1beta1.DRAPlugin") {
		return "v1beta1.DRAPlugin"
	}
	return "v1alpha4.Node"
}

func TestKubelet133Service(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		advertised []string
		want       string
	}{
		{advertised: []string{"v1.DRAPlugin", "v1beta1.DRAPlugin"}, want: "v1beta1.DRAPlugin"},
		{advertised: []string{"v1beta1.DRAPlugin"}, want: "v1beta1.DRAPlugin"},
		// A library that dropped v1beta1 would be talked to in v1alpha4,
		// which it does not serve: every prepare would fail.
		{advertised: []string{"v1.DRAPlugin"}, want: "v1alpha4.Node"},
	} {
		if got := kubelet133Service(tc.advertised); got != tc.want {
			t.Errorf("kubelet133Service(%q) = %s, want %s", tc.advertised, got, tc.want)
		}
	}
}

// TestAsKubelet133 plays a v1.33 kubelet against the driver, in-process: it
// registers the plugin as the kubelet's plugin watcher does, prepares and
// unprepares a claim through DRA gRPC v1beta1, and reads the ResourceSlice
// that the driver published through a fake API server. With resourceV1
// false, that API server refuses resource.k8s.io/v1 (NotFound) as a v1.33
// kube-apiserver does, and serves v1beta1 only.
func TestAsKubelet133(t *testing.T) {
	t.Parallel()
	for name, resourceV1 := range map[string]bool{"resource.k8s.io/v1 served": true, "v1beta1 only": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			asKubelet133(t, resourceV1)
		})
	}
}

func asKubelet133(t *testing.T, resourceV1 bool) {
	const (
		node      = "node-a"
		namespace = "ns"
		claimName = "pod-extended-resources-x"
		claimUID  = "3c8bd5f6-0000-4000-8000-000000000001"
		request   = "container-0-request-0"
	)
	logger, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Unix socket paths must stay short: t.TempDir() may be too long.
	dir, err := os.MkdirTemp("", "stockdriver")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })

	allocation := &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
		Results: []resourceapi.DeviceRequestAllocationResult{{Request: request, Driver: defaultDriverName, Pool: node, Device: "gpu-1"}},
	}}
	meta := metav1.ObjectMeta{Namespace: namespace, Name: claimName, UID: claimUID}
	objects := []runtime.Object{&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: "node-uid"}}}
	if resourceV1 {
		objects = append(objects, &resourceapi.ResourceClaim{ObjectMeta: meta, Status: resourceapi.ResourceClaimStatus{Allocation: allocation}})
	} else {
		objects = append(objects, &resourcev1beta1.ResourceClaim{ObjectMeta: meta, Status: resourcev1beta1.ResourceClaimStatus{
			Allocation: &resourcev1beta1.AllocationResult{Devices: resourcev1beta1.DeviceAllocationResult{
				Results: []resourcev1beta1.DeviceRequestAllocationResult{{Request: request, Driver: defaultDriverName, Pool: node, Device: "gpu-1"}},
			}},
		}})
	}
	client := fake.NewClientset(objects...)
	if !resourceV1 {
		servedOnly := func(action k8stesting.Action) (bool, error) {
			gvr := action.GetResource()
			if gvr.Group == resourceapi.GroupName && gvr.Version != "v1beta1" {
				return true, apierrors.NewNotFound(schema.GroupResource{Group: gvr.Group, Resource: gvr.Resource}, "")
			}
			return false, nil
		}
		client.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
			handled, err := servedOnly(action)
			return handled, nil, err
		})
		client.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
			handled, err := servedOnly(action)
			return handled, nil, err
		})
	}

	cfg := config{
		driverName:    defaultDriverName,
		nodeName:      node,
		devices:       2,
		cdiDir:        filepath.Join(dir, "cdi"),
		pluginDataDir: filepath.Join(dir, "plugins", defaultDriverName),
		registrarDir:  filepath.Join(dir, "registry"),
	}
	helper, err := start(klog.NewContext(ctx, logger), cfg, client, cancel)
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Stop()

	// The plugin watcher finds <driver>-reg.sock and asks for the plugin's info.
	regConn := dial(t, filepath.Join(cfg.registrarDir, defaultDriverName+"-reg.sock"))
	registration := registerapi.NewRegistrationClient(regConn)
	info, err := registration.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.DRAPlugin || info.Name != defaultDriverName {
		t.Fatalf("plugin info %+v: want type %s, name %s", info, registerapi.DRAPlugin, defaultDriverName)
	}
	t.Logf("advertised services %q, library %s", info.SupportedVersions, libraryVersion())
	if got := kubelet133Service(info.SupportedVersions); got != drapbv1beta1.DRAPluginService {
		t.Fatalf("a v1.33 kubelet would use %s with services %q: the driver does not serve it", got, info.SupportedVersions)
	}
	if _, err := registration.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}

	dra := drapbv1beta1.NewDRAPluginClient(dial(t, info.Endpoint))
	claims := []*drapbv1beta1.Claim{v1beta1Claim(namespace, claimName, claimUID)}
	prepared, err := dra.NodePrepareResources(ctx, &drapbv1beta1.NodePrepareResourcesRequest{Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	got := prepared.Claims[claimUID]
	if got.GetError() != "" || len(got.GetDevices()) != 1 {
		t.Fatalf("prepare: %+v, want one device", prepared.Claims)
	}
	wantID := defaultDriverName + "/claim=" + claimUID + "-gpu-1"
	if d := got.Devices[0]; !slices.Equal(d.GetRequestNames(), []string{request}) || d.GetPoolName() != node || d.GetDeviceName() != "gpu-1" || !slices.Equal(cdiDeviceIDs(d), []string{wantID}) {
		t.Errorf("prepared device %+v, want request %s, %s/gpu-1, CDI device %s", d, request, node, wantID)
	}
	specFile := filepath.Join(cfg.cdiDir, defaultDriverName+"-claim_"+claimUID+".json")
	data, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	var spec cdiSpec
	if err := json.Unmarshal(data, &spec); err != nil || len(spec.Devices) != 1 || !slices.Equal(spec.Devices[0].ContainerEdits.Env, []string{"MOCK_GPU_GPU_1=gpu-1"}) {
		t.Errorf("CDI spec %s (%v): want one device that sets MOCK_GPU_GPU_1=gpu-1", data, err)
	}

	unprepared, err := dra.NodeUnprepareResources(ctx, &drapbv1beta1.NodeUnprepareResourcesRequest{Claims: claims})
	if err != nil {
		t.Fatal(err)
	}
	if r := unprepared.Claims[claimUID]; r == nil || r.GetError() != "" {
		t.Errorf("unprepare: %+v", unprepared.Claims)
	}
	if _, err := os.Stat(specFile); !os.IsNotExist(err) {
		t.Errorf("CDI spec %s still there after unprepare (%v)", specFile, err)
	}

	// The ResourceSlice, in the version the API server serves.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var nodes, drivers []string
		var devices int
		if resourceV1 {
			list, err := client.Tracker().List(resourceapi.SchemeGroupVersion.WithResource("resourceslices"), resourceapi.SchemeGroupVersion.WithKind("ResourceSlice"), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list.(*resourceapi.ResourceSliceList).Items {
				nodes, drivers, devices = append(nodes, *s.Spec.NodeName), append(drivers, s.Spec.Driver), devices+len(s.Spec.Devices)
			}
		} else {
			list, err := client.Tracker().List(resourcev1beta1.SchemeGroupVersion.WithResource("resourceslices"), resourcev1beta1.SchemeGroupVersion.WithKind("ResourceSlice"), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list.(*resourcev1beta1.ResourceSliceList).Items {
				nodes, drivers, devices = append(nodes, s.Spec.NodeName), append(drivers, s.Spec.Driver), devices+len(s.Spec.Devices)
			}
		}
		if len(nodes) == 1 && nodes[0] == node && drivers[0] == defaultDriverName && devices == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ResourceSlice with 2 devices of node %s after 30 s: nodes %q, drivers %q, %d devices", node, nodes, drivers, devices)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := context.Cause(ctx); err != nil {
		t.Fatalf("the driver stopped: %v", err)
	}
}

func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
