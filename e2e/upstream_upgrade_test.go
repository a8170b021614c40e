// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// upstreamUpgradeLabel marks the spec that moves a draext cluster to stock
// upstream releases (make upstream-upgrade-test); every other suite leaves
// it out: it leaves the cluster on the last release.
const upstreamUpgradeLabel = "upstream-upgrade"

// upstreamStep is one release the cluster moves to, as make
// upstream-upgrade-test writes it into the file E2E_UPSTREAM_STEPS names:
// the release's binaries and what its components must be started with
// (scripts/lib/common.sh asks the binaries: known_gates,
// served_runtime_config).
type upstreamStep struct {
	Version       string `json:"version"`
	Bin           string `json:"bin"`
	Gates         string `json:"gates"`
	KubeletGates  string `json:"kubeletGates"`
	RuntimeConfig string `json:"runtimeConfig"`
}

// upstreamSteps reads E2E_UPSTREAM_STEPS.
func upstreamSteps() []upstreamStep {
	GinkgoHelper()
	path := os.Getenv("E2E_UPSTREAM_STEPS")
	if path == "" {
		skipOrFail("upstream-upgrade", "E2E_UPSTREAM_STEPS is not set (make upstream-upgrade-test sets it)")
	}
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred(), "E2E_UPSTREAM_STEPS")
	var steps []upstreamStep
	Expect(json.Unmarshal(data, &steps)).To(Succeed(), "E2E_UPSTREAM_STEPS=%s", path)
	Expect(steps).NotTo(BeEmpty(), "E2E_UPSTREAM_STEPS=%s has no release", path)
	for _, s := range steps {
		Expect(s.Version).NotTo(BeEmpty(), "a release of E2E_UPSTREAM_STEPS without version")
		Expect(filepath.Join(s.Bin, "kube-apiserver")).To(BeAnExistingFile(), "the binaries of %s", s.Version)
	}
	return steps
}

// withFlag is the command line with the flag set to value: in place when
// it has the flag, appended when not; an empty value removes it.
func withFlag(args []string, flag, value string) []string {
	var out []string
	found := false
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			if !found && value != "" {
				out = append(out, flag+"="+value)
			}
			found = true
			continue
		}
		out = append(out, a)
	}
	if !found && value != "" {
		out = append(out, flag+"="+value)
	}
	return out
}

// toRelease is the command line of a component of the step's release: its
// binary, the gates that release knows and, for kube-apiserver, the
// resource.k8s.io versions it serves.
func toRelease(step upstreamStep) func(gateComponent, []string) []string {
	return func(c gateComponent, current []string) []string {
		args := slices.Clone(current)
		args[0] = filepath.Join(step.Bin, filepath.Base(args[0]))
		gates := step.Gates
		if strings.HasPrefix(c.name, "kubelet") {
			gates = step.KubeletGates
		}
		args = withFlag(args, "--feature-gates", gates)
		if c.name == "kube-apiserver" {
			args = withFlag(args, "--runtime-config", step.RuntimeConfig)
		}
		return args
	}
}

