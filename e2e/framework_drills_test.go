// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// The drills (make drills, Label "drill") drive the local cluster through
// faults and load and measure what matters to users: every drill ends with
// one line "<drill>: <figure>..." in GinkgoWriter and, when E2E_DRILL_REPORT
// names a file, appended there. The normal suite leaves them out.

// drillLabel marks a drill; scripts/test/e2e.sh filters it out unless it
// runs make drills.
const drillLabel = "drill"

// drillReport records a drill's figures as one line.
func drillReport(name, format string, args ...any) {
	line := name + ": " + fmt.Sprintf(format, args...)
	GinkgoWriter.Println(line)
	AddReportEntry(name, line)
	if path := os.Getenv("E2E_DRILL_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		Expect(err).NotTo(HaveOccurred())
		_, err = fmt.Fprintln(f, line)
		// A report line that was not written must fail, so Close too.
		Expect(errors.Join(err, f.Close())).NotTo(HaveOccurred())
	}
}

// draNodes are the nodes whose example driver publishes GPUs through DRA,
// sorted; a drill that needs at least min of them fails without.
func draNodes(ctx context.Context, min int) []string {
	GinkgoHelper()
	driverSlices(ctx) // skips or fails without the example driver
	nodes := sliceNodes(ctx)
	Expect(len(nodes)).To(BeNumerically(">=", min), "nodes whose driver serves GPUs through DRA: %v; this drill needs %d (make up NODES=%d)", nodes, min, min+1)
	return nodes
}

// nodeGPUs is how many GPUs the driver publishes for the node.
func nodeGPUs(ctx context.Context, node string) int {
	GinkgoHelper()
	n := 0
	for _, s := range driverSlices(ctx) {
		if s.Spec.NodeName == node {
			n += len(s.Spec.Devices)
		}
	}
	Expect(n).To(BeNumerically(">", 0), "GPUs of node %s", node)
	return n
}

// deviceWatch follows every ResourceClaim of the cluster through an
// informer and keeps, per allocated device (driver/pool/device), the claims
// that hold it. A device held by two claims at once is a double allocation.
type deviceWatch struct {
	mu sync.Mutex
	// holders: device -> claim UID -> "<namespace>/<name>".
	holders map[string]map[types.UID]string
	// devices: claim UID -> its allocated devices.
	devices map[types.UID][]string
	// doubles are the devices seen in two claims at once, with the claims.
	doubles []string
	// maxInUse: pool -> the most devices allocated at once.
	maxInUse map[string]int
}

// watchDevices starts a deviceWatch for the rest of the spec.
func watchDevices(ctx context.Context) *deviceWatch {
	GinkgoHelper()
	w := &deviceWatch{holders: map[string]map[types.UID]string{}, devices: map[types.UID][]string{}, maxInUse: map[string]int{}}
	lw := cache.NewListWatchFromClient(cluster.client.ResourceV1beta1().RESTClient(), "resourceclaims", metav1.NamespaceAll, fields.Everything())
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &resourceapi.ResourceClaim{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.set(obj) },
			UpdateFunc: func(_, obj any) { w.set(obj) },
			DeleteFunc: func(obj any) {
				if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = tombstone.Obj
				}
				if claim, ok := obj.(*resourceapi.ResourceClaim); ok {
					w.forget(claim.UID)
				}
			},
		},
	})
	stop := make(chan struct{})
	go informer.Run(stop)
	DeferCleanup(func() { close(stop) })
	Eventually(ctx, informer.HasSynced).WithTimeout(time.Minute).Should(BeTrue(), "the claim informer does not sync")
	return w
}

