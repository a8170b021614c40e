// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Migration of a node from the device plugin to DRA with pods running
// (issue 27), through the cluster's own tooling: E2E_CLUSTER_MIGRATE names
// the command that moves a node (scripts/cluster/migrate.sh, which make e2e
// sets for the local cluster; MIGRATE_NODE, MIGRATE_TO).
var _ = Describe("Migration from the device plugin", func() {
	spec := extendedSpecs()

	It("device plugin removed, then DRA takes over", Label("row:allocatable-zero", "row:migration"), func(ctx context.Context) {
		migrate := os.Getenv("E2E_CLUSTER_MIGRATE")
		if migrate == "" {
			skipOrFail("restart", "E2E_CLUSTER_MIGRATE is not set: the suite cannot move a node between device plugin and DRA (make e2e sets it for the local cluster)")
		}
		node := devicePluginNode(ctx)
		moveNode := func(ctx context.Context, to string) {
			GinkgoHelper()
			migrateNode(ctx, migrate, node, to)
		}
		gpu := func(n int) map[v1.ResourceName]int { return map[v1.ResourceName]int{gpuResource: n} }
		total := nodeAllocatable(ctx, node)

		By("a device-plugin pod runs on node " + node)
		dp := runPod(ctx, spec.ns, extendedPod("device-plugin", node, nil, []testContainer{{name: "app", requests: gpu(1)}}))
		Expect(dp.Status.ExtendedResourceClaimStatus).To(BeNil(), "pod %s is served by the device plugin", dp.Name)
		held := visibleDevices(ctx, spec.ns, dp.Name)
		Expect(held).To(HavePrefix("GPU-"))

		moveNode(ctx, "dra")
		DeferCleanup(func(ctx context.Context) {
			// The node goes back to the device plugin, for the specs after
			// this one: first the pods of the spec and their claims go.
			Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})).To(Succeed())
			Eventually(ctx, func() ([]string, error) { return claimNames(ctx, spec.ns, nil) }).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims of the spec's pods")
			moveNode(ctx, "device-plugin")
			Eventually(ctx, func() ([]string, error) { return listDevicePluginNodes(ctx) }).WithTimeout(time.Minute).Should(ContainElement(node), "node %s serves nvidia.com/gpu through its device plugin again", node)
		})

		By("the ResourceSlice leaves out the GPU that the device-plugin pod holds")
		published := nodeUUIDs(ctx, node)
		Expect(published).NotTo(ContainElement(held), "GPUs published for node %s", node)
		Expect(published).To(HaveLen(total-1), "GPUs published for node %s: all but the held one", node)

		By("a kubelet restart in the middle of the move keeps the held GPU out of the slice")
		oldSlices := nodeSliceUIDs(ctx, node)
		restartKubelet(ctx, node)
		// The v1.33 kubelet deletes its node's slices when it starts; the
		// driver publishes them again once the kubelet answers which GPUs
		// device-plugin containers hold.
		Eventually(ctx, func() []string {
			uids := nodeSliceUIDs(ctx, node)
			if slices.ContainsFunc(uids, func(uid string) bool { return slices.Contains(oldSlices, uid) }) {
				return nil
			}
			return uids
		}).WithTimeout(time.Minute).ShouldNot(BeEmpty(), "node %s has a new ResourceSlice after its kubelet restarted (before: %v)", node, oldSlices)
		Expect(nodeUUIDs(ctx, node)).To(Equal(published), "GPUs published for node %s after its kubelet restarted", node)

		By("a pod asking for every published GPU runs through DRA, without the held one")
		all := runPod(ctx, spec.ns, extendedPod("dra-all", node, nil, []testContainer{{name: "app", requests: gpu(len(published))}}))
		Expect(all.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "pod %s runs through DRA", all.Name)
		Expect(strings.Split(visibleDevices(ctx, spec.ns, all.Name), ",")).NotTo(ContainElement(held), "GPUs of pod %s", all.Name)

		By("one more pod waits, and the device-plugin pod keeps its container and GPU")
		next, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, extendedPod("dra-next", node, nil, []testContainer{{name: "app", requests: gpu(1)}}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Consistently(ctx, func() (v1.PodPhase, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, next.Name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return p.Status.Phase, nil
		}).WithTimeout(5*time.Second).Should(Equal(v1.PodPending), "pod %s while every free GPU is taken", next.Name)
		p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, dp.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(v1.PodRunning))
		Expect(p.Status.ContainerStatuses[0].ContainerID).To(Equal(dp.Status.ContainerStatuses[0].ContainerID), "the device-plugin pod's container through the move")
		Expect(lastGPUs(ctx, spec.ns, dp.Name)).To(Equal(held))

		By("the device-plugin pod ends: its GPU is published and goes to the waiting pod")
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, dp.Name, metav1.DeleteOptions{})).To(Succeed())
		waitRunning(ctx, spec.ns, next.Name, 2*time.Minute)
		Expect(visibleDevices(ctx, spec.ns, next.Name)).To(Equal(held), "GPU of pod %s", next.Name)
	})

	// Patch 0270: a device plugin and DRA devices of the class that names
	// the same resource on one node let claims be allocated GPUs that the
	// device plugin also gives out. An admin-created ResourceSlice on the
	// device-plugin node stands for a DRA driver started there by mistake.
	It("a node that serves nvidia.com/gpu both ways gets a Warning event and is counted", Label("row:both-ways"), func(ctx context.Context) {
		requireSchedulerMetrics()
		node := devicePluginNode(ctx)
		gauge := fmt.Sprintf("scheduler_extended_resource_nodes_served_both_ways{resource=%q}", gpuResource)
		nodesServedBothWays := func(ctx context.Context) (float64, error) { return schedulerMetric(ctx, gauge) }
		class := classServing(ctx, gpuResource)
		start := time.Now().Add(-time.Second)

		// The events library folds an event about the same node, class
		// and reason into the series of the one it sent before (whatever
		// the note), and writes the series back only once it has ended:
		// a kube-scheduler that warned about this node minutes ago (an
		// earlier run of this spec) would not write a new event. A
		// restarted one starts with no series, and checks every node
		// when it starts to lead. The device count tells this run's
		// event from older ones.
		if os.Getenv("E2E_CLUSTER_CTL") == "" {
			skipOrFail("restart", "E2E_CLUSTER_CTL is not set: the spec restarts kube-scheduler (make e2e sets it for the local cluster)")
		}
		restartScheduler(ctx)
		// Until the restarted scheduler has read the client CA from the
		// apiserver, it takes the suite for anonymous.
		var before float64
		Eventually(ctx, func() (err error) {
			before, err = nodesServedBothWays(ctx)
			return err
		}).WithTimeout(30*time.Second).Should(Succeed(), "read kube-scheduler's /metrics")
		devices := 2 + int(time.Now().UnixMilli()%60)
		By(fmt.Sprintf("an admin publishes a ResourceSlice of driver %s with %d devices for the device-plugin node %s", *driverName, devices, node))
		slice := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-both-ways-"},
			Spec: resourceapi.ResourceSliceSpec{
				Driver:   *driverName,
				NodeName: node,
				Pool:     resourceapi.ResourcePool{Name: "draext-e2e-both-ways-" + node, ResourceSliceCount: 1},
			},
		}
		for i := range devices {
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i), Basic: &resourceapi.BasicDevice{
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"uuid": {StringValue: ptr.To(fmt.Sprintf("GPU-draext-e2e-both-ways-%d", i))}},
			}})
		}
		slice, err := cluster.client.ResourceV1beta1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		deleted := false
		DeferCleanup(func(ctx context.Context) {
			if !deleted {
				Expect(cluster.client.ResourceV1beta1().ResourceSlices().Delete(ctx, slice.Name, metav1.DeleteOptions{})).To(Succeed())
			}
		})

		By("the scheduler warns on the Node, naming the resource, the class and the driver")
		var warning v1.Event
		Eventually(ctx, func() ([]v1.Event, error) {
			events, err := cluster.client.CoreV1().Events("").List(ctx, metav1.ListOptions{
				FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node + ",reason=ExtendedResourceServedBothWays",
			})
			if err != nil {
				return nil, err
			}
			var recent []v1.Event
			for _, e := range events.Items {
				when := e.LastTimestamp.Time
				switch {
				case e.Series != nil:
					when = e.Series.LastObservedTime.Time
				case !e.EventTime.IsZero():
					when = e.EventTime.Time
				}
				if when.After(start) && strings.Contains(e.Message, fmt.Sprintf("published here: %d from driver(s) ", devices)) {
					recent = append(recent, e)
				}
			}
			if len(recent) > 0 {
				warning = recent[0]
			}
			return recent, nil
		}).WithTimeout(30*time.Second).ShouldNot(BeEmpty(), "Warning events ExtendedResourceServedBothWays on node %s", node)
		Expect(warning.Type).To(Equal(v1.EventTypeWarning))
		for _, part := range []string{fmt.Sprintf("Allocatable has %d %s", nodeAllocatable(ctx, node), gpuResource), "DeviceClass " + class, fmt.Sprintf("%d from driver(s) %s.", devices, *driverName)} {
			Expect(warning.Message).To(ContainSubstring(part), "the event names what serves the resource both ways")
		}
		Eventually(ctx, nodesServedBothWays).WithTimeout(30*time.Second).Should(Equal(before+1), "%s with node %s served both ways", gauge, node)

		By("deleting the slice clears the gauge")
		Expect(cluster.client.ResourceV1beta1().ResourceSlices().Delete(ctx, slice.Name, metav1.DeleteOptions{})).To(Succeed())
		deleted = true
		Eventually(ctx, nodesServedBothWays).WithTimeout(30*time.Second).Should(Equal(before), "%s after the slice of node %s is gone", gauge, node)
	})
})