// The way to upstream (issue 42, make upstream-upgrade-test): a draext
// cluster (make up NODES=2, gate on) with DRA-served pods and a
// device-plugin pod running goes, after the drain that docs/upgrades.md asks
// for, to each stock release of E2E_UPSTREAM_STEPS in turn (1.34 to 1.37),
// every component restarted in the order of the version skew policy with
// what that release needs. After every step it records one line of figures
// (drillReport): running containers untouched, stored fields readable, a
// new nvidia.com/gpu pod, the driver publishing, the claim of a pod that
// ended. What breaks is written down; the spec fails at the end, once every
// step is recorded, when a running pod lost its container, a stored field
// was lost or a new pod did not run through DRA.
var _ = Describe("Upgrade from draext to upstream releases", Label(upstreamUpgradeLabel), func() {
	It("moves a draext cluster with pods running to each upstream release in turn", func(ctx context.Context) {
		steps := upstreamSteps()
		requireCRI()
		requireSchedulerMetrics()
		pluginNodes := devicePluginNodes(ctx)
		Expect(pluginNodes).NotTo(BeEmpty(), "the spec needs a device-plugin node (make up NODES=2)")
		draNode := draNodes(ctx, 1)[0]
		Expect(cluster.gates).To(HaveKeyWithValue("DRAExtendedResource", true), "the spec starts on draext with the gate on (make up)")
		components := gateCycleComponents(ctx, pluginNodes)
		// The version skew policy: kube-apiserver, kube-controller-manager,
		// kube-scheduler, then the kubelets (that of the device-plugin node
		// last).
		last := len(components) - 1
		upOrder := append([]gateComponent{components[0], components[1], components[last]}, components[2:last]...)
		draNodesAtStart := sliceNodes(ctx)
		ns := newNamespace(ctx)
		gpu := map[v1.ResourceName]int{gpuResource: 1}
		implicitName := v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + *className)

		By("draext: an explicit-name pod, an implicit-name pod, a claim-template pod and a device-plugin pod run")
		Expect(cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})).To(
			HaveField("Spec.ExtendedResourceName", HaveValue(Equal(string(gpuResource)))), "DeviceClass %s serves %s", *className, gpuResource)
		templatePod := templateGPUPod(ctx, ns, "template", draNode)
		explicitPod := extendedPod("explicit", draNode, nil, []testContainer{{name: "app", requests: gpu}})
		implicitPod := extendedPod("implicit", draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{implicitName: 1}}})
		dpPod := extendedPod("device-plugin", pluginNodes[0], nil, []testContainer{{name: "app", requests: gpu}})
		// Restart policy Always: a container that a kubelet restarts or
		// replaces shows in its restart count and in the CRI.
		for _, p := range []*v1.Pod{templatePod, explicitPod, implicitPod, dpPod} {
			p.Spec.RestartPolicy = v1.RestartPolicyAlways
		}
		explicit := runPod(ctx, ns, explicitPod)
		implicit := runPod(ctx, ns, implicitPod)
		templated := runPod(ctx, ns, templatePod)
		running := snapshotRunning(ctx, ns, explicit, templated, runPod(ctx, ns, dpPod))
		Expect(explicit.Status.ExtendedResourceClaimStatus).NotTo(BeNil(), "the explicit-name pod runs through DRA")
		Expect(templated.Status.ResourceClaimStatuses).To(HaveLen(1), "the claim-template pod's claim")
		explicitClaim := explicit.Status.ExtendedResourceClaimStatus.ResourceClaimName
		templateClaim := ptr.Deref(templated.Status.ResourceClaimStatuses[0].ResourceClaimName, "")

		By("the drain docs/upgrades.md asks for before 1.34: pods asking for an implicit name")
		implicitClaim := claimOf(ctx, ns, implicit.Name)
		Expect(cluster.client.CoreV1().Pods(ns).Delete(ctx, implicit.Name, metav1.DeleteOptions{})).To(Succeed())
		Eventually(ctx, func() string { return claimState(ctx, ns, implicitClaim) }).WithTimeout(2*time.Minute).Should(Equal("deleted"),
			"the extended resource claim of the drained implicit-name pod")
		drillReport("draext", "%d pods running (explicit name, claim template, device plugin); the implicit-name pod drained and its claim deleted", len(running.pods))

		var problems, lost []string
		for i, step := range steps {
			By("to " + step.Version + ": kube-apiserver, kube-controller-manager, kube-scheduler, then the kubelets")
			start := time.Now()
			rollComponents(ctx, upOrder, draNodesAtStart, pluginNodes, step.Version, toRelease(step))
			took := time.Since(start)
			version, err := cluster.client.Discovery().ServerVersion()
			Expect(err).NotTo(HaveOccurred())
			Expect(version.GitVersion).To(Equal(step.Version), "the kube-apiserver after the step")
			// The kubelets re-admitted their pods while the others
			// restarted: give their status updates time to arrive.
			time.Sleep(10 * time.Second)
			watched := len(running.pods)
			changed := running.changedPods(ctx, step.Version)
			if len(changed) > 0 {
				problems = append(problems, fmt.Sprintf("%s: running pods lost their container: %v", step.Version, changed))
				// The next steps count the others.
				running.forget(changed)
				lost = append(lost, changed...)
			}

			// What the release reads of what draext stored, of the
			// pods still running.
			stored := storedFields(ctx, ns, explicit.Name, explicitClaim, templateClaim, lost)
			for what, ok := range stored {
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: %s", step.Version, what))
				}
			}

			// A new nvidia.com/gpu pod on the DRA node.
			fresh := extendedPod(fmt.Sprintf("new-%d", i), draNode, nil, []testContainer{{name: "app", requests: gpu}})
			newPod := podOutcome(ctx, ns, fresh, v1.PodRunning)
			if !strings.HasPrefix(newPod, "ran through DRA") {
				problems = append(problems, fmt.Sprintf("%s: a new %s pod: %s", step.Version, gpuResource, newPod))
			}
			metricNames := claimMetricNames(ctx)

			// A pod that ends: is its claim released while the pod
			// object stays, and deleted with the pod?
			ending := extendedPod(fmt.Sprintf("ended-%d", i), draNode, nil, []testContainer{{name: "app", requests: gpu}})
			ending.Spec.Containers[0].Command = []string{"sh", "-c", printGPUsCommand}
			endedPod := podOutcome(ctx, ns, ending, v1.PodSucceeded)
			released, deleted := "no claim", "no claim"
			if claim := claimOf(ctx, ns, ending.Name); claim != "" {
				released = eventualClaimState(ctx, ns, claim, time.Minute, func(state string) bool {
					return state == "deleted" || strings.HasPrefix(state, "exists, allocated: false")
				})
				Expect(cluster.client.CoreV1().Pods(ns).Delete(ctx, ending.Name, metav1.DeleteOptions{})).To(Succeed())
				deleted = eventualClaimState(ctx, ns, claim, time.Minute, func(state string) bool { return state == "deleted" })
			}
			Expect(cluster.client.CoreV1().Pods(ns).Delete(ctx, fresh.Name, metav1.DeleteOptions{})).To(Succeed())

			drillReport(step.Version, "all components in %.0fs; running pods whose container restarted or was replaced: %v of %d; stored: %s; "+
				"the example driver publishes on %v; a new %s pod %s; kube-scheduler's claim counters: %s; a pod that ended (%s): its claim 1 min later %s, 1 min after deleting the pod %s",
				took.Seconds(), changed, watched, describeStored(stored), sliceNodes(ctx), gpuResource, newPod, metricNames, endedPod, released, deleted)
		}
		Expect(problems).To(BeEmpty(), "what broke on the way (the figures of every step are in the report)")
	})
})

