// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Failure paths of the node and the controllers (issue 23): a pod gets only
// its own devices, a kubelet gate change never kills running pods, and no
// extended resource claim is left behind.
var _ = Describe("Extended resources served by DRA on failure paths", func() {
	spec := extendedSpecs()
	implicit := v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + *className)

	It("a pods/status writer cannot point a running pod at another pod's claim", Label("row:repointed"), func(ctx context.Context) {
		victim := runPod(ctx, spec.ns, extendedPod("victim", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		victimClaim := spec.claims.extendedClaim(ctx, victim)
		thief := shellPod("thief")
		thief.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": spec.draNode}
		// The container ends every 5 s: a restart is where the kubelet
		// hands out devices without preparing the claim again.
		thief.Spec.RestartPolicy = v1.RestartPolicyAlways
		thief.Spec.Containers[0].Command = []string{"sh", "-c", printGPUsCommand + "; sleep 5"}
		thief.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}}
		thief = runPod(ctx, spec.ns, thief)

		repoint := func(pod string, resourceName v1.ResourceName) error {
			patch, err := json.Marshal(map[string]any{"status": map[string]any{"extendedResourceClaimStatus": v1.PodExtendedResourceClaimStatus{
				ResourceClaimName: victimClaim.Name,
				RequestMappings:   []v1.ContainerExtendedResourceRequest{mapping("app", resourceName, "container-0-request-0")},
			}}})
			Expect(err).NotTo(HaveOccurred())
			_, err = cluster.client.CoreV1().Pods(spec.ns).Patch(ctx, pod, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
			if apierrors.IsForbidden(err) {
				skipOrFail("admin", "the suite's user may not patch pods/status: "+err.Error())
			}
			return err
		}
		By("repointing the running pod's status at the victim's claim")
		// What a release must not do, asserted as its effect: the bound
		// pod's status names the victim's claim after the write. The
		// mapping names the resource the victim's claim serves, which a
		// release that checks only names accepts.
		err := repoint(thief.Name, gpuResource)
		p, getErr := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, thief.Name, metav1.GetOptions{})
		Expect(getErr).NotTo(HaveOccurred())
		Expect(p.Status.ExtendedResourceClaimStatus).To(BeNil(), "the write through pods/status (error: %v) pointed the running pod %s at claim %s of pod %s", err, thief.Name, victimClaim.Name, victim.Name)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("status.extendedResourceClaimStatus"))

		By("mapping a resource that DRA cannot serve on a pod that is not bound yet")
		pending := shellPod("pending")
		pending.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "no-such-node"}
		pending.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("10m")}}
		_, err = cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pending, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		err = repoint(pending.Name, v1.ResourceCPU)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("status.extendedResourceClaimStatus"), ContainSubstring(string(v1.ResourceCPU))))

		By("the thief never sees a GPU, also after its container restarted")
		Eventually(ctx, func() (int32, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, thief.Name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return 0, err
			}
			return p.Status.ContainerStatuses[0].RestartCount, nil
		}).WithTimeout(time.Minute).Should(BeNumerically(">=", 1), "the thief's container did not restart")
		Expect(visibleDevices(ctx, spec.ns, thief.Name)).To(BeEmpty(), "the thief got GPUs")
		p, err = cluster.client.CoreV1().Pods(spec.ns).Get(ctx, thief.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.ExtendedResourceClaimStatus).To(BeNil(), "the thief's status names a claim")
	})

	It("a kubelet restarted with DRAExtendedResource off keeps running pods, fails new ones clearly, and serves again once it is on", Label("row:kubelet-gate"), func(ctx context.Context) {
		running := map[string]v1.ResourceName{"running-implicit": implicit, "running-explicit": gpuResource}
		containerIDs := map[string]string{}
		for name, resourceName := range running {
			pod := runPod(ctx, spec.ns, extendedPod(name, spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{resourceName: 1}}}))
			expectMappedGPUs(ctx, pod, spec.claims.extendedClaim(ctx, pod))
			containerIDs[name] = pod.Status.ContainerStatuses[0].ContainerID
		}
		expectStillRunning := func(what string) {
			GinkgoHelper()
			Consistently(ctx, func() (map[string]string, error) {
				got := map[string]string{}
				for name := range running {
					p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return nil, err
					}
					id := ""
					if len(p.Status.ContainerStatuses) > 0 {
						id = p.Status.ContainerStatuses[0].ContainerID
					}
					got[name] = string(p.Status.Phase) + " " + id
				}
				return got, nil
			}).WithTimeout(15*time.Second).Should(Equal(map[string]string{
				"running-implicit": string(v1.PodRunning) + " " + containerIDs["running-implicit"],
				"running-explicit": string(v1.PodRunning) + " " + containerIDs["running-explicit"],
			}), "%s: a running pod was stopped or its container restarted", what)
		}

		pluginNodes := devicePluginNodes(ctx)
		By("restarting the kubelet of node " + spec.draNode + " with DRAExtendedResource=false")
		kubelet := kubeletComponent(ctx, spec.draNode)
		original := componentArgs(ctx, kubelet)
		DeferCleanup(func(ctx context.Context) {
			// Whatever happened, also a kubelet that did not get ready
			// with the gate off, the node gets its kubelet back as it was.
			if slices.Contains(componentArgs(ctx, kubelet), "--feature-gates=DRAExtendedResource=false") {
				restartComponent(ctx, kubelet, original)
				waitDevicePluginNodes(ctx, spec.draNode, pluginNodes)
			}
		})
		restartKubeletWith(ctx, spec.draNode, func(args []string) []string {
			// A flag wins over the config file's featureGates.
			return append(args, "--feature-gates=DRAExtendedResource=false")
		})
		waitDevicePluginNodes(ctx, spec.draNode, pluginNodes)
		expectStillRunning("gate off")

		By("a new pod that the scheduler gives a claim fails with a reason naming the gate, and its claim goes")
		pod, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, extendedPod("new-gate-off", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func() (string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, pod.Name, metav1.GetOptions{})
			pod = p
			return string(p.Status.Phase) + " " + p.Status.Reason + ": " + p.Status.Message, err
		}).WithTimeout(time.Minute).Should(And(
			HavePrefix("Failed DRAExtendedResourceDisabled: "),
			ContainSubstring(`container "app" requests nvidia.com/gpu through ResourceClaim `+spec.ns+"/"),
			ContainSubstring("the feature gate DRAExtendedResource is disabled on the kubelet")))
		Expect(pod.Status.ExtendedResourceClaimStatus).NotTo(BeNil())
		claimName := pod.Status.ExtendedResourceClaimStatus.ResourceClaimName
		Eventually(ctx, func() error {
			_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, claimName, metav1.GetOptions{})
			return err
		}).WithTimeout(30*time.Second).Should(Satisfy(apierrors.IsNotFound), "claim %s of the rejected pod is not deleted", claimName)

		By("restarting the kubelet with the gate on again")
		restartKubeletWith(ctx, spec.draNode, func([]string) []string { return original })
		waitDevicePluginNodes(ctx, spec.draNode, pluginNodes)
		expectStillRunning("gate on again")
		if os.Getenv("E2E_PODRESOURCES") != "" {
			for name := range running {
				p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, name, metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred())
				claim := spec.claims.extendedClaim(ctx, p)
				Eventually(ctx, func() []string {
					return podResources(ctx, p)["app"].dynamicDevices()
				}).WithTimeout(30*time.Second).Should(ConsistOf(mappedDevices(p, claim, "app")), "devices the kubelet reports for pod %s", name)
			}
		}
		runPod(ctx, spec.ns, extendedPod("new-gate-on", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
	})

	It("the extended resource claim of a pod deleted with --cascade=orphan is deleted", Label("row:orphan"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("orphan", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, pod.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})).To(Succeed())
		Eventually(ctx, func() (string, error) {
			c, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, claim.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return "", nil
			}
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("owners %v, reserved for %v, allocated %v", c.OwnerReferences, c.Status.ReservedFor, c.Status.Allocation != nil), nil
		}).WithTimeout(time.Minute).Should(BeEmpty(), "claim %s of the orphaning deleted pod is still there", claim.Name)
	})
})
