// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/draext/draext/internal/podresources"
)

// response is what a kubelet with a device-plugin pod, a DRA pod with two
// devices of one claim and a device of a second claim, and a pod without
// devices reports.
func response() *podresourcesv1.ListPodResourcesResponse {
	return &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Name: "dp", Namespace: "ns1", Containers: []*podresourcesv1.ContainerResources{{
			Name: "app",
			Devices: []*podresourcesv1.ContainerDevices{
				{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-a", "GPU-b"}},
			},
			CpuIds: []int64{1, 2},
		}}},
		{Name: "dra", Namespace: "ns2", Containers: []*podresourcesv1.ContainerResources{
			{Name: "init", DynamicResources: []*podresourcesv1.DynamicResource{{
				ClaimName: "c2", ClaimNamespace: "ns2", ClaimResources: []*podresourcesv1.ClaimResource{
					{DriverName: "gpu.draext.dev", PoolName: "node-1", DeviceName: "gpu-7"},
				},
			}}},
			{Name: "app", DynamicResources: []*podresourcesv1.DynamicResource{
				{ClaimName: "c1", ClaimNamespace: "ns2", ClaimResources: []*podresourcesv1.ClaimResource{
					{DriverName: "gpu.draext.dev", PoolName: "node-1", DeviceName: "gpu-0",
						CDIDevices: []*podresourcesv1.CDIDevice{{Name: "gpu.draext.dev/gpu=uid-0"}}},
					{DriverName: "gpu.draext.dev", PoolName: "node-1", DeviceName: "gpu-1",
						CDIDevices: []*podresourcesv1.CDIDevice{{Name: "gpu.draext.dev/gpu=uid-0"}, {Name: "gpu.draext.dev/gpu=uid-1"}}},
				}},
				{ClaimName: "c2", ClaimNamespace: "ns2", ClaimResources: []*podresourcesv1.ClaimResource{
					{DriverName: "gpu.draext.dev", PoolName: "node-1", DeviceName: "gpu-7"},
				}},
			}},
		}},
		{Name: "none", Namespace: "ns1", Containers: []*podresourcesv1.ContainerResources{{Name: "sh"}}},
	}}
}

const (
	wantDP   = `{"namespace":"ns1","pod":"dp","container":"app","devices":[{"resource":"nvidia.com/gpu","ids":["GPU-a","GPU-b"]}],"dynamic":[]}`
	wantInit = `{"namespace":"ns2","pod":"dra","container":"init","devices":[],"dynamic":[{"claim":"c2","claimNamespace":"ns2","driver":"gpu.draext.dev","pool":"node-1","device":"gpu-7","cdi":[]}]}`
	wantApp  = `{"namespace":"ns2","pod":"dra","container":"app","devices":[],"dynamic":[` +
		`{"claim":"c1","claimNamespace":"ns2","driver":"gpu.draext.dev","pool":"node-1","device":"gpu-0","cdi":["gpu.draext.dev/gpu=uid-0"]},` +
		`{"claim":"c1","claimNamespace":"ns2","driver":"gpu.draext.dev","pool":"node-1","device":"gpu-1","cdi":["gpu.draext.dev/gpu=uid-0","gpu.draext.dev/gpu=uid-1"]},` +
		`{"claim":"c2","claimNamespace":"ns2","driver":"gpu.draext.dev","pool":"node-1","device":"gpu-7","cdi":[]}]}`
	wantNone = `{"namespace":"ns1","pod":"none","container":"sh","devices":[],"dynamic":[]}`
)