// claimOf is the name of the pod's extended resource claim, "" when it has
// none (yet).
func claimOf(ctx context.Context, ns, pod string) string {
	GinkgoHelper()
	p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	if p.Status.ExtendedResourceClaimStatus == nil {
		return ""
	}
	return p.Status.ExtendedResourceClaimStatus.ResourceClaimName
}

// storedFields reads, through the current kube-apiserver, what draext
// stored: the DeviceClass's extendedResourceName through v1beta1 and v1, the
// running pod's extendedResourceClaimStatus, and its extended resource claim
// and the template claim still allocated and reserved. The keys say what
// was checked.
func storedFields(ctx context.Context, ns, pod, extendedClaim, templateClaim string, gone []string) map[string]bool {
	GinkgoHelper()
	out := map[string]bool{}
	classV1beta1, err := cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
	out["DeviceClass extendedResourceName through v1beta1"] = err == nil && ptr.Deref(classV1beta1.Spec.ExtendedResourceName, "") == string(gpuResource)
	classV1, err := cluster.client.ResourceV1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
	out["DeviceClass extendedResourceName through v1"] = err == nil && ptr.Deref(classV1.Spec.ExtendedResourceName, "") == string(gpuResource)
	p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	out["pod extendedResourceClaimStatus"] = err == nil && p.Status.ExtendedResourceClaimStatus != nil &&
		p.Status.ExtendedResourceClaimStatus.ResourceClaimName == extendedClaim && len(p.Status.ExtendedResourceClaimStatus.RequestMappings) == 1
	// The claim of a pod that stopped running is released, as it should:
	// only those of running pods must stay allocated and reserved.
	if !slices.Contains(gone, pod) {
		state := claimState(ctx, ns, extendedClaim)
		out["extended resource claim allocated and reserved"] = strings.HasPrefix(state, "exists, allocated: true, reserved for: [")
	}
	state := claimState(ctx, ns, templateClaim)
	out["template claim allocated and reserved"] = strings.HasPrefix(state, "exists, allocated: true, reserved for: [")
	return out
}

