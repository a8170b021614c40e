// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// Issue 40: a kubelet that has just started answers PodResources List
// before it has added its pods. The example driver must not take such an
// answer for the truth: no ResourceSlice that it writes during a kubelet
// restart mid-migration, or a start of both (as after a reboot), may list a
// GPU that a device-plugin container holds. A watch records every write.
var _ = Describe("Migration from the device plugin, every slice written", func() {
	spec := extendedSpecs()

	It("a kubelet restart mid-migration never publishes a held GPU", Label("row:migration"), func(ctx context.Context) {
		migrate := os.Getenv("E2E_CLUSTER_MIGRATE")
		if migrate == "" {
			skipOrFail("restart", "E2E_CLUSTER_MIGRATE is not set: the suite cannot move a node between device plugin and DRA (make e2e sets it for the local cluster)")
		}
		if os.Getenv("E2E_CLUSTER_CTL") == "" {
			skipOrFail("restart", "E2E_CLUSTER_CTL is not set: the spec restarts the node's kubelet and driver (make e2e sets it for the local cluster)")
		}
		node := devicePluginNode(ctx)
		gpu := func(n int) map[v1.ResourceName]int { return map[v1.ResourceName]int{gpuResource: n} }
		total := nodeAllocatable(ctx, node)

		By("two device-plugin pods hold a GPU each on node " + node)
		var held []string
		for _, name := range []string{"device-plugin-a", "device-plugin-b"} {
			p := runPod(ctx, spec.ns, extendedPod(name, node, nil, []testContainer{{name: "app", requests: gpu(1)}}))
			Expect(p.Status.ExtendedResourceClaimStatus).To(BeNil(), "pod %s is served by the device plugin", p.Name)
			uuid := visibleDevices(ctx, spec.ns, p.Name)
			Expect(uuid).To(HavePrefix("GPU-"))
			held = append(held, uuid)
		}

		writes := recordSliceWrites(ctx, node)
		migrateNode(ctx, migrate, node, "dra")
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})).To(Succeed())
			Eventually(ctx, func() ([]string, error) { return claimNames(ctx, spec.ns, nil) }).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims of the spec's pods")
			migrateNode(ctx, migrate, node, "device-plugin")
			Eventually(ctx, func() ([]string, error) { return listDevicePluginNodes(ctx) }).WithTimeout(time.Minute).Should(ContainElement(node), "node %s serves nvidia.com/gpu through its device plugin again", node)
		})
		Eventually(ctx, func() []string { return nodeUUIDs(ctx, node) }).WithTimeout(time.Minute).Should(HaveLen(total-len(held)), "GPUs published for node %s: all but the held ones", node)
		writes.expectNone(held)

		// The driver asks the kubelet every 10 s: two rounds after each
		// start, and the writes are checked all along.
		settle := func(what string) {
			GinkgoHelper()
			Eventually(ctx, func() []string { return nodeUUIDs(ctx, node) }).WithTimeout(2*time.Minute).Should(HaveLen(total-len(held)), "GPUs published for node %s after %s", node, what)
			Consistently(ctx, writes.listing(held)).WithTimeout(25*time.Second).WithPolling(time.Second).Should(BeEmpty(), "slice writes for node %s that list a held GPU, after %s", node, what)
		}

		By("restarting the kubelet of node " + node + " mid-migration")
		before := writes.count()
		restartKubelet(ctx, node)
		settle("a kubelet restart")
		Expect(writes.count()).To(BeNumerically(">", before), "the v1.33 kubelet deletes its node's slices when it starts: the driver writes them again")

		By("stopping the driver and the kubelet of node " + node + ", then starting the driver before the kubelet (as after a reboot)")
		driver := component(ctx, "draext-gpu*", "--node-name="+node)
		kubelet := kubeletComponent(ctx, node)
		before = writes.count()
		clusterCtl(ctx, "stop", driver)
		clusterCtl(ctx, "stop", kubelet)
		// The driver asks the kubelet every 2 s until it first publishes:
		// it asks right after the kubelet has started.
		clusterCtl(ctx, "start", driver)
		clusterCtl(ctx, "start", kubelet)
		settle("a start of the driver and the kubelet")
		Expect(writes.count()).To(BeNumerically(">", before), "slice writes for node %s after the kubelet started", node)

		By("the device-plugin pods kept their GPUs, and no write listed one")
		for i, name := range []string{"device-plugin-a", "device-plugin-b"} {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Status.Phase).To(Equal(v1.PodRunning), "pod %s", name)
			Expect(lastGPUs(ctx, spec.ns, name)).To(Equal(held[i]), "GPU of pod %s", name)
		}
		writes.expectNone(held)
		for _, uuid := range held {
			Expect(nodeUUIDs(ctx, node)).NotTo(ContainElement(uuid), "GPUs published for node %s", node)
		}
	})
})

