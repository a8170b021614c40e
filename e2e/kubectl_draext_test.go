// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The kubectl plugin kubectl-draext (staging/example, issue 27) against the
// cluster: what it prints with -o json must be what the API holds. The suite
// runs the binary that E2E_KUBECTL_DRAEXT names (scripts/test/e2e.sh builds
// it); it needs make up NODES=2: a node whose driver serves GPUs through DRA
// and one whose device plugin serves them.
var _ = Describe("kubectl draext", Label("kubectl-draext"), func() {
	spec := extendedSpecs()

	It("nodes and pod -o json match the slices, claims, node status and pods, with a mixed workload running", Label("row:kubectl-draext"), func(ctx context.Context) {
		plugin := os.Getenv("E2E_KUBECTL_DRAEXT")
		if plugin == "" {
			why := "E2E_KUBECTL_DRAEXT is not set: it names the kubectl-draext binary (make e2e builds it)"
			if required["driver"] {
				Fail(why)
			}
			Skip(why)
		}
		dpNode := devicePluginNode(ctx)
		draNode := spec.draNode
		Expect(dpNode).NotTo(Equal(draNode))
		class, err := cluster.client.ResourceV1beta1().DeviceClasses().Get(ctx, *className, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(ptr.Deref(class.Spec.ExtendedResourceName, "")).To(Equal(string(gpuResource)), "DeviceClass %s", class.Name)
		// The spec counts the class's devices without CEL: the example
		// driver's class selects every device of the driver.
		Expect(class.Spec.Selectors).To(HaveLen(1))
		Expect(class.Spec.Selectors[0].CEL.Expression).To(Equal(fmt.Sprintf("device.driver == %q", *driverName)),
			"this spec expects DeviceClass %s to select every device of driver %s", class.Name, *driverName)
		gpu := func(n int) map[v1.ResourceName]int { return map[v1.ResourceName]int{gpuResource: n} }

		By("a mixed workload: nvidia.com/gpu on both nodes, a claim-template pod on the DRA node")
		draPod := runPod(ctx, spec.ns, extendedPod("dra", draNode, nil, []testContainer{{name: "app", requests: gpu(2)}}))
		dpPod := runPod(ctx, spec.ns, extendedPod("device-plugin", dpNode, nil, []testContainer{{name: "app", requests: gpu(1)}}))
		Expect(dpPod.Status.ExtendedResourceClaimStatus).To(BeNil(), "pod %s is served by the device plugin", dpPod.Name)
		_, err = cluster.client.ResourceV1beta1().ResourceClaimTemplates(spec.ns).Create(ctx, &resourceapi.ResourceClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: "one-gpu"},
			Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
				Requests: []resourceapi.DeviceRequest{{Name: "gpu", DeviceClassName: *className}},
			}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		templatePod := shellPod("claim-template")
		templatePod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": draNode}
		templatePod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
		templatePod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
		runPod(ctx, spec.ns, templatePod)

		By("kubectl draext nodes -o json: DRA node from slices and claims, device-plugin node from node status and pods")
		Eventually(ctx, func(g Gomega) {
			var list draextNodeList
			out, err := runKubectlDraext(ctx, plugin, "nodes", "-o", "json")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(json.Unmarshal(out, &list)).To(Succeed(), "kubectl draext nodes -o json:\n%s", out)
			g.Expect(list.APIVersion).To(Equal("draext.dev/v1alpha1"))
			g.Expect(list.Kind).To(Equal("NodeExtendedResourceList"))
			g.Expect(list.FeatureGate.State).To(Equal("on"), "the gate, from the kube-apiserver's /metrics")

			devices, allocated := nodeDevices(ctx, g, draNode)
			g.Expect(allocated).To(BeNumerically(">=", 3), "GPUs of node %s held by the spec's pods", draNode)
			dra := findRow(g, list, draNode, gpuResource)
			g.Expect(dra.ServedBy).To(Equal("DRA"))
			g.Expect(dra.DeviceClass).To(Equal(*className))
			g.Expect(dra.Drivers).To(Equal([]string{*driverName}))
			g.Expect(dra.Capacity).To(Equal(devices), "capacity of %s on node %s: the class's devices in its slices", gpuResource, draNode)
			g.Expect(dra.Allocated).To(Equal(allocated), "allocated %s on node %s: the devices in claims", gpuResource, draNode)
			g.Expect(dra.Free).To(Equal(devices - allocated))
			g.Expect(dra.Both).To(BeFalse())
			implicit := findRow(g, list, draNode, v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+*className))
			g.Expect([]any{implicit.ServedBy, implicit.Capacity, implicit.Allocated}).To(Equal([]any{"DRA", devices, allocated}), "the implicit name on node %s", draNode)

			node, err := cluster.client.CoreV1().Nodes().Get(ctx, dpNode, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			capacity, allocatable := node.Status.Capacity[gpuResource], node.Status.Allocatable[gpuResource]
			requested := podRequestsOnNode(ctx, g, dpNode)
			g.Expect(requested).To(BeNumerically(">=", 1), "GPUs of node %s requested by the spec's pod", dpNode)
			dpDevices, _ := nodeDevices(ctx, g, dpNode)
			dp := findRow(g, list, dpNode, gpuResource)
			g.Expect(dp.ServedBy).To(Equal("DevicePlugin"))
			g.Expect(dp.Capacity).To(Equal(capacity.Value()), "capacity of %s on node %s: node.status.capacity", gpuResource, dpNode)
			g.Expect(dp.Allocatable).To(Equal(allocatable.Value()), "allocatable of %s on node %s: node.status.allocatable", gpuResource, dpNode)
			g.Expect(dp.Allocated).To(Equal(requested), "allocated %s on node %s: requests of its running pods", gpuResource, dpNode)
			g.Expect(dp.Free).To(Equal(allocatable.Value() - requested))
			g.Expect(dp.DRADevices).To(Equal(dpDevices))
			g.Expect(dp.Both).To(Equal(dpDevices > 0), "both on node %s: device plugin and %d DRA devices", dpNode, dpDevices)
		}).WithTimeout(time.Minute).WithPolling(2 * time.Second).Should(Succeed())

		By("kubectl draext pod -o json: the claim's devices per container, with the UUIDs of the slices")
		claim := spec.claims.extendedClaim(ctx, draPod)
		pod, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, draPod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		out, err := runKubectlDraext(ctx, plugin, "pod", draPod.Name, "-n", spec.ns, "-o", "json")
		Expect(err).NotTo(HaveOccurred())
		var report draextPodReport
		Expect(json.Unmarshal(out, &report)).To(Succeed(), "kubectl draext pod -o json:\n%s", out)
		Expect(report.Kind).To(Equal("PodExtendedResources"))
		Expect(report.ResourceClaimName).To(Equal(claim.Name))
		Expect(report.Node).To(Equal(draNode))
		Expect(report.Containers).To(HaveLen(1))
		Expect(report.Containers[0].Name).To(Equal("app"))
		Expect(report.Containers[0].Resources).To(HaveLen(1))
		res := report.Containers[0].Resources[0]
		Expect(res.ResourceName).To(Equal(string(gpuResource)))
		Expect(res.Quantity).To(Equal(int64(2)))
		Expect(res.Request).To(Equal(mappedRequests(pod, "app")[0]))
		var gotDevices, gotUUIDs []string
		for _, d := range res.Devices {
			gotDevices = append(gotDevices, d.Driver+"/"+d.Pool+"/"+d.Device)
			gotUUIDs = append(gotUUIDs, d.UUID)
		}
		Expect(gotDevices).To(ConsistOf(claimDevices(claim)), "devices of pod %s", draPod.Name)
		Expect(gotUUIDs).To(ConsistOf(claimUUIDs(driverSlices(ctx), claim)), "UUIDs of pod %s", draPod.Name)
		Expect(strings.Split(visibleDevices(ctx, spec.ns, draPod.Name), ",")).To(ConsistOf(gotUUIDs), "GPUs the container sees")

		By("kubectl draext pod on the device-plugin pod: a clear error")
		_, err = runKubectlDraext(ctx, plugin, "pod", dpPod.Name, "-n", spec.ns)
		Expect(err).To(MatchError(ContainSubstring("pod %s/%s has no extended resource claim", spec.ns, dpPod.Name)))
	})
})

