// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The typed fields come from the patched k8s.io modules that make staging
// exports (see staging/README.md): what the apiserver stores and serves is
// read through them.

var _ = Describe("DeviceClass.spec.extendedResourceName", func() {
	It("is written through v1beta1 and read back through v1beta2", Label("row:api"), func(ctx context.Context) {
		requireGate("DRAExtendedResource")
		created, err := createDeviceClass(ctx, "example.com/e2e-gpu")
		Expect(err).NotTo(HaveOccurred())
		got, err := cluster.client.ResourceV1beta2().DeviceClasses().Get(ctx, created.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Spec.ExtendedResourceName).To(HaveValue(Equal("example.com/e2e-gpu")), "v1beta2 serves the field")
	})

	DescribeTable("rejects invalid names with an error that names the field",
		func(ctx context.Context, name string) {
			requireGate("DRAExtendedResource")
			_, err := createDeviceClass(ctx, name)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring("spec.extendedResourceName"))
		},
		Entry("no domain", "gpu"),
		Entry("the reserved kubernetes.io domain", "kubernetes.io/gpu"),
		Entry("the implicit class prefix", "deviceclass.resource.kubernetes.io/x"),
		Entry("a requests. prefix", "requests.example.com/gpu"),
		Entry("an empty string", ""),
	)

	It("is dropped when the DRAExtendedResource gate is off", Label("row:api"), func(ctx context.Context) {
		if cluster.gates["DRAExtendedResource"] {
			Skip("feature gate DRAExtendedResource is on in the kube-apiserver")
		}
		created, err := createDeviceClass(ctx, "example.com/e2e-gpu")
		Expect(err).NotTo(HaveOccurred())
		Expect(created.Spec.ExtendedResourceName).To(BeNil(), "the field must be dropped")
	})
})