func (w *deviceWatch) set(obj any) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	var devices []string
	if claim.Status.Allocation != nil {
		for _, r := range claim.Status.Allocation.Devices.Results {
			devices = append(devices, r.Driver+"/"+r.Pool+"/"+r.Device)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(claim.UID)
	if len(devices) == 0 {
		return
	}
	w.devices[claim.UID] = devices
	name := claim.Namespace + "/" + claim.Name
	for _, d := range devices {
		if w.holders[d] == nil {
			w.holders[d] = map[types.UID]string{}
		}
		w.holders[d][claim.UID] = name
		if len(w.holders[d]) > 1 {
			var names []string
			for _, n := range w.holders[d] {
				names = append(names, n)
			}
			sort.Strings(names)
			w.doubles = append(w.doubles, d+" in "+strings.Join(names, " and "))
		}
	}
	inUse := map[string]int{}
	for d := range w.holders {
		inUse[d[:strings.LastIndex(d, "/")]]++
	}
	for pool, n := range inUse {
		w.maxInUse[pool] = max(w.maxInUse[pool], n)
	}
}

func (w *deviceWatch) forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forgetLocked(uid)
}

func (w *deviceWatch) forgetLocked(uid types.UID) {
	for _, d := range w.devices[uid] {
		delete(w.holders[d], uid)
		if len(w.holders[d]) == 0 {
			delete(w.holders, d)
		}
	}
	delete(w.devices, uid)
}

// result is the double allocations seen so far and the most devices in use
// at once in the node's pool(s).
func (w *deviceWatch) result(node string) (doubles []string, maxInUse int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for pool, n := range w.maxInUse {
		if strings.HasSuffix(pool, "/"+node) {
			maxInUse = max(maxInUse, n)
		}
	}
	return slices.Clone(w.doubles), maxInUse
}

// shortGPUPod is a pod that asks for one nvidia.com/gpu, prints its GPUs
// (printGPUsCommand), runs for the seconds and ends, scheduled on one of the
// nodes (hostname In nodes).
func shortGPUPod(name string, seconds int, nodes []string) *v1.Pod {
	pod := extendedPod(name, nodes[0], nil, []testContainer{{name: "app", requests: map[v1.ResourceName]int{gpuResource: 1}}})
	pod.Spec.NodeSelector = nil
	pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
			Key: "kubernetes.io/hostname", Operator: v1.NodeSelectorOpIn, Values: nodes,
		}}}},
	}}}
	pod.Spec.Containers[0].Command = []string{"sh", "-c", fmt.Sprintf("%s; sleep %d", printGPUsCommand, seconds)}
	return pod
}

// createRetrying creates the object, trying again while the API server
// does not answer (a drill may have killed it); an object that exists
// already counts as created.
func createRetrying(ctx context.Context, what string, create func(context.Context) error) {
	GinkgoHelper()
	Eventually(ctx, func() error {
		err := create(ctx)
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}).WithTimeout(3*time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), "creating %s", what)
}

// podCounts lists the namespace's pods: how many succeeded, and the names
// of those that failed (with their reason and message).
func podCounts(ctx context.Context, ns string) (succeeded int, failed []string, err error) {
	pods, err := cluster.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, nil, err
	}
	for _, p := range pods.Items {
		switch p.Status.Phase {
		case v1.PodSucceeded:
			succeeded++
		case v1.PodFailed:
			failed = append(failed, fmt.Sprintf("%s (%s: %s)", p.Name, p.Status.Reason, p.Status.Message))
		}
	}
	return succeeded, failed, nil
}

// waitSucceeded waits until count pods of the namespace succeeded and fails
// at once when one fails.
func waitSucceeded(ctx context.Context, ns string, count int, timeout time.Duration) {
	GinkgoHelper()
	Eventually(ctx, func(g Gomega) int {
		succeeded, failed, err := podCounts(ctx, ns)
		g.Expect(err).NotTo(HaveOccurred())
		Expect(failed).To(BeEmpty(), "failed pods")
		return succeeded
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Equal(count), "pods of %s that succeeded", ns)
}

// allocatedClaims are the namespace's claims that still have an allocation.
func allocatedClaims(ctx context.Context, ns string) ([]string, error) {
	return claimNames(ctx, ns, func(c resourceapi.ResourceClaim) bool { return c.Status.Allocation != nil })
}

// claimNames are the names of the namespace's claims that keep says to
// keep (nil: all of them).
func claimNames(ctx context.Context, ns string, keep func(resourceapi.ResourceClaim) bool) ([]string, error) {
	claims, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range claims.Items {
		if keep == nil || keep(c) {
			names = append(names, c.Name)
		}
	}
	return names, nil
}

// requireCRI fails a drill that looks at containers without crictl and the
// nodes' CRI sockets (E2E_CRICTL, E2E_CRI_SOCKETS: make drills sets them
// for the local cluster).
func requireCRI() {
	GinkgoHelper()
	Expect(os.Getenv("E2E_CRICTL")).NotTo(BeEmpty(), "E2E_CRICTL is not set: this drill asks the nodes' containerd about containers (make drills sets it for the local cluster)")
	Expect(os.Getenv("E2E_CRI_SOCKETS")).NotTo(BeEmpty(), "E2E_CRI_SOCKETS is not set (make drills sets it for the local cluster)")
}

// containerID is the CRI ID of the pod's container (without the runtime prefix).
func containerID(pod *v1.Pod, container string) string {
	GinkgoHelper()
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container && s.ContainerID != "" {
			_, id, _ := strings.Cut(s.ContainerID, "://")
			return id
		}
	}
	Fail(fmt.Sprintf("pod %s/%s has no ID for container %s", pod.Namespace, pod.Name, container))
	return ""
}

