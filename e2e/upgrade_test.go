// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// upgradeLabel marks the upgrade spec: it needs a local cluster started on
// stock binaries (make upgrade-test starts one); the suites of make test and
// make drills leave it out.
const upgradeLabel = "upgrade"

// The upgrade spec (issue 26, make upgrade-test): a cluster of stock
// v1.33.13 binaries (E2E_BASE_BIN) with device-plugin and claim-template
// pods running is upgraded one component at a time to the patched binaries
// (E2E_UPGRADE_BIN) in the order of the version skew policy with the gate
// off, then the gate is turned on, then everything goes back to stock with
// DRA-served pods running, and up again. Every phase ends with one line of
// figures (drillReport); what a downgrade loses is measured, not asserted.
var _ = Describe("Upgrade from stock v1.33.13", Label(upgradeLabel), func() {
	It("upgrades with pods running, turns the gate on, and measures what a downgrade loses", func(ctx context.Context) {
		baseBin, upgradeBin := os.Getenv("E2E_BASE_BIN"), os.Getenv("E2E_UPGRADE_BIN")
		if baseBin == "" || upgradeBin == "" {
			skipOrFail("upgrade", "E2E_BASE_BIN and E2E_UPGRADE_BIN are not set (make upgrade-test sets them)")
		}
		requireCRI()
		pluginNodes := devicePluginNodes(ctx)
		Expect(pluginNodes).NotTo(BeEmpty(), "the upgrade spec needs a device-plugin node (make up NODES=2)")
		draNode := draNodes(ctx, 1)[0]
		components := gateCycleComponents(ctx, pluginNodes)
		for _, c := range components {
			Expect(filepath.Dir(c.args[0])).To(Equal(filepath.Clean(baseBin)), "%s must start as a stock binary of E2E_BASE_BIN (make up KBIN=%s)", c.name, baseBin)
		}
		Expect(cluster.gates).NotTo(HaveKey("DRAExtendedResource"), "the stock kube-apiserver does not know the gate")
		// components is the order of turning the gate on; the version skew
		// policy upgrades kube-apiserver, kube-controller-manager,
		// kube-scheduler, then the kubelets (that of the device-plugin node
		// last), and downgrades in the reverse order.
		last := len(components) - 1
		kubelets := components[2:last]
		upOrder := append([]gateComponent{components[0], components[1], components[last]}, kubelets...)
		downOrder := append(slices.Clone(kubelets), components[last], components[1], components[0])
		gateOffOrder := append(append([]gateComponent{components[last]}, kubelets...), components[1], components[0])
		withBinaries := func(dir string) func(gateComponent, []string) []string {
			return func(_ gateComponent, current []string) []string {
				args := slices.Clone(current)
				args[0] = filepath.Join(dir, filepath.Base(args[0]))
				return args
			}
		}
		gateTo := func(value bool) func(gateComponent, []string) []string {
			return func(_ gateComponent, current []string) []string {
				return withGate(current, "DRAExtendedResource", value)
			}
		}
		// Back to the stock cluster make upgrade-test started, whatever
		// happened.
		DeferCleanup(restoreComponents, downOrder, []string(nil))
		ns := newNamespace(ctx)
		gpu := map[v1.ResourceName]int{gpuResource: 1}

		By("stock: a device-plugin pod and a claim-template pod run, under a quota of the three GPU names")
		quotaNames := createGPUQuota(ctx, ns, 16)
		templatePod := templateGPUPod(ctx, ns, "template", draNode)
		// Restart policy Always: a container that the kubelet restarts or
		// replaces shows in its restart count and in the CRI.
		dpPod := extendedPod("device-plugin", pluginNodes[0], nil, []testContainer{{name: "app", requests: gpu}})
		dpPod.Spec.RestartPolicy = v1.RestartPolicyAlways
		templatePod.Spec.RestartPolicy = v1.RestartPolicyAlways
		running := snapshotRunning(ctx, ns, runPod(ctx, ns, dpPod), runPod(ctx, ns, templatePod))
		draNodesAtStart := sliceNodes(ctx)

		By("upgrade: every binary replaced in the skew order, the gate still off")
		start := time.Now()
		rollComponents(ctx, upOrder, draNodesAtStart, pluginNodes, "the patched binary", withBinaries(upgradeBin))
		binariesTook := time.Since(start)
		restarts := running.changed(ctx, "patched binaries, gate off")
		Expect(cluster.gates).To(HaveKeyWithValue("DRAExtendedResource", false), "the patched kube-apiserver knows the gate, off by default")

		By("upgrade: the gate on, kube-apiserver first and kube-scheduler last; the DeviceClass gets extendedResourceName")
		start = time.Now()
		rollComponents(ctx, components, draNodesAtStart, pluginNodes, "DRAExtendedResource=true", gateTo(true))
		gateTook := time.Since(start)
		Expect(cluster.gates).To(HaveKeyWithValue("DRAExtendedResource", true))
		restarts += running.changed(ctx, "gate on")
		setExtendedResourceName(ctx, ptr.To(string(gpuResource)))
		// Its watch ends with the next kube-apiserver restart: start it now.
		claims := recordClaims(ctx, ns)
		dra := runPod(ctx, ns, extendedPod("dra", draNode, nil, []testContainer{{name: "app", requests: gpu}}))
		Expect(dra.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "the nvidia.com/gpu pod on the DRA node runs through DRA")
		Expect(visibleDevices(ctx, ns, dra.Name)).NotTo(BeEmpty(), "GPUs of the DRA-served pod")
		drillReport("upgrade", "stock %s to the patched binaries in %.0fs (skew order, gate off), gate on in %.0fs; running pods whose container restarted or was replaced: %d of %d; a nvidia.com/gpu pod then ran through DRA with GPU %s",
			baseVersion(baseBin), binariesTook.Seconds(), gateTook.Seconds(), restarts, len(running.pods), visibleDevices(ctx, ns, dra.Name))
		Expect(restarts).To(BeZero(), "running pods whose container restarted or was replaced across the upgrade")

		By("before the downgrade: more DRA-served pods (one to restart its container, one to end) and the quota's usage")
		restartingPod := extendedPod("dra-restarting", draNode, nil, []testContainer{{name: "app", requests: gpu}})
		restartingPod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
		restarting := runPod(ctx, ns, restartingPod)
		ending := runPod(ctx, ns, extendedPod("dra-ending", draNode, nil, []testContainer{{name: "app", requests: gpu}}))
		draPods := []*v1.Pod{dra, restarting, ending}
		draGPUs := map[string]string{}
		for _, p := range draPods {
			draGPUs[p.Name] = visibleDevices(ctx, ns, p.Name)
		}
		endingClaim := claims.extendedClaim(ctx, ending)
		usedBefore := quotaUsed(ctx, ns, quotaNames)

		By("downgrade: the gate off (kube-scheduler first), then every binary back to stock (kubelets first)")
		start = time.Now()
		rollComponents(ctx, gateOffOrder, draNodesAtStart, pluginNodes, "DRAExtendedResource=false", gateTo(false))
		rollComponents(ctx, downOrder, draNodesAtStart, pluginNodes, "the stock binary", func(c gateComponent, _ []string) []string { return c.args })
		downTook := time.Since(start)
		// The kubelets re-admitted their pods while kube-apiserver, last,
		// restarted: give their status updates time to arrive.
		time.Sleep(30 * time.Second)
		Expect(cluster.gates).NotTo(HaveKey("DRAExtendedResource"), "the stock kube-apiserver again")
		var states []string
		for _, p := range append(slices.Clone(running.pods), draPods...) {
			states = append(states, p.Name+" "+podState(ctx, ns, p.Name, start))
		}
		class, err := cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, dra.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		drillReport("downgrade", "to stock in %.0fs with %d DRA-served pods running; pods after it: %s; through the stock kube-apiserver pod %s has extendedResourceClaimStatus: %t, DeviceClass %s has extendedResourceName: %t",
			downTook.Seconds(), len(draPods), strings.Join(states, "; "), dra.Name, p.Status.ExtendedResourceClaimStatus != nil, *className, class.Spec.ExtendedResourceName != nil)

		By("downgraded: a DRA-served container restarted by the stock kubelet")
		gpusAfterRestart := "none: the container no longer runs (" + podState(ctx, ns, restarting.Name, start) + ")"
		if r, err := cluster.client.CoreV1().Pods(ns).Get(ctx, restarting.Name, metav1.GetOptions{}); err == nil && r.Status.Phase == v1.PodRunning &&
			len(r.Status.ContainerStatuses) > 0 && r.Status.ContainerStatuses[0].State.Running != nil {
			stopped := r.Status.ContainerStatuses[0].ContainerID
			criStop(ctx, containerID(r, "app"))
			// Either another container runs or the kubelet gives up on it
			// for now (CrashLoopBackOff, CreateContainerError, ...).
			var status v1.ContainerStatus
			Eventually(ctx, func() (string, error) {
				r, err := cluster.client.CoreV1().Pods(ns).Get(ctx, restarting.Name, metav1.GetOptions{})
				if err != nil || len(r.Status.ContainerStatuses) == 0 {
					return "", err
				}
				status = r.Status.ContainerStatuses[0]
				switch {
				case status.State.Running != nil && status.ContainerID != stopped:
					return "running again", nil
				case status.State.Waiting != nil && status.State.Waiting.Reason != "ContainerCreating" && status.LastTerminationState.Terminated != nil:
					return "waiting", nil
				}
				return "", nil
			}).WithTimeout(2*time.Minute).ShouldNot(BeEmpty(), "the stock kubelet acts on the stopped container of pod %s", restarting.Name)
			if status.State.Running != nil {
				Eventually(ctx, func() string {
					data, err := cluster.client.CoreV1().Pods(ns).GetLogs(restarting.Name, &v1.PodLogOptions{}).DoRaw(ctx)
					if err != nil || !strings.Contains(string(data), gpusLinePrefix) {
						return ""
					}
					return "printed"
				}).WithTimeout(time.Minute).Should(Equal("printed"), "the restarted container of pod %s prints its GPUs", restarting.Name)
				gpusAfterRestart = fmt.Sprintf("%q", lastGPUs(ctx, ns, restarting.Name))
			} else {
				gpusAfterRestart = fmt.Sprintf("none: the container does not start again (%s; %s)", status.State.Waiting.Reason, lastEventMessage(ctx, ns, restarting.Name, "Failed"))
			}
		}

		By("downgraded: a DRA-served pod ends; is its claim released?")
		if e, err := cluster.client.CoreV1().Pods(ns).Get(ctx, ending.Name, metav1.GetOptions{}); err == nil && e.Status.Phase == v1.PodRunning &&
			len(e.Status.ContainerStatuses) > 0 && e.Status.ContainerStatuses[0].State.Running != nil {
			criStop(ctx, containerID(e, "app"))
		}
		Eventually(ctx, func() (bool, error) {
			e, err := cluster.client.CoreV1().Pods(ns).Get(ctx, ending.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return e.Status.Phase == v1.PodFailed || e.Status.Phase == v1.PodSucceeded ||
				len(e.Status.ContainerStatuses) > 0 && e.Status.ContainerStatuses[0].State.Terminated != nil, nil
		}).WithTimeout(2*time.Minute).Should(BeTrue(), "pod %s ends", ending.Name)
		// Give the stock kube-controller-manager a minute to release it.
		time.Sleep(time.Minute)
		endingClaimAfter := claimState(ctx, ns, endingClaim.Name)
		usedAfter := quotaUsed(ctx, ns, quotaNames)
		drillReport("downgrade losses", "a DRA-served container restarted by the stock kubelet got GPUs %s (before: %q); the claim of a DRA-served pod that ended (%s) 1 min ago: %s; quota used before -> after: %s",
			gpusAfterRestart, draGPUs[restarting.Name], podState(ctx, ns, ending.Name, start), endingClaimAfter, quotaDiff(usedBefore, usedAfter))

		By("re-upgrade: patched binaries and the gate on again")
		start = time.Now()
		rollComponents(ctx, upOrder, draNodesAtStart, pluginNodes, "the patched binary", withBinaries(upgradeBin))
		rollComponents(ctx, components, draNodesAtStart, pluginNodes, "DRAExtendedResource=true", gateTo(true))
		upAgainTook := time.Since(start)
		Expect(cluster.gates).To(HaveKeyWithValue("DRAExtendedResource", true))
		class, err = cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		classKept := class.Spec.ExtendedResourceName != nil
		states = nil
		for _, p := range draPods {
			got, err := cluster.client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				states = append(states, p.Name+" "+err.Error())
				continue
			}
			states = append(states, fmt.Sprintf("%s %s, mapping kept: %t", p.Name, podState(ctx, ns, p.Name, start), got.Status.ExtendedResourceClaimStatus != nil))
		}
		endingClaimUp := claimState(ctx, ns, endingClaim.Name)
		if !classKept {
			setExtendedResourceName(ctx, ptr.To(string(gpuResource)))
		}
		fresh := runPod(ctx, ns, extendedPod("dra-after-reupgrade", draNode, nil, []testContainer{{name: "app", requests: gpu}}))
		Expect(fresh.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "a new nvidia.com/gpu pod runs through DRA after the re-upgrade")
		drillReport("re-upgrade", "patched and gate on again in %.0fs; DeviceClass kept extendedResourceName: %t; DRA-served pods: %s; claim of the pod that ended while downgraded: %s; a new pod ran through DRA with GPU %s",
			upAgainTook.Seconds(), classKept, strings.Join(states, "; "), endingClaimUp, visibleDevices(ctx, ns, fresh.Name))
	})
})

