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
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// lifecycleLabel marks the specs that restart the whole control plane and
// every kubelet. make test and make drills run them;
// E2E_LABEL_FILTER='!drill && !upgrade && !lifecycle' leaves them out of a quick run.
const lifecycleLabel = "lifecycle"

// The gate cycle (issue 26): DRAExtendedResource turned off and on again in
// a running cluster, component by component, with pods running. The order
// follows who depends on whom: on, kube-apiserver first (it stores the
// fields), then kube-controller-manager, the kubelets (they must prepare an
// extended resource claim before the scheduler makes one) and kube-scheduler
// last; off, the reverse.

// gateComponent is a component of the local cluster with its command line
// as make up started it.
type gateComponent struct {
	name string
	args []string
}

// gateCycleComponents are the components in the order of turning a gate on
// (the two of the control plane first, kube-scheduler last):
// kube-apiserver, kube-controller-manager, the kubelets (those of
// device-plugin nodes last: where kubelets share one device-plugin socket,
// the device plugin registers with the kubelet started last) and
// kube-scheduler.
func gateCycleComponents(ctx context.Context, pluginNodes []string) []gateComponent {
	GinkgoHelper()
	out, err := runClusterCtl(ctx, "find", "kubelet*")
	Expect(err).NotTo(HaveOccurred(), "the kubelets of the cluster")
	kubelets := strings.Fields(out)
	var plugin []string
	for _, node := range pluginNodes {
		plugin = append(plugin, kubeletComponent(ctx, node))
	}
	slices.SortStableFunc(kubelets, func(a, b string) int {
		switch ia, ib := slices.Contains(plugin, a), slices.Contains(plugin, b); {
		case ia && !ib:
			return 1
		case !ia && ib:
			return -1
		}
		return strings.Compare(a, b)
	})
	names := append(append([]string{"kube-apiserver", "kube-controller-manager"}, kubelets...), "kube-scheduler")
	var components []gateComponent
	for _, name := range names {
		components = append(components, gateComponent{name: name, args: componentArgs(ctx, name)})
	}
	return components
}

// withGate is the command line with the gate set to the value: in every
// --feature-gates flag it has, or in one it gets (the kubelet has its gates
// in its config file; a flag wins over it).
func withGate(args []string, gate string, value bool) []string {
	setting := fmt.Sprintf("%s=%t", gate, value)
	out := slices.Clone(args)
	found := false
	for i, a := range out {
		list, ok := strings.CutPrefix(a, "--feature-gates=")
		if !ok {
			continue
		}
		found = true
		var gates []string
		for _, g := range strings.Split(list, ",") {
			if g != "" && !strings.HasPrefix(g, gate+"=") {
				gates = append(gates, g)
			}
		}
		out[i] = "--feature-gates=" + strings.Join(append(gates, setting), ",")
	}
	if !found {
		out = append(out, "--feature-gates="+setting)
	}
	return out
}

// setGate restarts the components, in the order given, with the gate set to
// the value (the spec starts with the gate on, so on is the command line make
// up gave them), and waits until the nodes in draNodes publish their
// ResourceSlices and the device plugin serves the pluginNodes again.
func setGate(ctx context.Context, components []gateComponent, draNodes, pluginNodes []string, gate string, value bool) {
	GinkgoHelper()
	rollComponents(ctx, components, draNodes, pluginNodes, fmt.Sprintf("%s=%t", gate, value), func(c gateComponent, _ []string) []string {
		if value {
			return c.args
		}
		return withGate(c.args, gate, false)
	})
	Expect(cluster.gates).To(HaveKeyWithValue(gate, value), "the API server's gates after the toggle")
}

