// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"os"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var _ = Describe("The example GPU driver", func() {
	It("publishes one ResourceSlice per node, with the GPU attributes and memory", func(ctx context.Context) {
		want, _ := strconv.Atoi(os.Getenv("E2E_GPUS_PER_NODE"))
		for _, s := range driverSlices(ctx) {
			By("slice " + s.Name)
			if want > 0 {
				Expect(s.Spec.Devices).To(HaveLen(want), "E2E_GPUS_PER_NODE")
			}
			Expect(s.Spec.NodeName).NotTo(BeEmpty(), "a per-node slice")
			Expect(s.Spec.Pool.Name).To(Equal(s.Spec.NodeName), "the pool is named after the node")
			Expect(s.Spec.Devices).NotTo(BeEmpty())
			uuids := map[string]bool{}
			for _, d := range s.Spec.Devices {
				Expect(d.Basic).NotTo(BeNil(), "device %s", d.Name)
				for _, attr := range []resourceapi.QualifiedName{"uuid", "productName", "architecture", "driverVersion", "cudaComputeCapability", "index"} {
					Expect(d.Basic.Attributes).To(HaveKey(attr), "device %s", d.Name)
				}
				Expect(d.Basic.Capacity).To(HaveKey(resourceapi.QualifiedName("memory")), "device %s", d.Name)
				uuid := ptr.Deref(d.Basic.Attributes["uuid"].StringValue, "")
				Expect(uuid).To(HavePrefix("GPU-"), "device %s", d.Name)
				Expect(uuids).NotTo(HaveKey(uuid), "UUIDs are unique")
				uuids[uuid] = true
			}
		}
	})

	It("hands a claimed GPU to the container through CDI, and cleans up after the pod", func(ctx context.Context) {
		slices := driverSlices(ctx)
		ns := newNamespace(ctx)
		_, err := cluster.client.ResourceV1beta1().ResourceClaimTemplates(ns).Create(ctx, &resourceapi.ResourceClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: "one-gpu"},
			Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
				Requests: []resourceapi.DeviceRequest{{Name: "gpu", DeviceClassName: *className}},
			}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod := shellPod("claim")
		pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		start := time.Now()
		pod = runPod(ctx, ns, pod)
		GinkgoWriter.Printf("claim pod running after %v\n", time.Since(start).Round(10*time.Millisecond))

		By("the container sees the allocated GPU")
		Expect(pod.Status.ResourceClaimStatuses).To(HaveLen(1))
		claimName := ptr.Deref(pod.Status.ResourceClaimStatuses[0].ResourceClaimName, "")
		claim, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(claim.Status.Allocation).NotTo(BeNil())
		results := claim.Status.Allocation.Devices.Results
		Expect(results).To(HaveLen(1))
		Expect(results[0].Driver).To(Equal(*driverName))
		Expect(results[0].Pool).To(Equal(pod.Spec.NodeName), "allocated from the pod's node")
		uuid := deviceUUID(slices, results[0].Pool, results[0].Device)
		Expect(visibleDevices(ctx, ns, pod.Name)).To(Equal(uuid))

		cdiDir := os.Getenv("E2E_CDI_DIR")
		if cdiDir != "" {
			By("the driver wrote the claim's CDI spec")
			Expect(cdiSpecs(cdiDir, string(claim.UID))).NotTo(BeEmpty())
		}

		By("deleting the pod removes its claim" + map[bool]string{true: " and CDI spec", false: ""}[cdiDir != ""])
		Expect(cluster.client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, func() error {
			_, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).Get(ctx, claimName, metav1.GetOptions{})
			return err
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound), "claim %s is not deleted", claimName)
		if cdiDir != "" {
			Eventually(func() []string { return cdiSpecs(cdiDir, string(claim.UID)) }).WithTimeout(30 * time.Second).Should(BeEmpty())
		}
	})
})