// setExtendedResourceName sets (nil: clears) the example DeviceClass's
// extendedResourceName.
func setExtendedResourceName(ctx context.Context, name *string) {
	GinkgoHelper()
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		class, err := cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
		if err != nil {
			return err
		}
		class.Spec.ExtendedResourceName = name
		_, err = cluster.client.ResourceV1beta1().DeviceClasses().Update(ctx, class, metav1.UpdateOptions{})
		return err
	})).To(Succeed(), "set extendedResourceName of DeviceClass %s", *className)
}

// baseVersion is what the stock kube-apiserver of dir says it is.
func baseVersion(dir string) string {
	out, err := exec.Command(filepath.Join(dir, "kube-apiserver"), "--version").Output()
	if err != nil {
		return "(unknown: " + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// podState is the pod's phase and reason, its first container's state and
// restart count, and the reasons of the pod's Warning events since since,
// e.g. "Failed (OutOfnvidia.com/gpu), terminated (exit 137), restarts 0,
// warnings [OutOfnvidia.com/gpu]".
func podState(ctx context.Context, ns, name string, since time.Time) string {
	GinkgoHelper()
	p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "gone"
	}
	Expect(err).NotTo(HaveOccurred())
	state := string(p.Status.Phase)
	if p.Status.Reason != "" {
		state += " (" + p.Status.Reason + ")"
	}
	if len(p.Status.ContainerStatuses) > 0 {
		c := p.Status.ContainerStatuses[0]
		switch {
		case c.State.Running != nil:
			state += ", running"
		case c.State.Terminated != nil:
			state += fmt.Sprintf(", terminated (exit %d)", c.State.Terminated.ExitCode)
		case c.State.Waiting != nil:
			state += ", waiting (" + c.State.Waiting.Reason + ")"
		}
		state += fmt.Sprintf(", restarts %d", c.RestartCount)
	}
	events, err := cluster.client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var warnings []string
	for _, e := range events.Items {
		if e.Regarding.Name == name && e.Type == v1.EventTypeWarning && !eventTime(e).Before(since) && !slices.Contains(warnings, e.Reason) {
			warnings = append(warnings, e.Reason)
		}
	}
	if len(warnings) > 0 {
		state += fmt.Sprintf(", warnings %v", warnings)
	}
	return state
}

// claimState says whether the claim exists, is allocated and for whom it is
// reserved.
func claimState(ctx context.Context, ns, name string) string {
	GinkgoHelper()
	c, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "deleted"
	}
	Expect(err).NotTo(HaveOccurred())
	var reserved []string
	for _, r := range c.Status.ReservedFor {
		reserved = append(reserved, r.Name)
	}
	return fmt.Sprintf("exists, allocated: %t, reserved for: %v", c.Status.Allocation != nil, reserved)
}

