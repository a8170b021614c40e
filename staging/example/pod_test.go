// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// draPod is a pod on n1 whose sidecar "log" and container "app" got GPUs
// through the claim "claim"; "other" asks for none.
func draPod() *v1.Pod {
	p := testPod("gpu-pod", "n1", v1.PodRunning, map[string]int64{gpuName: 2})
	p.Spec.InitContainers = []v1.Container{{Name: "log", RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways), Resources: v1.ResourceRequirements{
		Limits: v1.ResourceList{"deviceclass.resource.kubernetes.io/gpu": resource.MustParse("1")},
	}}}
	p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "other"})
	p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{
		ResourceClaimName: "claim",
		RequestMappings: []v1.ContainerExtendedResourceRequest{
			{ContainerName: "app", ResourceName: gpuName, RequestName: "container-1-request-0"},
			{ContainerName: "log", ResourceName: "deviceclass.resource.kubernetes.io/gpu", RequestName: "container-0-request-0"},
		},
	}
	return &p
}

func draClaim() *resourceClaim {
	return &resourceClaim{
		Namespace: "default", Name: "claim",
		Requests: map[string]string{"container-0-request-0": "gpu", "container-1-request-0": "gpu"},
		Results: []allocationResult{
			{Request: "container-1-request-0", Driver: testDriver, Pool: "n1", Device: "n1-gpu-0"},
			{Request: "container-0-request-0", Driver: testDriver, Pool: "n1", Device: "n1-gpu-2"},
			{Request: "container-1-request-0", Driver: testDriver, Pool: "n1", Device: "n1-gpu-1"},
		},
	}
}

func TestBuildPodReport(t *testing.T) {
	t.Parallel()
	withoutUUID := nodeSlice("n1", "A100", "A100", "A100")
	delete(withoutUUID.Devices[2].Attributes, "uuid")
	withoutUUID.Devices[2].Attributes["gpu.example.com/uuid"] = withoutUUID.Devices[1].Attributes["uuid"]
	testCases := map[string]struct {
		pod          *v1.Pod
		claim        *resourceClaim
		slices       []resourceSlice
		want         []containerExtended
		wantWarnings []string
		wantErr      string
	}{
		"mapping per container, init containers first": {
			pod: draPod(), claim: draClaim(), slices: []resourceSlice{nodeSlice("n1", "A100", "A100", "A100")},
			want: []containerExtended{
				{Name: "log", Resources: []mappedResource{{ResourceName: "deviceclass.resource.kubernetes.io/gpu", Quantity: 1, Request: "container-0-request-0", DeviceClass: "gpu",
					Devices: []allocatedDevice{{Driver: testDriver, Pool: "n1", Device: "n1-gpu-2", UUID: "GPU-n1-gpu-2"}}}}},
				{Name: "app", Resources: []mappedResource{{ResourceName: gpuName, Quantity: 2, Request: "container-1-request-0", DeviceClass: "gpu",
					Devices: []allocatedDevice{{Driver: testDriver, Pool: "n1", Device: "n1-gpu-0", UUID: "GPU-n1-gpu-0"}, {Driver: testDriver, Pool: "n1", Device: "n1-gpu-1", UUID: "GPU-n1-gpu-1"}}}}},
			},
		},
		"a fully qualified uuid attribute; a device in no slice": {
			pod: draPod(), claim: draClaim(), slices: []resourceSlice{func() resourceSlice { s := withoutUUID; s.Devices = s.Devices[1:]; return s }()},
			want: []containerExtended{
				{Name: "log", Resources: []mappedResource{{ResourceName: "deviceclass.resource.kubernetes.io/gpu", Quantity: 1, Request: "container-0-request-0", DeviceClass: "gpu",
					Devices: []allocatedDevice{{Driver: testDriver, Pool: "n1", Device: "n1-gpu-2", UUID: "GPU-n1-gpu-1"}}}}},
				{Name: "app", Resources: []mappedResource{{ResourceName: gpuName, Quantity: 2, Request: "container-1-request-0", DeviceClass: "gpu",
					Devices: []allocatedDevice{{Driver: testDriver, Pool: "n1", Device: "n1-gpu-0"}, {Driver: testDriver, Pool: "n1", Device: "n1-gpu-1", UUID: "GPU-n1-gpu-1"}}}}},
			},
			wantWarnings: []string{"device gpu.example.com/n1/n1-gpu-0 is in no ResourceSlice: no UUID"},
		},
		"claim not allocated": {
			pod: draPod(), claim: &resourceClaim{Namespace: "default", Name: "claim"},
			want: []containerExtended{
				{Name: "log", Resources: []mappedResource{{ResourceName: "deviceclass.resource.kubernetes.io/gpu", Quantity: 1, Request: "container-0-request-0", Devices: []allocatedDevice{}}}},
				{Name: "app", Resources: []mappedResource{{ResourceName: gpuName, Quantity: 2, Request: "container-1-request-0", Devices: []allocatedDevice{}}}},
			},
			wantWarnings: []string{"ResourceClaim default/claim is not allocated"},
		},
		"no claim, scheduled": {
			pod: ptr.To(testPod("dp", "n2", v1.PodRunning, map[string]int64{gpuName: 1})), claim: draClaim(),
			wantErr: "pod default/dp has no extended resource claim (status.extendedResourceClaimStatus is not set): its extended resources, if any, are served by device plugins",
		},
		"no claim, pending": {
			pod: ptr.To(testPod("pending", "", v1.PodPending, nil)), claim: draClaim(),
			wantErr: "pod default/pending has no extended resource claim (status.extendedResourceClaimStatus is not set): it is not scheduled yet",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := buildPodReport(context.Background(), tc.pod, "resource.k8s.io/v1beta2", tc.claim, tc.slices)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Containers, tc.want) {
				t.Errorf("containers:\n%+v\nwant:\n%+v", got.Containers, tc.want)
			}
			if !reflect.DeepEqual(got.Warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q, want %q", got.Warnings, tc.wantWarnings)
			}
			if got.ResourceClaimName != "claim" || got.Node != "n1" || got.Kind != "PodExtendedResources" || got.APIVersion != outputAPIVersion {
				t.Errorf("report = %+v", got)
			}
			if strings.Contains(name, "not allocated") == got.Allocated {
				t.Errorf("allocated = %v", got.Allocated)
			}
		})
	}
}
