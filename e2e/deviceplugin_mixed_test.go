// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var _ = Describe("Mixed clusters", func() {
	It("serve nvidia.com/gpu from a device-plugin node, without an extended resource claim", Label("row:mixed"), func(ctx context.Context) {
		node := devicePluginNode(ctx)
		ns := newNamespace(ctx)
		pod := shellPod("device-plugin")
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{gpuResource: resource.MustParse("1")}
		pod = runPod(ctx, ns, pod)
		Expect(visibleDevices(ctx, ns, pod.Name)).To(HavePrefix("GPU-"))
		Expect(pod.Status.ExtendedResourceClaimStatus).To(BeNil(), "a device plugin needs no claim")
	})
})