// migrateNode moves the node to the mode (dra, device-plugin) with the
// cluster's migrate command (E2E_CLUSTER_MIGRATE).
func migrateNode(ctx context.Context, migrate, node, to string) {
	GinkgoHelper()
	By("moving node " + node + " to " + to)
	cmd := exec.CommandContext(ctx, migrate)
	cmd.Env = append(os.Environ(), "MIGRATE_NODE="+node, "MIGRATE_TO="+to)
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Run()).To(Succeed(), "%s with MIGRATE_NODE=%s MIGRATE_TO=%s", migrate, node, to)
}

// sliceWrites records every create and update of the example driver's
// ResourceSlices of one node that a watch delivers, and whether the watch
// may have missed one.
type sliceWrites struct {
	mu     sync.Mutex
	writes []sliceWrite
	// gaps say why a write may have been missed.
	gaps []string
}

type sliceWrite struct {
	event    watch.EventType
	name, rv string
	uuids    []string
	at       time.Time
}

func (w sliceWrite) String() string {
	return fmt.Sprintf("%s %s (resourceVersion %s, at %s): %s", w.event, w.name, w.rv, w.at.Format(time.RFC3339Nano), strings.Join(w.uuids, ","))
}

// recordSliceWrites starts recording until the spec ends. A watch that
// ends is started again from the last resourceVersion it delivered; one
// that cannot resume there is a gap.
func recordSliceWrites(ctx context.Context, node string) *sliceWrites {
	GinkgoHelper()
	r := &sliceWrites{}
	selector := fields.Set{
		resourceapi.ResourceSliceSelectorNodeName: node,
		resourceapi.ResourceSliceSelectorDriver:   *driverName,
	}.String()
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: selector})
	Expect(err).NotTo(HaveOccurred())
	rv := list.ResourceVersion
	// The spec's context ends with the It: the watch lasts until its cleanup.
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	started := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		first := true
		for watchCtx.Err() == nil {
			w, err := cluster.client.ResourceV1beta1().ResourceSlices().Watch(watchCtx, metav1.ListOptions{
				FieldSelector: selector, ResourceVersion: rv, AllowWatchBookmarks: true,
			})
			if first {
				close(started)
				first = false
			}
			if err != nil {
				if watchCtx.Err() != nil {
					return
				}
				if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
					r.gap(fmt.Sprintf("watch from resourceVersion %s: %v", rv, err))
					return
				}
				time.Sleep(time.Second)
				continue
			}
			rv = r.drain(w, rv)
			w.Stop()
		}
	}()
	<-started
	return r
}

// drain records the events of one watch until it ends and returns the last
// resourceVersion it delivered.
func (r *sliceWrites) drain(w watch.Interface, rv string) string {
	for event := range w.ResultChan() {
		if event.Type == watch.Error {
			r.gap(fmt.Sprintf("watch error after resourceVersion %s: %v", rv, apierrors.FromObject(event.Object)))
			return rv
		}
		if m, err := meta.Accessor(event.Object); err == nil && m.GetResourceVersion() != "" {
			rv = m.GetResourceVersion()
		}
		slice, ok := event.Object.(*resourceapi.ResourceSlice)
		if !ok || (event.Type != watch.Added && event.Type != watch.Modified) {
			continue
		}
		write := sliceWrite{event: event.Type, name: slice.Name, rv: slice.ResourceVersion, at: time.Now()}
		for _, d := range slice.Spec.Devices {
			if d.Basic != nil {
				write.uuids = append(write.uuids, ptr.Deref(d.Basic.Attributes["uuid"].StringValue, "(device "+d.Name+" without uuid)"))
			}
		}
		slices.Sort(write.uuids)
		r.mu.Lock()
		r.writes = append(r.writes, write)
		r.mu.Unlock()
	}
	return rv
}

func (r *sliceWrites) gap(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gaps = append(r.gaps, why)
}

func (r *sliceWrites) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.writes)
}

// listing returns a poll function: the writes so far that list any of the
// GPUs, and the gaps of the record.
func (r *sliceWrites) listing(uuids []string) func() []string {
	return func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		out := slices.Clone(r.gaps)
		for _, w := range r.writes {
			if slices.ContainsFunc(w.uuids, func(u string) bool { return slices.Contains(uuids, u) }) {
				out = append(out, w.String())
			}
		}
		return out
	}
}

// expectNone fails when a write so far listed any of the GPUs, or the
// record has a gap.
func (r *sliceWrites) expectNone(uuids []string) {
	GinkgoHelper()
	Expect(r.listing(uuids)()).To(BeEmpty(), "slice writes that list a GPU a device-plugin container holds (%v), or gaps of the record", uuids)
}