// rollComponents restarts the components one after the other, in the order
// given, each with the command line that args returns for it and its
// current one (described by what), then starts again whatever exited, and
// waits until every node of draNodes has a ResourceSlice (one created after
// the roll began when it restarted kubelets, which wipe their node's slices
// when they start), the device plugin serves the pluginNodes again, and the
// API server answers with its gates (in cluster.gates).
func rollComponents(ctx context.Context, components []gateComponent, draNodes, pluginNodes []string, what string, args func(c gateComponent, current []string) []string) {
	GinkgoHelper()
	began := time.Now()
	since := time.Time{}
	for _, c := range components {
		if strings.HasPrefix(c.name, "kubelet") {
			since = began
		}
		By(fmt.Sprintf("restarting %s with %s", c.name, what))
		restartComponent(ctx, c.name, args(c, componentArgs(ctx, c.name)))
	}
	// A component that was starting while kube-apiserver restarted may
	// have exited (kube-controller-manager does when it cannot reach it);
	// a supervisor (the kubelet of a static pod, systemd) would start it
	// again, with its new command line.
	superviseComponents(ctx, components)
	// The drivers must publish the slices that the kubelets wiped again.
	Eventually(ctx, func() ([]string, error) { return listSliceNodes(ctx, since) }).WithTimeout(2*time.Minute).Should(Equal(draNodes),
		"nodes with a ResourceSlice of the example driver after the restarts")
	if len(pluginNodes) > 0 {
		// The device plugin registers again with its node's restarted
		// kubelet.
		Eventually(ctx, func() ([]string, error) { return listDevicePluginNodes(ctx) }).WithTimeout(time.Minute).Should(Equal(pluginNodes), "nodes whose device plugin serves nvidia.com/gpu")
	}
	Eventually(ctx, func() (map[string]bool, error) {
		gates, err := readGates(ctx)
		cluster.gates = gates
		return gates, err
	}).WithTimeout(time.Minute).ShouldNot(BeEmpty(), "the API server's gates after the restarts")
}

// sliceNodes are the nodes with a ResourceSlice of the example driver, sorted.
func sliceNodes(ctx context.Context) []string {
	GinkgoHelper()
	nodes, err := listSliceNodes(ctx, time.Time{})
	Expect(err).NotTo(HaveOccurred())
	return nodes
}

