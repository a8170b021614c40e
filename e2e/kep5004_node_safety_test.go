// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// What a writer of pods/status can make of the node and of quota (issue
// 40, beyond upstream): a template claim's name in the pod status,
// repointed at another pod's claim, does not hand that pod's GPU to a
// restarted container (patch 0390); an in-place resize that adds a request
// does not charge the pod's GPU twice (topic quota).
var _ = Describe("Extended resources served by DRA against repointed claims and resizes", Label("beyond-upstream"), func() {
	spec := extendedSpecs()

	It("a restarted container does not get another pod's claim that its status was repointed to", Label("row:repointed"), func(ctx context.Context) {
		if os.Getenv("E2E_CLUSTER_CTL") == "" {
			skipOrFail("restart", "E2E_CLUSTER_CTL is not set: the spec stops kube-controller-manager (make e2e sets it for the local cluster)")
		}
		template := createGPUTemplate(ctx, spec.ns)
		templatePod := func(name, command string) *v1.Pod {
			pod := shellPod(name)
			pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": spec.draNode}
			pod.Spec.Containers[0].Command = []string{"sh", "-c", printGPUsCommand + "; " + command}
			pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}
			pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(template.Name)}}
			return pod
		}
		a := runPod(ctx, spec.ns, templatePod("a", "sleep 3600"))
		aGPU := visibleDevices(ctx, spec.ns, a.Name)
		// b ends after 5 s and the kubelet starts its container again
		// (after 10 s, 20 s, ...), without preparing its claims again:
		// that happens only when a sandbox is created.
		b := templatePod("b", "sleep 5; exit 1")
		b.Spec.RestartPolicy = v1.RestartPolicyAlways
		b = runPod(ctx, spec.ns, b)
		bGPU := visibleDevices(ctx, spec.ns, b.Name)
		Expect(bGPU).NotTo(Equal(aGPU), "two pods got the same GPU")
		a, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, a.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(a.Status.ResourceClaimStatuses).To(HaveLen(1))
		aClaim := *a.Status.ResourceClaimStatuses[0].ResourceClaimName

		By("stopping kube-controller-manager, so that no controller puts b's status back")
		clusterCtl(ctx, "stop", "kube-controller-manager")
		DeferCleanup(func(ctx context.Context) { clusterCtl(ctx, "start", "kube-controller-manager") })

		By(fmt.Sprintf("as a pods/status writer, pointing b's claim %q at a's claim %s", "gpu", aClaim))
		b, err = cluster.client.CoreV1().Pods(spec.ns).Get(ctx, b.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Status.ResourceClaimStatuses).To(HaveLen(1))
		b.Status.ResourceClaimStatuses[0].ResourceClaimName = ptr.To(aClaim)
		_, err = cluster.client.CoreV1().Pods(spec.ns).UpdateStatus(ctx, b, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())

		// The effect counts, not draext's wording: the container does not
		// start, and its reason names the claim, says that it was not
		// prepared for the pod and names the pod by UID. draext says
		// `container "app" uses pod claim "gpu" (spec.resourceClaims[0])
		// through ResourceClaim <ns>/<claim>, which was not prepared for pod
		// <ns>/b (UID <uid>) on this node`.
		want := And(ContainSubstring(aClaim), ContainSubstring("not prepared for pod"), ContainSubstring(string(b.UID)))
		var restarts int32
		Eventually(ctx, func() (string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, b.Name, metav1.GetOptions{})
			if err != nil || len(p.Status.ContainerStatuses) == 0 {
				return "", err
			}
			status := p.Status.ContainerStatuses[0]
			restarts = status.RestartCount
			if w := status.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" {
				return w.Message, nil
			}
			return "", nil
		}).WithTimeout(2*time.Minute).Should(want, "the restarted container of pod b")

		By("every run of b's container saw b's own GPU")
		logs, err := cluster.client.CoreV1().Pods(spec.ns).GetLogs(b.Name, &v1.PodLogOptions{Previous: restarts > 0}).DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred())
		for _, gpu := range strings.Split(aGPU, ",") {
			Expect(string(logs)).NotTo(ContainSubstring(gpu), "pod b's container printed pod a's GPU")
		}
		Expect(visibleDevices(ctx, spec.ns, a.Name)).To(Equal(aGPU), "pod a keeps its GPU")
	})

	It("an in-place resize that adds a cpu request does not charge the GPU twice", Label("row:resize"), func(ctx context.Context) {
		gpuNames := gpuQuotaNames()
		hard := v1.ResourceList{v1.ResourceRequestsMemory: resource.MustParse("1Gi")}
		for _, name := range gpuNames {
			hard[name] = resource.MustParse("1")
		}
		quota, err := cluster.client.CoreV1().ResourceQuotas(spec.ns).Create(ctx, &v1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "gpus"},
			Spec:       v1.ResourceQuotaSpec{Hard: hard},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		used := func(g Gomega) map[v1.ResourceName]string {
			q, err := cluster.client.CoreV1().ResourceQuotas(spec.ns).Get(ctx, quota.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			out := map[v1.ResourceName]string{}
			for name, value := range q.Status.Used {
				out[name] = value.String()
			}
			return out
		}
		want := func(memory string) map[v1.ResourceName]string {
			out := map[v1.ResourceName]string{v1.ResourceRequestsMemory: memory}
			for _, name := range gpuNames {
				out[name] = "1"
			}
			return out
		}

		// Burstable: a memory request without a limit, and one GPU.
		pod := extendedPod("resized", spec.draNode, nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
		// extendedPod's requests and limits are one map.
		pod.Spec.Containers[0].Resources.Requests = pod.Spec.Containers[0].Resources.Requests.DeepCopy()
		pod.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("16Mi")
		pod = runPod(ctx, spec.ns, pod)
		Eventually(ctx, used).WithTimeout(time.Minute).Should(Equal(want("16Mi")), "quota %s before the resize", quota.Name)

		By("resizing the container: cpu 10m added, memory 16Mi to 32Mi")
		// The new request comes first in name order, before the GPU.
		pod, err = cluster.client.CoreV1().Pods(spec.ns).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("10m")
		pod.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("32Mi")
		_, err = cluster.client.CoreV1().Pods(spec.ns).UpdateResize(ctx, pod.Name, pod, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred())
		// The memory shows that the quota controller counted the resized
		// pod, and the claim with it.
		Eventually(ctx, used).WithTimeout(time.Minute).Should(HaveKeyWithValue(v1.ResourceRequestsMemory, "32Mi"), "quota %s after the resize", quota.Name)
		Consistently(ctx, used).WithTimeout(10*time.Second).Should(Equal(want("32Mi")), "quota %s after the resize", quota.Name)
	})
})
