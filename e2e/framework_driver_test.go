// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// driverNamespace is where overlays/base deploys the example driver.
const driverNamespace = "draext-gpu"

// gpuResource is the extended resource that the example driver's DeviceClass
// serves through DRA, and a device plugin the old way.
const gpuResource = v1.ResourceName("nvidia.com/gpu")

// driverSlices are the example driver's ResourceSlices; the spec is skipped
// when the driver does not run in the cluster.
func driverSlices(ctx context.Context) []resourceapi.ResourceSlice {
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []resourceapi.ResourceSlice
	for _, s := range list.Items {
		if s.Spec.Driver == *driverName {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		skipOrFail("driver", fmt.Sprintf("no ResourceSlice of driver %s: the example driver does not run in this cluster (make up deploys it)", *driverName))
	}
	return out
}

// nodeSliceUIDs lists the UIDs of the example driver's ResourceSlices of the
// node.
func nodeSliceUIDs(ctx context.Context, node string) []string {
	GinkgoHelper()
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var uids []string
	for _, s := range list.Items {
		if s.Spec.Driver == *driverName && s.Spec.NodeName == node {
			uids = append(uids, string(s.UID))
		}
	}
	return uids
}

func deviceUUID(slices []resourceapi.ResourceSlice, pool, device string) string {
	for _, s := range slices {
		if s.Spec.Pool.Name != pool {
			continue
		}
		for _, d := range s.Spec.Devices {
			if d.Name == device && d.Basic != nil {
				return ptr.Deref(d.Basic.Attributes["uuid"].StringValue, "")
			}
		}
	}
	Fail("device " + pool + "/" + device + " is in no slice of the driver")
	return ""
}

// cdiSpecs lists the CDI spec files under the glob dir that mention claimUID.
func cdiSpecs(dir, claimUID string) []string {
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, m := range matches {
		if strings.Contains(filepath.Base(m), claimUID) {
			out = append(out, m)
		}
	}
	return out
}

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
	GinkgoHelper()
	nodes, err := listDevicePluginNodes(ctx)
	Expect(err).NotTo(HaveOccurred())
	return nodes
}

// listDevicePluginNodes is devicePluginNodes for polling: an error of the
// API server (one that restarts) is returned, not failed on.
func listDevicePluginNodes(ctx context.Context) ([]string, error) {
	nodes, err := cluster.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes.Items {
		if q, ok := n.Status.Allocatable[gpuResource]; ok && !q.IsZero() {
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}