// listSliceNodes are the nodes with a ResourceSlice of the example driver
// created at since or later (to the second, as the API server stores it),
// sorted; for polling, an error is returned.
func listSliceNodes(ctx context.Context, since time.Time) ([]string, error) {
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, s := range list.Items {
		if s.Spec.Driver == *driverName && !s.CreationTimestamp.Time.Before(since.Truncate(time.Second)) && !slices.Contains(nodes, s.Spec.NodeName) {
			nodes = append(nodes, s.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	return nodes, nil
}

// restoreComponents gives every component whose command line changed the one
// it had, in the order given, starts whatever exited, reads the API server's
// gates again and waits until the device plugin serves the pluginNodes.
func restoreComponents(ctx context.Context, components []gateComponent, pluginNodes []string) {
	GinkgoHelper()
	for _, c := range components {
		if !slices.Equal(componentArgs(ctx, c.name), c.args) {
			restartComponent(ctx, c.name, c.args)
		}
	}
	superviseComponents(ctx, components)
	cluster.gates = apiserverGates(ctx)
	if len(pluginNodes) > 0 {
		Eventually(ctx, func() ([]string, error) { return listDevicePluginNodes(ctx) }).WithTimeout(time.Minute).Should(Equal(pluginNodes), "nodes whose device plugin serves nvidia.com/gpu")
	}
}

// superviseComponents starts again, with its recorded command line, every
// component of the list that is not running.
func superviseComponents(ctx context.Context, components []gateComponent) {
	GinkgoHelper()
	for _, c := range components {
		clusterCtl(ctx, "start", c.name)
	}
}

// gateCycle is the spec "gate on, off, on".
func gateCycle(ctx context.Context, spec *extendedSpec) {
	GinkgoHelper()
	pluginNodes := devicePluginNodes(ctx)
	draNodes := sliceNodes(ctx)
	components := gateCycleComponents(ctx, pluginNodes)
	// Off: the reverse, but the kubelets in the same order, so that the
	// device plugin stays with the kubelet of its node (started last).
	last := len(components) - 1
	off := append(append([]gateComponent{components[last]}, components[2:last]...), components[1], components[0])
	// Whatever happened, every component gets its command line back, in the
	// order of turning the gate on.
	DeferCleanup(restoreComponents, components, pluginNodes)
	gpu := map[v1.ResourceName]int{gpuResource: 1}

	By("gate on: two pods run through DRA")
	running := runPod(ctx, spec.ns, extendedPod("running", spec.draNode, nil, []testContainer{{name: "app", requests: gpu}}))
	deleted := runPod(ctx, spec.ns, extendedPod("deleted-while-off", spec.draNode, nil, []testContainer{{name: "app", requests: gpu}}))
	runningGPUs := visibleDevices(ctx, spec.ns, running.Name)
	runningContainer := running.Status.ContainerStatuses[0].ContainerID
	runningClaim := spec.claims.extendedClaim(ctx, running)
	deletedClaim := spec.claims.extendedClaim(ctx, deleted)
	expectStillRunning := func(when string) {
		GinkgoHelper()
		p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, running.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Status.Phase).To(Equal(v1.PodRunning), "%s: pod %s", when, p.Name)
		Expect(p.Status.ContainerStatuses[0].ContainerID).To(Equal(runningContainer), "%s: the running pod's container was restarted", when)
		Expect(p.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "%s: the stored extendedResourceClaimStatus of the running pod", when)
		Expect(p.Status.ExtendedResourceClaimStatus.ResourceClaimName).To(Equal(runningClaim.Name), "%s", when)
		// The log comes through the kubelet, which may just have
		// restarted, and the apiserver: lastGPUs reads "" while either
		// cannot serve it.
		Eventually(ctx, func() string { return lastGPUs(ctx, spec.ns, running.Name) }).WithTimeout(30*time.Second).
			Should(Equal(runningGPUs), "%s: GPUs of the running pod", when)
		claim, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, runningClaim.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "%s: the running pod's claim", when)
		Expect(claimDevices(claim)).To(Equal(claimDevices(runningClaim)), "%s: devices of the running pod's claim", when)
	}

	By("gate off, in the order kube-scheduler, kubelets, kube-controller-manager, kube-apiserver")
	setGate(ctx, off, draNodes, pluginNodes, "DRAExtendedResource", false)
	expectStillRunning("gate off")
	class, err := cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(class.Spec.ExtendedResourceName).NotTo(BeNil(), "the stored extendedResourceName of DeviceClass %s with the gate off", *className)

	By("gate off: a nvidia.com/gpu pod pinned to the DRA node stays Pending without a claim")
	pending, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, extendedPod("pending-while-off", spec.draNode, nil, []testContainer{{name: "app", requests: gpu}}), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func() (string, error) {
		p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, pending.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				return c.Message, nil
			}
		}
		return string(p.Status.Phase), nil
	}).WithTimeout(time.Minute).Should(ContainSubstring("Insufficient nvidia.com/gpu"), "why the pod is not scheduled with the gate off")
	// The spec's claim recorder watches no more (kube-apiserver restarted):
	// ask the API server.
	Consistently(ctx, func() ([]string, error) { return claimsOwnedBy(ctx, spec.ns, pending.UID) }).WithTimeout(5*time.Second).Should(BeEmpty(), "claims of the pod created with the gate off")

	By("gate off: deleting a pod still releases its claim")
	Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, deleted.Name, metav1.DeleteOptions{})).To(Succeed())
	Eventually(ctx, func() error {
		_, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).Get(ctx, deletedClaim.Name, metav1.GetOptions{})
		return err
	}).WithTimeout(2*time.Minute).Should(Satisfy(apierrors.IsNotFound), "claim %s of the pod deleted with the gate off", deletedClaim.Name)

	// While the kubelets restart, the device plugin, which every kubelet on
	// this host shares, registers with each of them in turn: a pod pinned to
	// the DRA node and pending across the toggle could be bound to that
	// node's short-lived device-plugin capacity. The pods after the toggle
	// are new ones.
	Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, pending.Name, metav1.DeleteOptions{})).To(Succeed())

	By("gate on again, in the order kube-apiserver, kube-controller-manager, kubelets, kube-scheduler")
	setGate(ctx, components, draNodes, pluginNodes, "DRAExtendedResource", true)
	expectStillRunning("gate on again")

	By("gate on again: new pods run through DRA")
	for _, name := range []string{"new-after-on", "another-after-on"} {
		fresh := runPod(ctx, spec.ns, extendedPod(name, spec.draNode, nil, []testContainer{{name: "app", requests: gpu}}))
		Expect(fresh.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "pod %s runs through DRA", name)
		Expect(visibleDevices(ctx, spec.ns, name)).NotTo(BeEmpty(), "GPUs of pod %s", name)
	}

	By("no claim leaks: every claim goes with its pod")
	Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})).To(Succeed())
	Eventually(ctx, func() ([]string, error) {
		return claimNames(ctx, spec.ns, nil)
	}).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims after every pod is deleted")
}

// claimsOwnedBy are the names of the namespace's claims that the pod
// controls, from the API server.
func claimsOwnedBy(ctx context.Context, ns string, uid types.UID) ([]string, error) {
	list, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range list.Items {
		if owner := metav1.GetControllerOf(&c); owner != nil && owner.UID == uid {
			names = append(names, c.Name)
		}
	}
	return names, nil
}
