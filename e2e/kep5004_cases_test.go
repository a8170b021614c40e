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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The KEP-5004 cases of ../shared/spec/kep-5004.md §8. Each spec runs its
// pods and checks the scheduler's part (where the pod is bound, the devices
// of its extended resource claim, the request mappings in its status) and the
// kubelet's (every container sees exactly the GPUs of the requests mapped to
// it, printed from the DRAEXT_GPU_* variables of the CDI devices it got). The
// claim is also observed through a watch, as the scheduler wrote it. The
// cases not written yet stay pending.
var _ = Describe("Extended resources served by DRA (KEP-5004)", func() {
	spec := extendedSpecs()
	implicit := v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + *className)

	It("one container asking for nvidia.com/gpu gets a DRA device", Label("row:served"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("one", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		Expect(pod.Spec.NodeName).To(Equal(spec.draNode))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(1))
		Expect(pod.Status.ExtendedResourceClaimStatus.RequestMappings).To(ConsistOf(
			mapping("app", gpuResource, "container-0-request-0")))
		expectMappedGPUs(ctx, pod, claim)
	})

	// kube-scheduler counts each claim it creates under the metric name of
	// 1.35 and under the name and owner labels of 1.37, so that dashboards
	// of either release work across an upgrade.
	It("kube-scheduler counts the claim it creates under the metric names of 1.35 and 1.37", Label("row:metrics"), func(ctx context.Context) {
		requireSchedulerMetrics()
		const (
			old     = `scheduler_resourceclaim_creates_total{status="success"}`
			renamed = `dynamic_resource_allocation_resourceclaim_creates_total{owner_api_group="",owner_api_kind="Pod",status="success"}`
		)
		counts := func(ctx context.Context) (map[string]float64, error) {
			values := map[string]float64{}
			for _, series := range []string{old, renamed} {
				value, err := schedulerMetric(ctx, series)
				if err != nil {
					return nil, err
				}
				values[series] = value
			}
			return values, nil
		}
		before, err := counts(ctx)
		Expect(err).NotTo(HaveOccurred(), "read kube-scheduler's /metrics")
		runPod(ctx, spec.ns, extendedPod("counted", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		after, err := counts(ctx)
		Expect(err).NotTo(HaveOccurred(), "read kube-scheduler's /metrics")
		// Specs run one at a time: this pod's claim is the only one created meanwhile.
		Expect(after[old]-before[old]).To(Equal(1.0), old)
		Expect(after[renamed]-before[renamed]).To(Equal(1.0), renamed)
	})

	It("several extended resources in one container", Label("row:served"), func(ctx context.Context) {
		other := v1.ResourceName("draext.dev/e2e-gpu")
		class, err := createDeviceClass(ctx, string(other))
		Expect(err).NotTo(HaveOccurred())
		pod := runPod(ctx, spec.ns, extendedPod("several", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1, other: 2}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(3))
		// Sorted requests of the container: draext.dev/e2e-gpu, nvidia.com/gpu.
		Expect(claimRequests(claim)).To(Equal(map[string]string{
			"container-0-request-0": class.Name + " x2",
			"container-0-request-1": *className + " x1",
		}))
		Expect(pod.Status.ExtendedResourceClaimStatus.RequestMappings).To(ConsistOf(
			mapping("app", other, "container-0-request-0"),
			mapping("app", gpuResource, "container-0-request-1")))
		// Two CDI devices, one per request, in one container.
		Expect(expectMappedGPUs(ctx, pod, claim)["app"]).To(HaveLen(3))
	})

	It("several containers of one pod get disjoint devices", Label("row:served"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("containers", spec.draNode, nil, []testContainer{
			{name: "a", requests: map[v1.ResourceName]int{gpuResource: 1}},
			{name: "b", requests: map[v1.ResourceName]int{gpuResource: 2}},
			{name: "none"},
		}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(3))
		Expect(pod.Status.ExtendedResourceClaimStatus.RequestMappings).To(ConsistOf(
			mapping("a", gpuResource, "container-0-request-0"),
			mapping("b", gpuResource, "container-1-request-0")))
		gpus := expectMappedGPUs(ctx, pod, claim)
		Expect(gpus["a"]).To(HaveLen(1))
		Expect(gpus["b"]).To(HaveLen(2))
		Expect(gpus["b"]).NotTo(ContainElement(gpus["a"][0]))
		Expect(gpus["none"]).To(BeEmpty(), "a container without extended resources got GPUs")
	})

	It("init and sidecar containers", Label("row:init-sidecar"), func(ctx context.Context) {
		// A plain init container asking for 2 runs before the sidecar
		// and the app start: it reuses their two devices, as a device
		// plugin would count it. The sidecar and the app run together
		// and get one device each.
		pod := runPod(ctx, spec.ns, extendedPod("sidecars", spec.draNode,
			[]testContainer{{name: "init", requests: map[v1.ResourceName]int{gpuResource: 2}}, {name: "sidecar", requests: map[v1.ResourceName]int{gpuResource: 1}, sidecar: true}},
			[]testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(2))
		Expect(pod.Status.ExtendedResourceClaimStatus.RequestMappings).To(ConsistOf(
			mapping("sidecar", gpuResource, "container-1-request-0"),
			mapping("app", gpuResource, "container-2-request-0"),
			mapping("init", gpuResource, "container-1-request-0"),
			mapping("init", gpuResource, "container-2-request-0")))
		gpus := expectMappedGPUs(ctx, pod, claim)
		Expect(gpus["init"]).To(ConsistOf(append(gpus["sidecar"], gpus["app"]...)))
		Expect(gpus["app"]).NotTo(Equal(gpus["sidecar"]))
	})

	It("a plain init container shares the device of the main container", Label("row:init-sidecar"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("init-shares", spec.draNode,
			[]testContainer{{name: "init", requests: map[v1.ResourceName]int{gpuResource: 1}}},
			[]testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(1))
		gpus := expectMappedGPUs(ctx, pod, claim)
		Expect(gpus["init"]).To(Equal(gpus["app"]))
	})

	It("explicit (nvidia.com/gpu) and implicit (deviceclass.resource.kubernetes.io/<class>) names", Label("row:served"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("names", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1, implicit: 1}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claimDevices(claim)).To(HaveLen(2))
		Expect(claimRequests(claim)).To(Equal(map[string]string{
			"container-0-request-0": *className + " x1",
			"container-0-request-1": *className + " x1",
		}))
		Expect(pod.Status.ExtendedResourceClaimStatus.RequestMappings).To(ConsistOf(
			mapping("app", implicit, "container-0-request-0"),
			mapping("app", gpuResource, "container-0-request-1")))
		Expect(expectMappedGPUs(ctx, pod, claim)["app"]).To(HaveLen(2))
	})

	It("together with a user ResourceClaim", Label("row:served"), func(ctx context.Context) {
		user := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "user"},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "gpu", DeviceClassName: *className, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
			}}}},
		}
		_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Create(ctx, user, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod := extendedPod("with-claim", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "user", ResourceClaimName: ptr.To("user")}}
		pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "user"}}
		pod = runPod(ctx, spec.ns, pod)
		extendedClaim := spec.claims.extendedClaim(ctx, pod)
		extended := claimDevices(extendedClaim)
		Expect(extended).To(HaveLen(1))
		userClaim := spec.claims.byName(ctx, "user")
		userDevices := claimDevices(userClaim)
		Expect(userDevices).To(HaveLen(1))
		Expect(extended).NotTo(ContainElement(userDevices[0]), "the user claim and the extended resource claim share a device")
		rs := driverSlices(ctx)
		want := append(claimUUIDs(rs, extendedClaim), claimUUIDs(rs, userClaim)...)
		Expect(strings.Split(containerGPUs(ctx, spec.ns, pod.Name, "app"), ",")).To(ConsistOf(want), "the container sees the devices of both claims")
	})

	It("mixed device-plugin and DRA nodes", Label("row:mixed"), func(ctx context.Context) {
		pluginNode := devicePluginNode(ctx)
		gpus := []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}
		dra := runPod(ctx, spec.ns, extendedPod("on-dra", spec.draNode, nil, gpus))
		plugin := runPod(ctx, spec.ns, extendedPod("on-plugin", pluginNode, nil, gpus))
		Expect(dra.Spec.NodeName).To(Equal(spec.draNode))
		expectMappedGPUs(ctx, dra, spec.claims.extendedClaim(ctx, dra))
		Expect(plugin.Spec.NodeName).To(Equal(pluginNode))
		Expect(plugin.Status.ExtendedResourceClaimStatus).To(BeNil(), "the device plugin node's pod has an extended resource claim")
		Expect(spec.claims.ownedBy(plugin)).To(BeEmpty(), "a claim was created for the device plugin node's pod")
		Expect(strings.Split(containerGPUs(ctx, spec.ns, plugin.Name, "app"), ",")).To(ConsistOf(HavePrefix("GPU-")), "the device plugin gives one GPU")
		if os.Getenv("E2E_PODRESOURCES") != "" {
			reported := podResources(ctx, plugin)["app"]
			Expect(reported.Dynamic).To(BeEmpty(), "DRA devices of the device plugin node's pod")
			Expect(reported.Devices).To(HaveLen(1))
			Expect(reported.Devices[0].Resource).To(Equal(string(gpuResource)))
			Expect(reported.Devices[0].IDs).To(HaveLen(1))
		}
	})

	It("stays Pending with a message naming the resource when a node has too few devices", Label("row:unschedulable"), func(ctx context.Context) {
		pod := extendedPod("too-many", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 9}}})
		_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// What the row claims: the message names the resource. draext's
		// also says why and how many (unit-tested in the scheduler), a
		// release's wording may differ.
		Eventually(ctx, func() (string, error) {
			return scheduledMessage(ctx, spec.ns, pod.Name)
		}).WithTimeout(time.Minute).Should(ContainSubstring(string(gpuResource)))
	})

	It("the kubelet rejects extended resources that DRA serves when the pod bypassed the scheduler", Label("row:kubelet"), func(ctx context.Context) {
		// spec.nodeName bypasses the scheduler: no claim, no mapping. The
		// kubelet must not start the containers without their devices.
		for name, resource := range map[string]v1.ResourceName{"bypass-implicit": implicit, "bypass-explicit": gpuResource} {
			pod := extendedPod(name, spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{resource: 1}}})
			pod.Spec.NodeSelector = nil
			pod.Spec.NodeName = spec.draNode
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		failed := func(name string) func() (string, error) {
			return func() (string, error) {
				p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, name, metav1.GetOptions{})
				return string(p.Status.Phase) + " " + p.Status.Reason + ": " + p.Status.Message, err
			}
		}
		// What the row claims: the pod fails, and says which resource.
		// draext's reason is UnallocatedExtendedResource, naming the
		// container and the DeviceClass (unit-tested in the kubelet's
		// lifecycle package); a release's reason and wording may differ.
		// The device manager admits first: where it still knows
		// nvidia.com/gpu from device plugin allocations (a node that moved
		// from the device plugin to DRA) it rejects the request itself.
		Eventually(ctx, failed("bypass-implicit")).WithTimeout(time.Minute).Should(And(
			HavePrefix("Failed "), ContainSubstring(string(implicit))))
		Eventually(ctx, failed("bypass-explicit")).WithTimeout(time.Minute).Should(And(
			HavePrefix("Failed "), ContainSubstring(string(gpuResource))))
	})

	It("the PodResources API reports each container's own devices under dynamic resources", Label("row:kubelet"), func(ctx context.Context) {
		requirePodResources()
		pod := runPod(ctx, spec.ns, extendedPod("podresources", spec.draNode, nil, []testContainer{
			// Explicit names only: the implicit name has specs of its
			// own, and 1.34 does not serve it.
			{name: "a", requests: map[v1.ResourceName]int{gpuResource: 1}},
			{name: "b", requests: map[v1.ResourceName]int{gpuResource: 2}},
			{name: "none"},
		}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Eventually(ctx, func(g Gomega) {
			reported := podResources(ctx, pod)
			for _, c := range pod.Spec.Containers {
				g.Expect(reported).To(HaveKey(c.Name))
				g.Expect(reported[c.Name].dynamicDevices()).To(ConsistOf(mappedDevices(pod, claim, c.Name)), "dynamic resources of container %q", c.Name)
				g.Expect(reported[c.Name].Devices).To(BeEmpty(), "device plugin devices of container %q", c.Name)
				for _, d := range reported[c.Name].Dynamic {
					g.Expect(d.CDI).To(HaveLen(1), "CDI devices of %s in container %q", d.Device, c.Name)
				}
			}
		}).WithTimeout(30 * time.Second).Should(Succeed())
	})

	It("a kubelet restart keeps the devices of a running pod, and a new pod gets others", Label("row:kubelet"), func(ctx context.Context) {
		first := runPod(ctx, spec.ns, extendedPod("before-restart", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 2}}}))
		firstClaim := spec.claims.extendedClaim(ctx, first)
		before := expectMappedGPUs(ctx, first, firstClaim)["app"]
		containerID := first.Status.ContainerStatuses[0].ContainerID

		pluginNodes := devicePluginNodes(ctx)
		oldSlices := nodeSliceUIDs(ctx, spec.draNode)
		restarted := time.Now()
		restartKubelet(ctx, spec.draNode)

		// The v1.33 kubelet deletes its node's ResourceSlices when it
		// starts; the driver must publish them again at once, or the
		// node offers no GPUs to new pods (before, it took 30 s at
		// best and 10 minutes at worst).
		By("the node's ResourceSlice is deleted by the kubelet and published again")
		Eventually(ctx, func() []string {
			uids := nodeSliceUIDs(ctx, spec.draNode)
			if slices.ContainsFunc(uids, func(uid string) bool { return slices.Contains(oldSlices, uid) }) {
				return nil
			}
			return uids
		}).WithTimeout(30*time.Second).ShouldNot(BeEmpty(), "within 30 s of the kubelet restart, node %s has no new ResourceSlice of driver %s (before: %v)", spec.draNode, *driverName, oldSlices)
		By(fmt.Sprintf("published again %.1f s after the restart began", time.Since(restarted).Seconds()))
		waitDevicePluginNodes(ctx, spec.draNode, pluginNodes)

		By("the running pod keeps its container and its devices")
		Consistently(ctx, func() (string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, first.Name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return string(p.Status.Phase) + " " + p.Status.ContainerStatuses[0].ContainerID, nil
		}).WithTimeout(10*time.Second).Should(Equal(string(v1.PodRunning)+" "+containerID), "the pod's container was restarted or the pod stopped")
		if os.Getenv("E2E_PODRESOURCES") != "" {
			Eventually(ctx, func() []string {
				return podResources(ctx, first)["app"].dynamicDevices()
			}).WithTimeout(30*time.Second).Should(ConsistOf(mappedDevices(first, firstClaim, "app")), "devices the restarted kubelet reports for the pod")
		}

		By("a new pod gets devices of its own")
		second := createPodWithin(ctx, spec.ns, extendedPod("after-restart", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 2}}}), v1.PodRunning, 30*time.Second)
		after := expectMappedGPUs(ctx, second, spec.claims.extendedClaim(ctx, second))["app"]
		for _, uuid := range after {
			Expect(before).NotTo(ContainElement(uuid), "the new pod got a GPU of the running one")
		}

		By("the restarted kubelet releases the first pod's claim")
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, first.Name, metav1.DeleteOptions{})).To(Succeed())
		if cdiDir := os.Getenv("E2E_CDI_DIR"); cdiDir != "" {
			Eventually(func() []string { return cdiSpecs(cdiDir, string(firstClaim.UID)) }).WithTimeout(time.Minute).Should(BeEmpty(), "CDI spec of the first pod's claim after unprepare")
		}
	})

	It("the extended resource claim is deleted after success and after failure", Label("row:finished-claims"), func(ctx context.Context) {
		for _, tc := range []struct {
			name, command string
			phase         v1.PodPhase
		}{{"succeeds", "exit 0", v1.PodSucceeded}, {"fails", "exit 1", v1.PodFailed}} {
			By("a pod that " + tc.name)
			pod := extendedPod("job-"+tc.name, spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
			pod.Spec.Containers[0].Command = []string{"sh", "-c", printGPUsCommand + "; " + tc.command}
			pod = createPodUntil(ctx, spec.ns, pod, tc.phase)
			Expect(pod.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "pod %s has no extended resource claim", pod.Name)
			spec.claims.extendedClaim(ctx, pod)
			Expect(containerGPUs(ctx, spec.ns, pod.Name, "app")).To(HavePrefix("GPU-"), "the pod ran with its GPU")
			claimName := pod.Status.ExtendedResourceClaimStatus.ResourceClaimName
			Eventually(ctx, func() error {
				_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, claimName, metav1.GetOptions{})
				return err
			}).WithTimeout(10*time.Second).Should(Satisfy(apierrors.IsNotFound), "claim %s of the pod that %s is not deleted within 10 s", claimName, tc.name)
		}
		By("the devices are free for the next pod")
		runPod(ctx, spec.ns, extendedPod("next", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
	})

	It("a quota of 2 GPUs admits two pods with one GPU each and rejects a third until one goes", Label("row:quota"), func(ctx context.Context) {
		// Each device counts once in each of the three names that can
		// limit it: the pods ask by the explicit name, their claims
		// have devices of the class.
		names := gpuQuotaNames()
		hard := v1.ResourceList{}
		for _, name := range names {
			hard[name] = resource.MustParse("2")
		}
		quota, err := cluster.client.CoreV1().ResourceQuotas(spec.ns).Create(ctx, &v1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "gpus"},
			Spec:       v1.ResourceQuotaSpec{Hard: hard},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		expectUsed := func(want int64) {
			GinkgoHelper()
			Eventually(ctx, func() (map[v1.ResourceName]int64, error) {
				q, err := cluster.client.CoreV1().ResourceQuotas(spec.ns).Get(ctx, quota.Name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				used := map[v1.ResourceName]int64{}
				for name, value := range q.Status.Used {
					used[name] = value.Value()
				}
				return used, nil
			}).WithTimeout(time.Minute).Should(Equal(map[v1.ResourceName]int64{names[0]: want, names[1]: want, names[2]: want}),
				"quota %s does not count %d devices in each name", quota.Name, want)
		}
		expectUsed(0)

		onePod := func(name string) *v1.Pod {
			return extendedPod(name, spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
		}
		first := runPod(ctx, spec.ns, onePod("first"))
		second := runPod(ctx, spec.ns, onePod("second"))
		Expect(claimDevices(spec.claims.extendedClaim(ctx, first))).To(HaveLen(1))
		Expect(claimDevices(spec.claims.extendedClaim(ctx, second))).To(HaveLen(1))
		expectUsed(2)

		By("the third pod is rejected with the quota's message")
		_, err = cluster.client.CoreV1().Pods(spec.ns).Create(ctx, onePod("third"), metav1.CreateOptions{})
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "creating a third pod: %v", err)
		Expect(err.Error()).To(ContainSubstring("exceeded quota: gpus, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2"))

		By("once the first pod is gone, the third is admitted and runs")
		// Deleted gracefully: the pod object goes once its kubelet has
		// unprepared the claim, and the claim with it. (After a forced
		// deletion the scheduler may hand the GPU to the next pod while
		// the first one's container still runs; the driver then
		// refuses to prepare it twice until the kubelet catches up.)
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, first.Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, func() error {
			_, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, first.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound), "pod %s is not deleted", first.Name)
		expectUsed(1)
		third := runPod(ctx, spec.ns, onePod("third"))
		Expect(visibleDevices(ctx, spec.ns, third.Name)).To(HavePrefix("GPU-"), "the third pod runs with its GPU")
		expectUsed(2)
	})

	It("restarts of the driver and the scheduler keep a running pod's devices, and a new pod gets others", Label("row:restarts"), func(ctx context.Context) {
		onePod := func(name string) *v1.Pod {
			return extendedPod(name, spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
		}
		first := runPod(ctx, spec.ns, onePod("before-restarts"))
		firstClaim := spec.claims.extendedClaim(ctx, first)
		before := expectMappedGPUs(ctx, first, firstClaim)["app"]
		containerID := first.Status.ContainerStatuses[0].ContainerID

		restartDriver(ctx, spec.draNode)
		restartScheduler(ctx)

		By("a new pod is scheduled by the restarted scheduler and prepared by the restarted driver")
		second := runPod(ctx, spec.ns, onePod("after-restarts"))
		after := expectMappedGPUs(ctx, second, spec.claims.extendedClaim(ctx, second))["app"]
		Expect(after).To(HaveLen(1))
		Expect(before).NotTo(ContainElement(after[0]), "the new pod got the GPU of the running one")

		By("the running pod kept its container, its claim and its mapping")
		p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, first.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(v1.PodRunning))
		Expect(p.Status.ContainerStatuses[0].ContainerID).To(Equal(containerID), "the pod's container was restarted")
		Expect(p.Status.ExtendedResourceClaimStatus.ResourceClaimName).To(Equal(firstClaim.Name))
		Expect(claimDevices(spec.claims.extendedClaim(ctx, p))).To(Equal(claimDevices(firstClaim)))

		By("the restarted driver unprepares the first pod's claim, which then goes")
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, first.Name, metav1.DeleteOptions{})).To(Succeed())
		if cdiDir := os.Getenv("E2E_CDI_DIR"); cdiDir != "" {
			Eventually(func() []string { return cdiSpecs(cdiDir, string(firstClaim.UID)) }).WithTimeout(time.Minute).Should(BeEmpty(), "CDI spec of the first pod's claim after unprepare")
		}
		Eventually(ctx, func() error {
			_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, firstClaim.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound), "claim %s of the deleted pod", firstClaim.Name)
	})

	// A lifecycle spec (see kep5004_gates_test.go): it restarts every
	// component twice.
	It("gate on, off, on", Label("row:kubelet-gate", lifecycleLabel), func(ctx context.Context) {
		gateCycle(ctx, spec)
	})
})