// criContainer is the part of crictl inspect's output a drill reads.
type criContainer struct {
	Status struct {
		State      string `json:"state"`
		StartedAt  string `json:"startedAt"`
		FinishedAt string `json:"finishedAt"`
	} `json:"status"`
}

// criInspect asks every node's containerd (E2E_CRI_SOCKETS, a glob) about
// the container; a container ID is known to one of them.
func criInspect(ctx context.Context, id string) (criContainer, error) {
	sockets, err := filepath.Glob(os.Getenv("E2E_CRI_SOCKETS"))
	if err != nil {
		return criContainer{}, err
	}
	var errs []string
	for _, socket := range sockets {
		out, err := exec.CommandContext(ctx, os.Getenv("E2E_CRICTL"), "--runtime-endpoint", "unix://"+socket, "inspect", "-o", "json", id).Output()
		if err != nil {
			errs = append(errs, socket+": "+err.Error())
			continue
		}
		var c criContainer
		if err := json.Unmarshal(out, &c); err != nil {
			return criContainer{}, fmt.Errorf("crictl inspect %s on %s: %w", id, socket, err)
		}
		return c, nil
	}
	return criContainer{}, fmt.Errorf("no node knows container %s: %s", id, strings.Join(errs, "; "))
}

// criTime parses a time of crictl inspect; the zero time for one not set.
func criTime(value string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil || t.Unix() <= 0 {
		return time.Time{}
	}
	return t
}

// podEventReasonsAll are the reasons of every event of the namespace.
func podEventReasonsAll(ctx context.Context, ns string) []string {
	GinkgoHelper()
	events, err := cluster.client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

// criSocketOf is the CRI socket (of E2E_CRI_SOCKETS) of the node that runs
// the container.
func criSocketOf(ctx context.Context, id string) string {
	GinkgoHelper()
	sockets, err := filepath.Glob(os.Getenv("E2E_CRI_SOCKETS"))
	Expect(err).NotTo(HaveOccurred())
	for _, socket := range sockets {
		if exec.CommandContext(ctx, os.Getenv("E2E_CRICTL"), "--runtime-endpoint", "unix://"+socket, "inspect", id).Run() == nil {
			return socket
		}
	}
	Fail(fmt.Sprintf("no node of %s knows container %s", os.Getenv("E2E_CRI_SOCKETS"), id))
	return ""
}

// waitRunning waits until the pod runs and returns it.
func waitRunning(ctx context.Context, ns, name string, timeout time.Duration) *v1.Pod {
	GinkgoHelper()
	var pod *v1.Pod
	Eventually(ctx, func() (v1.PodPhase, error) {
		p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		pod = p
		return p.Status.Phase, nil
	}).WithTimeout(timeout).Should(Equal(v1.PodRunning), "pod %s/%s", ns, name)
	return pod
}

// lastGPUs is the GPU list of the last GPUS= line in the log of the pod's
// running container ("" before it printed one).
func lastGPUs(ctx context.Context, ns, pod string) string {
	data, err := cluster.client.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return ""
	}
	last := ""
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, gpusLinePrefix); ok {
			last = sortedList(v)
		}
	}
	return last
}