// describeStored lists what storedFields found, sorted, e.g.
// "DeviceClass extendedResourceName through v1 ok, ...".
func describeStored(stored map[string]bool) string {
	var out []string
	for what, ok := range stored {
		if ok {
			out = append(out, what+" ok")
		} else {
			out = append(out, what+" LOST")
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// podOutcome creates the pod and says how it did within 2 minutes: "ran
// through DRA with GPU ..." (or "succeeded through DRA ..." for
// PodSucceeded), "ran without DRA ...", or its phase and the last
// scheduling message.
func podOutcome(ctx context.Context, ns string, pod *v1.Pod, phase v1.PodPhase) string {
	GinkgoHelper()
	_, err := cluster.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	var got *v1.Pod
	reached := pollFor(ctx, 2*time.Minute, func() bool {
		p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		got = p
		return p.Status.Phase == phase
	})
	if !reached {
		message := ""
		for _, c := range got.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Message != "" {
				message = ": " + c.Message
			}
		}
		return fmt.Sprintf("stayed %s%s", got.Status.Phase, message)
	}
	verb := "ran"
	if phase == v1.PodSucceeded {
		verb = "succeeded"
	}
	if got.Status.ExtendedResourceClaimStatus == nil {
		return verb + " without DRA (no extendedResourceClaimStatus)"
	}
	return fmt.Sprintf("%s through DRA with GPU %s", verb, visibleDevices(ctx, ns, pod.Name))
}

// eventualClaimState waits up to timeout for the claim's state
// (claimState) to be done, and returns the last state it saw.
func eventualClaimState(ctx context.Context, ns, claim string, timeout time.Duration, done func(string) bool) string {
	GinkgoHelper()
	var state string
	pollFor(ctx, timeout, func() bool {
		state = claimState(ctx, ns, claim)
		return done(state)
	})
	return state
}

// pollFor calls done every 2 seconds until it returns true (then pollFor
// does) or timeout has passed (then false). Unlike Eventually, running out
// of time is an answer, not a failure: the upgrade spec records it.
func pollFor(ctx context.Context, timeout time.Duration, done func() bool) bool {
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, func(context.Context) (bool, error) {
		return done(), nil
	}) == nil
}

// claimMetricNames says which of the claim-creation counters of KEP-5004
// kube-scheduler exports: the 1.35 name, the 1.37 name, both or none.
func claimMetricNames(ctx context.Context) string {
	GinkgoHelper()
	body, err := schedulerMetrics(ctx)
	if err != nil {
		return "unreadable (" + err.Error() + ")"
	}
	var names []string
	for _, name := range []string{"scheduler_resourceclaim_creates_total", "dynamic_resource_allocation_resourceclaim_creates_total"} {
		if strings.Contains(body, "\n"+name+"{") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, " and ")
}