// quotaUsed is the used value of each name of the namespace's quota "gpus".
func quotaUsed(ctx context.Context, ns string, names []v1.ResourceName) map[v1.ResourceName]string {
	GinkgoHelper()
	// The quota controller recalculates on changes and every few minutes;
	// give it a moment to catch up with the last ones.
	time.Sleep(5 * time.Second)
	q, err := cluster.client.CoreV1().ResourceQuotas(ns).Get(ctx, "gpus", metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	used := map[v1.ResourceName]string{}
	for _, n := range names {
		v, ok := q.Status.Used[n]
		if !ok {
			used[n] = "-"
			continue
		}
		used[n] = v.String()
	}
	return used
}

// quotaDiff is "name before->after" for every name, in a stable order.
func quotaDiff(before, after map[v1.ResourceName]string) string {
	var names []string
	for n := range before {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s %s->%s", n, before[v1.ResourceName(n)], after[v1.ResourceName(n)]))
	}
	return strings.Join(out, ", ")
}

// lastEventMessage is the note of the pod's newest event with the reason
// ("" when there is none).
func lastEventMessage(ctx context.Context, ns, pod, reason string) string {
	GinkgoHelper()
	events, err := cluster.client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var last *eventsv1.Event
	for i, e := range events.Items {
		if e.Regarding.Name == pod && e.Reason == reason && (last == nil || eventTime(e).After(eventTime(*last))) {
			last = &events.Items[i]
		}
	}
	if last == nil {
		return ""
	}
	return last.Note
}

// criStop stops the container through its node's containerd, as if it had
// crashed; the kubelet then acts on its restart policy.
func criStop(ctx context.Context, id string) {
	GinkgoHelper()
	socket := criSocketOf(ctx, id)
	out, err := exec.CommandContext(ctx, os.Getenv("E2E_CRICTL"), "--runtime-endpoint", "unix://"+socket, "stop", "--timeout", "1", id).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "crictl stop %s: %s", id, out)
}