// draextNodeList is the part of `kubectl draext nodes -o json` the spec checks.
type draextNodeList struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	FeatureGate struct {
		State string `json:"state"`
	} `json:"featureGate"`
	Items []draextNodeRow `json:"items"`
}

type draextNodeRow struct {
	Node         string   `json:"node"`
	ResourceName string   `json:"resourceName"`
	ServedBy     string   `json:"servedBy"`
	DeviceClass  string   `json:"deviceClass"`
	Drivers      []string `json:"drivers"`
	Capacity     int64    `json:"capacity"`
	Allocatable  int64    `json:"allocatable"`
	Allocated    int64    `json:"allocated"`
	Free         int64    `json:"free"`
	DRADevices   int64    `json:"draDevices"`
	Both         bool     `json:"both"`
}

// draextPodReport is `kubectl draext pod NAME -o json`.
type draextPodReport struct {
	Kind              string `json:"kind"`
	Node              string `json:"node"`
	ResourceClaimName string `json:"resourceClaimName"`
	Containers        []struct {
		Name      string `json:"name"`
		Resources []struct {
			ResourceName string `json:"resourceName"`
			Quantity     int64  `json:"quantity"`
			Request      string `json:"request"`
			Devices      []struct {
				Driver string `json:"driver"`
				Pool   string `json:"pool"`
				Device string `json:"device"`
				UUID   string `json:"uuid"`
			} `json:"devices"`
		} `json:"resources"`
	} `json:"containers"`
}

