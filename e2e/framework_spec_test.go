// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newNamespace creates the spec's namespace and deletes it after the spec,
// saving its objects first when the spec failed.
func newNamespace(ctx context.Context) string {
	ns, err := cluster.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-", Labels: map[string]string{"draext.dev/e2e": "true"}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		if CurrentSpecReport().Failed() {
			collect(ctx, ns.Name)
		}
		err := cluster.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			Fail(fmt.Sprintf("delete namespace %s: %v", ns.Name, err))
		}
		Eventually(ctx, func() error {
			_, err := cluster.client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(2*time.Minute).Should(Satisfy(apierrors.IsNotFound), "namespace %s is not deleted", ns.Name)
	})
	// Pods need the namespace's default ServiceAccount.
	Eventually(ctx, func() error {
		_, err := cluster.client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithTimeout(time.Minute).Should(Succeed())
	return ns.Name
}

// extendedSpec is what a spec of extended resources served by DRA works
// with: its own namespace, the node whose driver serves GPUs through DRA, and
// a recorder of the namespace's claims.
type extendedSpec struct {
	ns      string
	draNode string
	claims  *claimRecorder
}

// extendedSpecs is where every spec of extended resources served by DRA
// starts: called in the body of a Describe, it adds a BeforeEach that needs
// the DRAExtendedResource gate, sets up the spec, then needs the other gates
// named. It returns the extendedSpec that the BeforeEach fills in.
func extendedSpecs(gates ...string) *extendedSpec {
	spec := &extendedSpec{}
	BeforeEach(Offset(1), func(ctx context.Context) {
		requireGate("DRAExtendedResource")
		spec.draNode = driverSlices(ctx)[0].Spec.NodeName
		spec.ns = newNamespace(ctx)
		spec.claims = recordClaims(ctx, spec.ns)
		for _, gate := range gates {
			requireGate(gate)
		}
	})
	return spec
}
