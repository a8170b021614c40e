// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// Preemption on a DRA node (beyond upstream, patch 0520): a pod with a higher
// priority evicts pods whose own extended resource claims hold the GPUs it
// needs, as it would on a device-plugin node, and no more of them.
var _ = Describe("Preemption for extended resources served by DRA", func() {
	spec := extendedSpecs()

	It("a high-priority pod evicts the fewest low-priority GPU pods and gets their GPUs; asking for more than the node has evicts nobody", Label("row:preemption"), func(ctx context.Context) {
		gpus := nodeGPUs(ctx, spec.draNode)
		waitNodeGPUsFree(ctx, spec.draNode, gpus)
		low := createPriorityClass(ctx, spec.ns+"-low", 0)
		high := createPriorityClass(ctx, spec.ns+"-high", 1000)

		By(fmt.Sprintf("filling node %s with %d priority-0 pods of one GPU each", spec.draNode, gpus))
		victims := map[string]*v1.Pod{}
		for i := range gpus {
			pod := extendedPod(fmt.Sprintf("low-%d", i), spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
			pod.Spec.PriorityClassName = low
			pod, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			victims[pod.Name] = pod
		}
		victimGPUs := map[string]string{}
		victimClaims := map[string]string{}
		for name := range victims {
			pod := waitRunning(ctx, spec.ns, name, 2*time.Minute)
			victims[name] = pod
			victimClaims[name] = spec.claims.extendedClaim(ctx, pod).Name
			victimGPUs[name] = containerGPUs(ctx, spec.ns, name, "app")
		}

		By("a priority-1000 pod asking for more GPUs than the node has")
		tooMany := extendedPod("high-too-many", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: gpus + 1}}})
		tooMany.Spec.PriorityClassName = high
		_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, tooMany, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(ctx, func() (string, error) {
			return scheduledMessage(ctx, spec.ns, tooMany.Name)
		}).WithTimeout(time.Minute).Should(ContainSubstring("cannot allocate devices for extended resources nvidia.com/gpu"))
		Consistently(ctx, func() []string { return gonePods(ctx, spec.ns, victims) }).WithTimeout(5*time.Second).Should(BeEmpty(),
			"a pod that can never fit must not evict anything")
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, tooMany.Name, metav1.DeleteOptions{})).To(Succeed())

		By("a priority-1000 pod asking for 2 GPUs")
		preemptor := extendedPod("high", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 2}}})
		preemptor.Spec.PriorityClassName = high
		preemptor = createPodWithin(ctx, spec.ns, preemptor, v1.PodRunning, 2*time.Minute)
		claim := spec.claims.extendedClaim(ctx, preemptor)
		Expect(claimDevices(claim)).To(HaveLen(2))
		got := expectMappedGPUs(ctx, preemptor, claim)["app"]

		By("exactly two victims are gone, their GPUs are the preemptor's, their claims are deleted")
		evicted := gonePods(ctx, spec.ns, victims)
		Expect(evicted).To(HaveLen(2), "victims evicted for a pod of 2 GPUs")
		var freed []string
		for _, name := range evicted {
			freed = append(freed, strings.Split(victimGPUs[name], ",")...)
			Eventually(ctx, func() error {
				_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, victimClaims[name], metav1.GetOptions{})
				return err
			}).WithTimeout(30*time.Second).Should(Satisfy(apierrors.IsNotFound), "claim %s of evicted pod %s", victimClaims[name], name)
		}
		Expect(got).To(ConsistOf(freed), "the preemptor's container sees the GPUs of the pods it evicted")
		for name := range victims {
			if sets.New(evicted...).Has(name) {
				continue
			}
			pod, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, name, metav1.GetOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(pod.DeletionTimestamp).To(BeNil(), "pod %s was not needed and must keep running", name)
			Expect(pod.Status.Phase).To(Equal(v1.PodRunning), "pod %s", name)
		}
	})

	// Topic preemption: the devices that preemption frees for a nominated pod are
	// held against every lower-priority pod, also one with a claim
	// template. Before, the Deployment's replacement pod took them and the
	// preemptor preempted again, as often as the Deployment recreated it.
	It("a high-priority pod preempts a Deployment's claim-template pods at most once each, and its replacements do not take the freed GPUs", Label("row:preemption"), func(ctx context.Context) {
		gpus := nodeGPUs(ctx, spec.draNode)
		Expect(gpus).To(BeNumerically(">=", 2), "GPUs of node %s", spec.draNode)
		waitNodeGPUsFree(ctx, spec.draNode, gpus)
		low := createPriorityClass(ctx, spec.ns+"-low", 0)
		high := createPriorityClass(ctx, spec.ns+"-high", 1000)

		if gpus > 2 {
			By(fmt.Sprintf("leaving 2 of the %d GPUs of node %s: a priority-1000 pod takes the others", gpus, spec.draNode))
			filler := extendedPod("filler", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: gpus - 2}}})
			filler.Spec.PriorityClassName = high
			runPod(ctx, spec.ns, filler)
		}

		By("a priority-0 Deployment of 2 pods with one GPU each from a ResourceClaimTemplate")
		_, err := cluster.client.ResourceV1beta1().ResourceClaimTemplates(spec.ns).Create(ctx, &resourceapi.ResourceClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
			Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "gpu", DeviceClassName: *className, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
			}}}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod := shellPod("template")
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": spec.draNode}
		pod.Spec.PriorityClassName = low
		// A Deployment's pods restart always.
		pod.Spec.RestartPolicy = v1.RestartPolicyAlways
		pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
		labels := map[string]string{"app": "template-gpu"}
		_, err = cluster.client.AppsV1().Deployments(spec.ns).Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "template-gpu"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		running := func() (int, error) {
			pods, err := cluster.client.CoreV1().Pods(spec.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=template-gpu"})
			if err != nil {
				return 0, err
			}
			n := 0
			for _, p := range pods.Items {
				if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
					n++
				}
			}
			return n, nil
		}
		Eventually(ctx, running).WithTimeout(2*time.Minute).Should(Equal(2), "running pods of the Deployment")

		By("a priority-1000 pod asking for 2 GPUs")
		preemptor := extendedPod("high", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 2}}})
		preemptor.Spec.PriorityClassName = high
		preemptor = createPodWithin(ctx, spec.ns, preemptor, v1.PodRunning, 2*time.Minute)
		Expect(claimDevices(spec.claims.extendedClaim(ctx, preemptor))).To(HaveLen(2))

		By("at most 2 evictions, and the replacements stay pending")
		preempted := func() ([]string, error) {
			events, err := cluster.client.EventsV1().Events(spec.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			victims := sets.New[string]()
			for _, event := range events.Items {
				if event.Reason == "Preempted" && event.Regarding.Kind == "Pod" {
					victims.Insert(event.Regarding.Name)
				}
			}
			return sets.List(victims), nil
		}
		Eventually(ctx, preempted).WithTimeout(30*time.Second).Should(HaveLen(2), "pods preempted for the 2-GPU pod")
		Consistently(ctx, preempted).WithTimeout(10*time.Second).Should(HaveLen(2), "pods preempted for the 2-GPU pod")
		Expect(running()).To(BeZero(), "the Deployment's pods that run next to the preemptor")
		p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, preemptor.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(v1.PodRunning), "the preemptor")
	})
})

