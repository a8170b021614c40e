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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
