// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// What overlays/base/resourceslice-policy.yaml names.
const (
	driverServiceAccount = "draext-gpu"
	driverUser           = "system:serviceaccount:" + driverNamespace + ":" + driverServiceAccount
	slicePolicy          = "draext-gpu-resourceslices"
	// nodeNameExtra is the user extra in which the apiserver names the node
	// of a pod-bound service account token.
	nodeNameExtra = "authentication.kubernetes.io/node-name"
)

// The policy is judged through the apiserver, with dry-run writes wherever a
// write would be allowed, so that no slice of the real driver changes. The
// caller is a token of the driver pod, minted through the TokenRequest API
// bound to that pod (what the kubelet does for the pod's own token), and the
// driver's service account impersonated with a node name of our choice
// (impersonation sets user extras as given, so it stands for a token of a
// driver pod on that node).
var _ = Describe("The driver's ResourceSlice policy", func() {
	It("lets a driver pod write only the ResourceSlices of its own node", func(ctx context.Context) {
		driverSlices(ctx) // skips when the example driver does not run
		pod := driverPod(ctx)
		node := pod.Spec.NodeName
		// No node of that name needs to exist for a slice to name it.
		other := "draext-e2e-other-node"
		Expect(node).NotTo(Equal(other))
		requireAllowed(ctx,
			authorizationv1.ResourceAttributes{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: driverNamespace, Name: driverServiceAccount},
			authorizationv1.ResourceAttributes{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"},
			authorizationv1.ResourceAttributes{Verb: "impersonate", Resource: "serviceaccounts", Namespace: driverNamespace, Name: driverServiceAccount},
			authorizationv1.ResourceAttributes{Verb: "impersonate", Group: "authentication.k8s.io", Resource: "userextras", Subresource: nodeNameExtra},
			authorizationv1.ResourceAttributes{Verb: "create", Group: "resource.k8s.io", Resource: "resourceslices"},
			authorizationv1.ResourceAttributes{Verb: "delete", Group: "resource.k8s.io", Resource: "resourceslices"},
		)

		By("a token bound to the driver pod " + pod.Name + " names its node " + node)
		tr, err := cluster.client.CoreV1().ServiceAccounts(driverNamespace).CreateToken(ctx, driverServiceAccount, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{
				ExpirationSeconds: ptr.To[int64](600), // the shortest allowed
				BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		review, err := cluster.client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(review.Status.Authenticated).To(BeTrue(), "token review: %s", review.Status.Error)
		Expect(review.Status.User.Username).To(Equal(driverUser))
		Expect(review.Status.User.Extra).To(HaveKeyWithValue(nodeNameExtra, authenticationv1.ExtraValue{node}),
			"the apiserver does not put the pod's node into its token (ServiceAccountTokenPodNodeInfo): the policy would refuse the driver")
		podToken := rest.AnonymousClientConfig(cluster.config)
		podToken.BearerToken = tr.Status.Token
		asPod := clientFor(podToken)

		By("the driver pod's token may create a slice of its node (dry run), not one of another node or of all nodes")
		createSlice(ctx, asPod, policySlice(*driverName, node))
		expectDenied(createSliceErr(ctx, asPod, policySlice(*driverName, other)), node, "not one of node "+other)
		expectDenied(createSliceErr(ctx, asPod, policySlice(*driverName, "")), node, "not one without spec.nodeName")

		By("it may neither update nor delete a slice of another node")
		// A driver name that no DeviceClass selects: the scheduler ignores
		// this slice while it exists.
		existing, err := cluster.client.ResourceV1beta1().ResourceSlices().Create(ctx, policySlice("policy.e2e.draext.dev", other), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) {
			err := cluster.client.ResourceV1beta1().ResourceSlices().Delete(ctx, existing.Name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				Fail(fmt.Sprintf("delete ResourceSlice %s: %v", existing.Name, err))
			}
		})
		changed := existing.DeepCopy()
		changed.Labels = map[string]string{"draext.dev/e2e": "true"}
		_, err = asPod.ResourceV1beta1().ResourceSlices().Update(ctx, changed, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		expectDenied(err, node, "not one of node "+other)
		err = asPod.ResourceV1beta1().ResourceSlices().Delete(ctx, existing.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		expectDenied(err, node, "not one of node "+other)

		By("the service account with a forged node name " + other + " may write that node's slices only")
		asOther := impersonateDriver(map[string][]string{nodeNameExtra: {other}})
		createSlice(ctx, asOther, policySlice(*driverName, other))
		err = asOther.ResourceV1beta1().ResourceSlices().Delete(ctx, existing.Name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		Expect(err).NotTo(HaveOccurred(), "the forged node's own slice")
		expectDenied(createSliceErr(ctx, asOther, policySlice(*driverName, node)), other, "not one of node "+node)

		By("the service account without a node name may write no slice")
		asNobody := impersonateDriver(nil)
		err = createSliceErr(ctx, asNobody, policySlice(*driverName, node))
		Expect(err).To(HaveOccurred(), "a ResourceSlice written by %s without a node name was allowed", driverUser)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy '" + slicePolicy + "'"))
		Expect(err.Error()).To(ContainSubstring("the request's credentials name no node"))
	})
})

// driverPod is a running pod of the driver DaemonSet that is not being
// deleted (a TokenRequest cannot bind to that). The spec is skipped when the
// driver runs otherwise, e.g. as the local cluster's host processes.
func driverPod(ctx context.Context) v1.Pod {
	GinkgoHelper()
	pods, err := cluster.client.CoreV1().Pods(driverNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=draext-gpu"})
	Expect(err).NotTo(HaveOccurred())
	for _, p := range pods.Items {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil && p.Spec.NodeName != "" && p.Spec.ServiceAccountName == driverServiceAccount {
			return p
		}
	}
	skipOrFail("daemonset", "no running pod of the driver DaemonSet in namespace "+driverNamespace+": the driver runs as host processes (make up), "+
		"which share one client certificate (user draext-gpu-driver) that names no node and that the policy does not restrict; "+
		"make up DRIVER=daemonset or make kind-up deploys the DaemonSet")
	return v1.Pod{}
}

// impersonateDriver is a client that acts as the driver's service account
// with the given user extras.
func impersonateDriver(extra map[string][]string) kubernetes.Interface {
	config := rest.CopyConfig(cluster.config)
	config.Impersonate = rest.ImpersonationConfig{UserName: driverUser, Extra: extra}
	return clientFor(config)
}

// policySlice is a ResourceSlice of the driver with one device, for the node
// ("": for all nodes).
func policySlice(driver, node string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-policy-"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:  driver,
			Pool:    resourceapi.ResourcePool{Name: "draext-e2e-policy", ResourceSliceCount: 1},
			Devices: []resourceapi.Device{{Name: "gpu-0", Basic: &resourceapi.BasicDevice{}}},
		},
	}
	if node == "" {
		s.Spec.AllNodes = true
	} else {
		s.Spec.NodeName = node
	}
	return s
}

// createSliceErr creates the slice as a dry run.
func createSliceErr(ctx context.Context, client kubernetes.Interface, s *resourceapi.ResourceSlice) error {
	_, err := client.ResourceV1beta1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// createSlice creates the slice as a dry run and expects the apiserver to
// allow it.
func createSlice(ctx context.Context, client kubernetes.Interface, s *resourceapi.ResourceSlice) {
	GinkgoHelper()
	Expect(createSliceErr(ctx, client, s)).To(Succeed(), "a ResourceSlice of node %q (dry run)", s.Spec.NodeName)
}

// expectDenied expects the policy's refusal for the driver of node; what
// names the slice that it refused.
func expectDenied(err error, node, what string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "allowed: is %s applied (overlays/base/resourceslice-policy.yaml)?", slicePolicy)
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	msg := err.Error()
	Expect(msg).To(ContainSubstring("ValidatingAdmissionPolicy '" + slicePolicy + "'"))
	Expect(msg).To(ContainSubstring("the driver of node " + node + " may only write ResourceSlices of its own node, " + what))
	Expect(strings.Count(msg, "resulted in error")).To(BeZero(), "the policy failed to evaluate: %s", msg)
}
