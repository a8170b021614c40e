// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The pod network across nodes (issue 28): on a multi-node cluster, a pod
// reaches a pod on another node by its IP and through a Service. Offline kind
// clusters get it from make kind-up (a bridge per node on its podCIDR and
// routes between the nodes); make test-kind requires it (E2E_REQUIRE names
// pod-network).
var _ = Describe("The pod network", Label("pod-network"), func() {
	It("a pod reaches a pod on another node, by its IP and through a Service", func(ctx context.Context) {
		nodes := schedulableNodes(ctx)
		if len(nodes) < 2 {
			skipOrFail("pod-network", fmt.Sprintf("the cluster has %d node(s) that take pods without tolerations: two are needed", len(nodes)))
		}
		if _, err := cluster.client.AppsV1().DaemonSets("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{}); err != nil {
			skipOrFail("pod-network", fmt.Sprintf("no DaemonSet kube-system/kube-proxy (%v): the cluster serves no Services (the local cluster of make up runs no kube-proxy)", err))
		}
		ns := newNamespace(ctx)

		By("an HTTP server on node " + nodes[0])
		server := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "echo", Labels: map[string]string{"app": "draext-echo"}},
			Spec: v1.PodSpec{
				NodeName:                      nodes[0],
				TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []v1.Container{{
					Name:    "httpd",
					Image:   *image,
					Command: []string{"sh", "-c", "mkdir -p /tmp/www && echo draext-echo-$(busybox hostname) >/tmp/www/index.html && exec busybox httpd -f -p 8080 -h /tmp/www"},
				}},
			},
		}
		server = runPod(ctx, ns, server)
		Expect(server.Status.PodIP).NotTo(BeEmpty())
		service, err := cluster.client.CoreV1().Services(ns).Create(ctx, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "echo"},
			Spec: v1.ServiceSpec{
				Selector: map[string]string{"app": "draext-echo"},
				Ports:    []v1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		fetch := func(name, hostPort string) {
			GinkgoHelper()
			By(fmt.Sprintf("a pod on node %s fetches http://%s/", nodes[1], hostPort))
			client := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: v1.PodSpec{
					NodeName:                      nodes[1],
					RestartPolicy:                 v1.RestartPolicyNever,
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []v1.Container{{
						Name:  "wget",
						Image: *image,
						// kube-proxy may program the Service a moment
						// after it was created. (busybox's wget of
						// Debian's static build crashes; nc does not.)
						Command: []string{"sh", "-c", "for i in $(busybox seq 1 30); do printf 'GET / HTTP/1.0\\r\\n\\r\\n' | busybox nc -w 2 " + hostPort + " >/tmp/answer && busybox grep -q '^HTTP/1.[01] 200' /tmp/answer && exec cat /tmp/answer; sleep 1; done; exit 1"},
					}},
				},
			}
			createPodWithin(ctx, ns, client, v1.PodSucceeded, 2*time.Minute)
			logs, err := cluster.client.CoreV1().Pods(ns).GetLogs(name, &v1.PodLogOptions{Container: "wget"}).DoRaw(ctx)
			Expect(err).NotTo(HaveOccurred())
			answer := strings.Split(strings.TrimSpace(string(logs)), "\n")
			Expect(answer[len(answer)-1]).To(Equal("draext-echo-echo"), "the page %s served to the pod on node %s:\n%s", hostPort, nodes[1], logs)
		}
		fetch("by-pod-ip", fmt.Sprintf("%s 8080", server.Status.PodIP))
		fetch("by-service", fmt.Sprintf("%s 80", service.Spec.ClusterIP))
	})
})

// schedulableNodes are the Ready nodes without a NoSchedule or NoExecute
// taint, sorted by name.
func schedulableNodes(ctx context.Context) []string {
	GinkgoHelper()
	list, err := cluster.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var nodes []string
	for _, node := range list.Items {
		ready, tainted := false, false
		for _, c := range node.Status.Conditions {
			ready = ready || (c.Type == v1.NodeReady && c.Status == v1.ConditionTrue)
		}
		for _, t := range node.Spec.Taints {
			tainted = tainted || t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
		}
		if ready && !tainted && !node.Spec.Unschedulable {
			nodes = append(nodes, node.Name)
		}
	}
	return nodes
}