// createPriorityClass creates a PriorityClass for the rest of the spec.
func createPriorityClass(ctx context.Context, name string, value int32) string {
	GinkgoHelper()
	_, err := cluster.client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Value:      value,
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		err := cluster.client.SchedulingV1().PriorityClasses().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			Fail(fmt.Sprintf("delete PriorityClass %s: %v", name, err))
		}
	})
	return name
}

// scheduledMessage is the message of the pod's PodScheduled condition, or
// "bound to <node>" once it is bound.
func scheduledMessage(ctx context.Context, ns, name string) (string, error) {
	p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || p.Spec.NodeName != "" {
		return "bound to " + p.Spec.NodeName, err
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return c.Message, nil
		}
	}
	return "", nil
}

// gonePods lists the pods that are deleted or being deleted (the same UID).
func gonePods(ctx context.Context, ns string, pods map[string]*v1.Pod) []string {
	GinkgoHelper()
	var gone []string
	for name, pod := range pods {
		p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			gone = append(gone, name)
		case err != nil:
			Fail(fmt.Sprintf("get pod %s: %v", name, err))
		case p.UID != pod.UID || p.DeletionTimestamp != nil:
			gone = append(gone, name)
		}
	}
	return gone
}

// waitNodeGPUsFree waits until no claim holds a GPU of the node, so that a
// spec can fill it: the claims of earlier specs' pods may still be on their
// way out.
func waitNodeGPUsFree(ctx context.Context, node string, gpus int) {
	GinkgoHelper()
	Eventually(ctx, func() ([]string, error) {
		// Every namespace: the claims of earlier specs' pods.
		return claimNames(ctx, "", func(c resourceapi.ResourceClaim) bool {
			return c.Status.Allocation != nil && slices.ContainsFunc(c.Status.Allocation.Devices.Results,
				func(r resourceapi.DeviceRequestAllocationResult) bool { return r.Pool == node })
		})
	}).WithTimeout(time.Minute).Should(BeEmpty(), "GPUs of node %s (%d) still allocated", node, gpus)
}
