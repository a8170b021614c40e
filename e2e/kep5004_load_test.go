// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The scheduler and the controllers on busy and failure paths (issue 24):
// a pod the scheduler has bound is never scheduled again, and the claims of
// a pod's templates stay in its status.
var _ = Describe("Extended resources served by DRA under load", func() {
	spec := extendedSpecs()

	It("a burst of 50 short pods gets no scheduling failure once a pod is bound", Label("row:failure-paths"), func(ctx context.Context) {
		const count = 50
		for i := range count {
			pod := extendedPod(fmt.Sprintf("burst-%02d", i), spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
			pod.Spec.Containers[0].Command = []string{"sh", "-c", "sleep 1"}
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(ctx, func() (int, error) {
			pods, err := cluster.client.CoreV1().Pods(spec.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			done := 0
			for _, pod := range pods.Items {
				Expect(pod.Status.Phase).NotTo(Equal(v1.PodFailed), "pod %s failed: %s", pod.Name, pod.Status.Message)
				if pod.Status.Phase == v1.PodSucceeded {
					done++
				}
			}
			return done, nil
		}).WithTimeout(5*time.Minute).WithPolling(time.Second).Should(Equal(count), "pods that succeeded")

		pods, err := cluster.client.CoreV1().Pods(spec.ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, pod := range pods.Items {
			var scheduled *v1.PodCondition
			for i := range pod.Status.Conditions {
				if pod.Status.Conditions[i].Type == v1.PodScheduled {
					scheduled = &pod.Status.Conditions[i]
				}
			}
			Expect(scheduled).NotTo(BeNil(), "pod %s has no PodScheduled condition", pod.Name)
			Expect(scheduled.Status).To(Equal(v1.ConditionTrue), "PodScheduled of bound pod %s: %s %s", pod.Name, scheduled.Reason, scheduled.Message)
		}
		events, err := cluster.client.EventsV1().Events(spec.ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		boundAt := map[string]time.Time{}
		for _, event := range events.Items {
			if event.Reason == "Scheduled" {
				boundAt[event.Regarding.Name] = eventTime(event)
			}
		}
		Expect(boundAt).To(HaveLen(count), "Scheduled events")
		failed := 0
		for _, event := range events.Items {
			if event.Reason != "FailedScheduling" {
				continue
			}
			failed++
			Expect(event.Note).NotTo(ContainSubstring("bound already"), "pod %s", event.Regarding.Name)
			Expect(eventTime(event)).NotTo(BeTemporally(">", boundAt[event.Regarding.Name]),
				"FailedScheduling for pod %s after it was bound: %s", event.Regarding.Name, event.Note)
		}
		// The pods waited for GPUs: the check above had something to check.
		Expect(failed).To(BeNumerically(">", 0), "FailedScheduling events of pods waiting for GPUs")
	})

	It("a pod with two claim templates keeps both in its status when one claim is created again", Label("row:template-claims"), func(ctx context.Context) {
		for _, name := range []string{"first", "second"} {
			template := &resourceapi.ResourceClaimTemplate{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
					Name: "gpu", DeviceClassName: *className, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
				}}}}},
			}
			_, err := cluster.client.ResourceV1beta1().ResourceClaimTemplates(spec.ns).Create(ctx, template, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		// More GPUs than the node has: the pod stays pending and its
		// claims unallocated, so a deleted claim is gone at once.
		pod := extendedPod("two-templates", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1000}}})
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "first", ResourceClaimTemplateName: ptr.To("first")}, {Name: "second", ResourceClaimTemplateName: ptr.To("second")}}
		pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "first"}, {Name: "second"}}
		_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		statuses := func() (map[string]string, string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			names := map[string]string{}
			for _, s := range p.Status.ResourceClaimStatuses {
				names[s.Name] = ptr.Deref(s.ResourceClaimName, "")
			}
			return names, p.ResourceVersion, nil
		}
		var before map[string]string
		Eventually(ctx, func() (map[string]string, error) {
			names, _, err := statuses()
			before = names
			return names, err
		}).WithTimeout(time.Minute).Should(HaveLen(2), "both template claims in the pod status")

		Expect(cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Delete(ctx, before["first"], metav1.DeleteOptions{})).To(Succeed())
		var version string
		Eventually(ctx, func() (string, error) {
			names, rv, err := statuses()
			version = rv
			if err != nil {
				return "", err
			}
			if len(names) == 2 && names["first"] != before["first"] && names["first"] != "" && names["second"] == before["second"] {
				return "both", nil
			}
			return fmt.Sprintf("%v", names), nil
		}).WithTimeout(time.Minute).Should(Equal("both"), "the first claim created again and the second kept")
		Consistently(ctx, func() (string, error) {
			names, rv, err := statuses()
			if err != nil {
				return "", err
			}
			if rv != version {
				return fmt.Sprintf("changed to %v (resourceVersion %s)", names, rv), nil
			}
			return "", nil
		}).WithTimeout(5*time.Second).WithPolling(500*time.Millisecond).Should(BeEmpty(), "the pod's claim statuses settle")
		Expect(strings.Join(podEventReasons(ctx, spec.ns, pod.Name), " ")).NotTo(ContainSubstring("FailedResourceClaimCreation"))
	})
})