// runKubectlDraext runs the plugin against the suite's cluster and returns
// its stdout; an error carries its stderr.
func runKubectlDraext(ctx context.Context, plugin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, plugin, append(args, "--kubeconfig", os.Getenv("KUBECONFIG"))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	GinkgoWriter.Printf("kubectl draext %s: %s", strings.Join(args, " "), stderr.String())
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", plugin, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func findRow(g Gomega, list draextNodeList, node string, name v1.ResourceName) draextNodeRow {
	i := slices.IndexFunc(list.Items, func(r draextNodeRow) bool { return r.Node == node && r.ResourceName == string(name) })
	g.Expect(i).To(BeNumerically(">=", 0), "kubectl draext nodes has no row for %s on node %s", name, node)
	return list.Items[i]
}

// nodeDevices counts the example driver's devices in the slices of the node
// (the newest generation of each pool) and those of them that claims of any
// namespace hold.
func nodeDevices(ctx context.Context, g Gomega, node string) (devices, allocated int64) {
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	newest := map[string]int64{}
	for _, s := range list.Items {
		if s.Spec.Driver == *driverName {
			newest[s.Spec.Pool.Name] = max(newest[s.Spec.Pool.Name], s.Spec.Pool.Generation)
		}
	}
	onNode := map[string]bool{}
	for _, s := range list.Items {
		if s.Spec.Driver != *driverName || s.Spec.NodeName != node || s.Spec.Pool.Generation != newest[s.Spec.Pool.Name] {
			continue
		}
		for _, d := range s.Spec.Devices {
			onNode[s.Spec.Pool.Name+"/"+d.Name] = true
		}
	}
	claims, err := cluster.client.ResourceV1beta1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	held := map[string]bool{}
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if key := r.Pool + "/" + r.Device; r.Driver == *driverName && onNode[key] && !ptr.Deref(r.AdminAccess, false) {
				held[key] = true
			}
		}
	}
	return int64(len(onNode)), int64(len(held))
}

// podRequestsOnNode sums the nvidia.com/gpu requests of the node's pods that
// have not terminated, as kubectl describe node does: regular containers and
// sidecars add up, a plain init container counts when it asks for more.
// Pods whose status maps the name to a claim got DRA devices and are left
// out.
func podRequestsOnNode(ctx context.Context, g Gomega, node string) int64 {
	pods, err := cluster.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	g.Expect(err).NotTo(HaveOccurred())
	var sum int64
	for _, p := range pods.Items {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if s := p.Status.ExtendedResourceClaimStatus; s != nil && slices.ContainsFunc(s.RequestMappings, func(m v1.ContainerExtendedResourceRequest) bool {
			return m.ResourceName == string(gpuResource)
		}) {
			continue
		}
		request := func(c v1.Container) int64 { q := c.Resources.Requests[gpuResource]; return q.Value() }
		var long, initMax int64
		for _, c := range p.Spec.InitContainers {
			if ptr.Deref(c.RestartPolicy, "") == v1.ContainerRestartPolicyAlways {
				long += request(c)
			} else {
				initMax = max(initMax, long+request(c))
			}
		}
		for _, c := range p.Spec.Containers {
			long += request(c)
		}
		sum += max(long, initMax)
	}
	return sum
}
