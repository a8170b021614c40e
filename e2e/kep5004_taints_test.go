// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourcealphaapi "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var _ = Describe("Extended resources served by DRA and device taints", func() {
	spec := extendedSpecs("DRADeviceTaints")

	It("a NoExecute DeviceTaintRule on the GPU of a running pod evicts it and releases its claim", Label("row:taints"), func(ctx context.Context) {
		pod := runPod(ctx, spec.ns, extendedPod("tainted", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}}))
		claim := spec.claims.extendedClaim(ctx, pod)
		Expect(claim.Status.Allocation.Devices.Results).To(HaveLen(1))
		device := claim.Status.Allocation.Devices.Results[0]
		rule := &resourcealphaapi.DeviceTaintRule{
			ObjectMeta: metav1.ObjectMeta{Name: "e2e-" + spec.ns},
			Spec: resourcealphaapi.DeviceTaintRuleSpec{
				DeviceSelector: &resourcealphaapi.DeviceTaintSelector{Driver: ptr.To(device.Driver), Pool: ptr.To(device.Pool), Device: ptr.To(device.Device)},
				Taint:          resourcealphaapi.DeviceTaint{Key: "draext.dev/e2e", Value: "broken", Effect: resourcealphaapi.DeviceTaintEffectNoExecute},
			},
		}
		_, err := cluster.client.ResourceV1alpha3().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) {
			Expect(cluster.client.ResourceV1alpha3().DeviceTaintRules().Delete(ctx, rule.Name, metav1.DeleteOptions{})).To(Succeed())
		})
		Eventually(ctx, func() (string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return "gone", nil
			}
			if err != nil || p.UID != pod.UID {
				return "gone", err
			}
			if p.DeletionTimestamp != nil {
				return "deleting", nil
			}
			return string(p.Status.Phase), nil
		}).WithTimeout(time.Minute).Should(BeElementOf("deleting", "gone"), "pod %s evicted for the taint of its GPU", pod.Name)
		Eventually(ctx, func() error {
			_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, claim.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound), "claim %s of the evicted pod released", claim.Name)
	})
})