// classServing is the DeviceClass that serves an explicit extended resource
// name: of those that name it, the newest, ties to the smaller name.
func classServing(ctx context.Context, name v1.ResourceName) string {
	GinkgoHelper()
	classes, err := cluster.client.ResourceV1beta1().DeviceClasses().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var serving *resourceapi.DeviceClass
	for i := range classes.Items {
		class := &classes.Items[i]
		if ptr.Deref(class.Spec.ExtendedResourceName, "") != string(name) {
			continue
		}
		if serving == nil || class.CreationTimestamp.After(serving.CreationTimestamp.Time) ||
			(class.CreationTimestamp.Equal(&serving.CreationTimestamp) && class.Name < serving.Name) {
			serving = class
		}
	}
	Expect(serving).NotTo(BeNil(), "no DeviceClass names %s", name)
	return serving.Name
}

// nodeAllocatable is the node's allocatable nvidia.com/gpu.
func nodeAllocatable(ctx context.Context, node string) int {
	GinkgoHelper()
	n, err := cluster.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	q := n.Status.Allocatable[gpuResource]
	return int(q.Value())
}

// nodeUUIDs are the UUIDs of the GPUs that the example driver publishes for
// the node, sorted.
func nodeUUIDs(ctx context.Context, node string) []string {
	GinkgoHelper()
	var uuids []string
	for _, s := range driverSlices(ctx) {
		if s.Spec.NodeName != node {
			continue
		}
		for _, d := range s.Spec.Devices {
			if d.Basic != nil {
				uuids = append(uuids, ptr.Deref(d.Basic.Attributes["uuid"].StringValue, fmt.Sprintf("(%s without uuid)", d.Name)))
			}
		}
	}
	slices.Sort(uuids)
	return uuids
}
