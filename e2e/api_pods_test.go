// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Beyond upstream: skip with -ginkgo.label-filter=!beyond-upstream against
// clusters of other builds. Pods are created with dryRun=All: the apiserver
// validates them and returns its warnings, and nothing is scheduled.
var _ = Describe("Pods asking for a device class by its implicit name", Label("beyond-upstream"), func() {
	implicitPod := func(limit, request string) *v1.Pod {
		name := v1.ResourceName("deviceclass.resource.kubernetes.io/" + *className)
		pod := shellPod("quantity")
		if limit != "" {
			pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{name: resource.MustParse(limit)}
		}
		if request != "" {
			pod.Spec.Containers[0].Resources.Requests = v1.ResourceList{name: resource.MustParse(request)}
		}
		return pod
	}
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	// warnedClient is a client of the suite's user that records the
	// apiserver's warnings.
	warnedClient := func() (kubernetes.Interface, *warningRecorder) {
		GinkgoHelper()
		warnings := &warningRecorder{}
		config := rest.CopyConfig(cluster.config)
		config.WarningHandler = warnings
		return clientFor(config), warnings
	}

	DescribeTable("are rejected when the quantity is not a whole number of devices, or a request is below its limit", Label("row:quantities"),
		func(ctx context.Context, limit, request, field, want string) {
			requireGate("DRAExtendedResource")
			ns := newNamespace(ctx)
			_, err := cluster.client.CoreV1().Pods(ns).Create(ctx, implicitPod(limit, request), dryRun)
			Expect(err).To(HaveOccurred(), "the apiserver accepted limit %q, request %q", limit, request)
			Expect(err.Error()).To(ContainSubstring("spec.containers[0].resources." + field + "[deviceclass.resource.kubernetes.io/" + *className + "]"))
			Expect(err.Error()).To(ContainSubstring(`container "app"`))
			Expect(err.Error()).To(ContainSubstring(want))
		},
		Entry("a fractional limit", "500m", "", "limits", "must be a whole number"),
		Entry("a fractional request without a limit", "", "1500m", "requests", "must be a whole number"),
		Entry("a request below the limit", "2", "1", "requests", "cannot be overcommitted"),
	)

	DescribeTable("are accepted as upstream accepts them", Label("row:quantities"),
		func(ctx context.Context, limit, request, wantWarning string) {
			requireGate("DRAExtendedResource")
			ns := newNamespace(ctx)
			client, warnings := warnedClient()
			_, err := client.CoreV1().Pods(ns).Create(ctx, implicitPod(limit, request), dryRun)
			Expect(err).NotTo(HaveOccurred())
			if wantWarning == "" {
				Expect(warnings.list()).To(BeEmpty())
				return
			}
			Expect(warnings.list()).To(ContainElement(And(
				ContainSubstring(`container "app"`),
				ContainSubstring("deviceclass.resource.kubernetes.io/"+*className),
				ContainSubstring(wantWarning))))
		},
		Entry("zero, with a warning", "0", "", "asks for 0 devices"),
		Entry("a request without a limit", "", "1", ""),
		Entry("whole devices, request equal to limit", "2", "2", ""),
	)

	// What a release must do at least, while a refusal would break
	// manifests it accepted before: warn, naming the field and the rule.
	// draext refuses; the forward series for upstream warns first.
	DescribeTable("are at least warned about a quantity that is not a whole number of devices, or a request below its limit", Label("row:quantities-warned"),
		func(ctx context.Context, limit, request, field, want string) {
			requireGate("DRAExtendedResource")
			ns := newNamespace(ctx)
			client, warnings := warnedClient()
			path := "spec.containers[0].resources." + field + "[deviceclass.resource.kubernetes.io/" + *className + "]"
			_, err := client.CoreV1().Pods(ns).Create(ctx, implicitPod(limit, request), dryRun)
			if err != nil {
				Expect(err.Error()).To(And(ContainSubstring(path), ContainSubstring(want)), "refused, but not for this field and rule")
				return
			}
			Expect(warnings.list()).To(ContainElement(And(ContainSubstring(path), ContainSubstring(want))),
				"the apiserver accepted limit %q, request %q without a warning for %s", limit, request, path)
		},
		Entry("a fractional limit", "500m", "", "limits", "whole number"),
		Entry("a fractional request without a limit", "", "1500m", "requests", "whole number"),
		Entry("a request below the limit", "2", "1", "requests", "overcommitted"),
	)
})
