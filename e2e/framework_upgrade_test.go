// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// containerSnapshot is what a running pod's container was when an upgrade
// spec began: its CRI ID, when the runtime started it, and its GPUs.
type containerSnapshot struct{ id, startedAt, gpus string }

// runningPods are the pods an upgrade spec keeps running across its
// restarts, with the snapshot of each one's container.
type runningPods struct {
	ns     string
	pods   []*v1.Pod
	before map[string]containerSnapshot
}

// snapshotRunning records the container of each running pod (its "app"
// container) through the CRI of its node.
func snapshotRunning(ctx context.Context, ns string, pods ...*v1.Pod) *runningPods {
	GinkgoHelper()
	r := &runningPods{ns: ns, pods: pods, before: map[string]containerSnapshot{}}
	for _, p := range pods {
		id := containerID(p, "app")
		c, err := criInspect(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		r.before[p.Name] = containerSnapshot{id: id, startedAt: c.Status.StartedAt, gpus: visibleDevices(ctx, ns, p.Name)}
		Expect(r.before[p.Name].gpus).NotTo(BeEmpty(), "GPUs of pod %s", p.Name)
	}
	return r
}

// changed counts the pods whose container is not the one of the snapshot,
// still running since the same time (asked of the nodes' containerd, not of
// a pod status a restarted kubelet may not have written yet) or whose
// restart count went up, and checks that the pods still see their GPUs.
func (r *runningPods) changed(ctx context.Context, when string) int {
	GinkgoHelper()
	return len(r.changedPods(ctx, when))
}

// changedPods are the pods that changed counts.
func (r *runningPods) changedPods(ctx context.Context, when string) []string {
	GinkgoHelper()
	var changed []string
	for _, p := range r.pods {
		b := r.before[p.Name]
		c, err := criInspect(ctx, b.id)
		if err != nil || c.Status.State != "CONTAINER_RUNNING" || c.Status.StartedAt != b.startedAt {
			GinkgoWriter.Printf("%s: the container %s of pod %s: %+v (%v)\n", when, b.id, p.Name, c.Status, err)
			changed = append(changed, p.Name)
			continue
		}
		got, err := cluster.client.CoreV1().Pods(r.ns).Get(ctx, p.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		if got.Status.ContainerStatuses[0].RestartCount > 0 {
			changed = append(changed, p.Name)
			continue
		}
		// The logs come through the kubelet, which may have just
		// restarted.
		Eventually(ctx, func() string { return lastGPUs(ctx, r.ns, p.Name) }).WithTimeout(30*time.Second).Should(Equal(b.gpus), "%s: GPUs of pod %s", when, p.Name)
	}
	return changed
}

// forget stops watching the pods: a later step counts only the others.
func (r *runningPods) forget(names []string) {
	r.pods = slices.DeleteFunc(r.pods, func(p *v1.Pod) bool { return slices.Contains(names, p.Name) })
}

// templateGPUPod creates the ResourceClaimTemplate "gpu" (one GPU of the
// example DeviceClass) in ns and returns a pod, not created yet, pinned to
// node, whose container gets the claim generated from it.
func templateGPUPod(ctx context.Context, ns, name, node string) *v1.Pod {
	GinkgoHelper()
	template := &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "gpu", DeviceClassName: *className, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
		}}}}},
	}
	_, err := cluster.client.ResourceV1beta1().ResourceClaimTemplates(ns).Create(ctx, template, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	pod := shellPod(name)
	pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
	return pod
}
