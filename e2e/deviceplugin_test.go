// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const gpuResource = v1.ResourceName("nvidia.com/gpu")

// devicePluginNode is a node that advertises nvidia.com/gpu through a device
// plugin; the spec is skipped when there is none.
func devicePluginNode(ctx context.Context) string {
	nodes := devicePluginNodes(ctx)
	if len(nodes) == 0 {
		skipOrFail("device-plugin", "no node advertises nvidia.com/gpu through a device plugin (make up NODES=2 adds one)")
	}
	return nodes[0]
}

// devicePluginNodes are the nodes that advertise nvidia.com/gpu through a
// device plugin (allocatable > 0), sorted by name.
func devicePluginNodes(ctx context.Context) []string {
	nodes, err := cluster.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, n := range nodes.Items {
		if q, ok := n.Status.Allocatable[gpuResource]; ok && !q.IsZero() {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out
}

var _ = Describe("Mixed clusters", func() {
	It("serve nvidia.com/gpu from a device-plugin node, without an extended resource claim", func(ctx context.Context) {
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
