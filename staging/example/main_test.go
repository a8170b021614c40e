// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestRun(t *testing.T) {
	client := fake.NewClientset(
		&resourceapi.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu.draext.dev"},
			Spec:       resourceapi.DeviceClassSpec{ExtendedResourceName: ptr.To("nvidia.com/gpu")},
		},
		&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "fpga.example.com"}},
		&v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu-pod", Namespace: "default"},
			Status: v1.PodStatus{ExtendedResourceClaimStatus: &v1.PodExtendedResourceClaimStatus{
				ResourceClaimName: "gpu-pod-extended-resources-x7k2p",
				RequestMappings: []v1.ContainerExtendedResourceRequest{
					{ContainerName: "app", ResourceName: "nvidia.com/gpu", RequestName: "container-0-request-0"},
				},
			}},
		},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "default"}},
	)
	testCases := map[string]struct {
		pod     string
		want    []string
		wantErr string
	}{
		"classes only": {
			want: []string{
				"DEVICECLASS       EXTENDED RESOURCE NAMES",
				"fpga.example.com  deviceclass.resource.kubernetes.io/fpga.example.com",
				"gpu.draext.dev    nvidia.com/gpu, deviceclass.resource.kubernetes.io/gpu.draext.dev",
			},
		},
		"pod with a mapping": {
			pod: "default/gpu-pod",
			want: []string{
				"pod default/gpu-pod: extended resource claim gpu-pod-extended-resources-x7k2p",
				"CONTAINER  RESOURCE        REQUEST",
				"app        nvidia.com/gpu  container-0-request-0",
			},
		},
		"pod without a mapping": {pod: "default/plain", want: []string{"pod default/plain: no extended resource is served through DRA"}},
		"missing pod":           {pod: "default/nosuch", wantErr: "not found"},
		"malformed pod":         {pod: "gpu-pod", wantErr: "want NAMESPACE/NAME"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), client, tc.pod, &out)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range tc.want {
				if !strings.Contains(out.String(), line+"\n") {
					t.Errorf("output lacks line %q:\n%s", line, out.String())
				}
			}
		})
	}
}