func TestContainers(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		resp      *podresourcesv1.ListPodResourcesResponse
		namespace string
		pod       string
		want      string
	}{
		"nil response": {want: `[]`},
		"no pods":      {resp: &podresourcesv1.ListPodResourcesResponse{}, want: `[]`},
		"pod without containers": {
			resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{{Name: "p", Namespace: "ns"}}},
			want: `[]`,
		},
		"nil entries are skipped": {
			resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
				nil,
				{Name: "p", Namespace: "ns", Containers: []*podresourcesv1.ContainerResources{nil, {
					Name:    "c",
					Devices: []*podresourcesv1.ContainerDevices{nil, {ResourceName: "r"}},
					DynamicResources: []*podresourcesv1.DynamicResource{nil, {ClaimName: "x", ClaimNamespace: "ns", ClaimResources: []*podresourcesv1.ClaimResource{
						nil, {DriverName: "d", PoolName: "p", DeviceName: "dev", CDIDevices: []*podresourcesv1.CDIDevice{nil, {Name: "v/k=n"}}},
					}}},
				}}},
			}},
			want: `[{"namespace":"ns","pod":"p","container":"c","devices":[{"resource":"r","ids":[]}],` +
				`"dynamic":[{"claim":"x","claimNamespace":"ns","driver":"d","pool":"p","device":"dev","cdi":["v/k=n"]}]}]`,
		},
		"claim without devices gives no entry": {
			resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{{Name: "p", Namespace: "ns", Containers: []*podresourcesv1.ContainerResources{{
				Name: "c", DynamicResources: []*podresourcesv1.DynamicResource{{ClaimName: "x", ClaimNamespace: "ns"}},
			}}}}},
			want: `[{"namespace":"ns","pod":"p","container":"c","devices":[],"dynamic":[]}]`,
		},
		"all, in the answer's order": {resp: response(), want: "[" + strings.Join([]string{wantDP, wantInit, wantApp, wantNone}, ",") + "]"},
		"namespace":                  {resp: response(), namespace: "ns1", want: "[" + wantDP + "," + wantNone + "]"},
		"pod":                        {resp: response(), pod: "dra", want: "[" + wantInit + "," + wantApp + "]"},
		"namespace and pod":          {resp: response(), namespace: "ns1", pod: "none", want: "[" + wantNone + "]"},
		"pod in another namespace":   {resp: response(), namespace: "ns1", pod: "dra", want: `[]`},
		"unknown pod":                {resp: response(), pod: "nosuch", want: `[]`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(podresources.Containers(tc.resp, tc.namespace, tc.pod))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Containers(%q, %q) =\n%s\nwant\n%s", tc.namespace, tc.pod, got, tc.want)
			}
		})
	}
}

// fakeLister serves a fixed List answer, or an error.
type fakeLister struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	resp *podresourcesv1.ListPodResourcesResponse
	err  error
}

func (f *fakeLister) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	return f.resp, f.err
}

// serve starts a PodResourcesLister on a unix socket in a temporary
// directory and returns the socket's path.
func serve(t *testing.T, srv podresourcesv1.PodResourcesListerServer) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(s, srv)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return sock
}

func TestRunAgainstSocket(t *testing.T) {
	t.Parallel()
	sock := serve(t, &fakeLister{resp: response()})
	failing := serve(t, &fakeLister{err: status.Error(codes.Unavailable, "kubelet is busy")})
	missing := filepath.Join(t.TempDir(), "nosuch.sock")

	testCases := map[string]struct {
		args    []string
		want    string
		wantErr []string
	}{
		"all":               {args: []string{"--socket", sock}, want: "[" + strings.Join([]string{wantDP, wantInit, wantApp, wantNone}, ",") + "]\n"},
		"pod":               {args: []string{"--socket", sock, "--pod", "dra"}, want: "[" + wantInit + "," + wantApp + "]\n"},
		"namespace and pod": {args: []string{"--socket=" + sock, "--namespace=ns1", "--pod=dp"}, want: "[" + wantDP + "]\n"},
		"no match":          {args: []string{"--socket", sock, "--pod", "nosuch"}, want: "[]\n"},
		"missing socket":    {args: []string{"--socket", missing}, wantErr: []string{"kubelet PodResources socket " + missing + " does not exist"}},
		"List fails":        {args: []string{"--socket", failing}, wantErr: []string{"List on kubelet PodResources socket " + failing, "kubelet is busy"}},
		"not a socket":      {args: []string{"--socket", t.TempDir(), "--timeout", "2s"}, wantErr: []string{"List on kubelet PodResources socket "}},
		"bad timeout":       {args: []string{"--socket", sock, "--timeout", "0s"}, wantErr: []string{"--timeout=0s: must be positive"}},
		"extra arguments":   {args: []string{"--socket", sock, "dra"}, wantErr: []string{`unexpected arguments ["dra"]`}},
		"unknown flag":      {args: []string{"--node", "x"}, wantErr: []string{"flag provided but not defined: -node"}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var stdout bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, io.Discard)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("run(%q) succeeded with %q, want an error", tc.args, stdout.String())
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("run(%q) error = %v, want one containing %q", tc.args, err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("run(%q): %v", tc.args, err)
			}
			if stdout.String() != tc.want {
				t.Errorf("run(%q) printed\n%s\nwant\n%s", tc.args, stdout.String(), tc.want)
			}
		})
	}
}
