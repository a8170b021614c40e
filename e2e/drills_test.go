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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The drills of make drills (issue 26): the local cluster under load and
// faults, each bounded in time and count, each ending with one line of
// figures (drillReport). They run only with -ginkgo.label-filter=drill.
var _ = Describe("Drills", Label(drillLabel), func() {
	spec := extendedSpecs()

	It("D1 churn with a crashing scheduler", func(ctx context.Context) {
		nodes := draNodes(ctx, 2)
		count := envInt("E2E_DRILL_CHURN_PODS", 500)
		const burst = 50
		watch := watchDevices(ctx)
		start := time.Now()
		kills := 0
		for created := 0; created < count; {
			// At most two bursts outstanding: the drill is about the
			// scheduler, not about how many pods a node can start at once.
			Eventually(ctx, func(g Gomega) int {
				succeeded, failed, err := podCounts(ctx, spec.ns)
				g.Expect(err).NotTo(HaveOccurred())
				Expect(failed).To(BeEmpty(), "failed pods")
				return created - succeeded
			}).WithTimeout(5*time.Minute).WithPolling(time.Second).Should(BeNumerically("<=", burst), "pods outstanding")
			for i := 0; i < burst && created < count; i++ {
				pod := shortGPUPod(fmt.Sprintf("churn-%03d", created), 1, nodes)
				createRetrying(ctx, "pod "+pod.Name, func(ctx context.Context) error {
					_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
					return err
				})
				created++
			}
			// Three crashes, spread over the run, in the middle of a burst's scheduling.
			if kills < 3 && created >= (kills+1)*count/4 {
				time.Sleep(300 * time.Millisecond)
				By(fmt.Sprintf("SIGKILL kube-scheduler (%d of 3) after %d pods", kills+1, created))
				clusterCtl(ctx, "signal", "kube-scheduler", "KILL")
				clusterCtl(ctx, "start", "kube-scheduler")
				kills++
			}
		}
		waitSucceeded(ctx, spec.ns, count, 10*time.Minute)
		elapsed := time.Since(start)
		Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})).To(Succeed())
		var left []string
		Eventually(ctx, func() ([]string, error) {
			var err error
			left, err = allocatedClaims(ctx, spec.ns)
			return left, err
		}).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims still allocated after every pod is done and deleted")
		doubles, _ := watch.result("")
		drillReport("D1 churn", "%d of %d pods completed in %s on %d DRA nodes, kube-scheduler SIGKILLed %d times; devices in two allocations at once: %d; extended resource claims left allocated: %d",
			count, count, elapsed.Round(time.Second), len(nodes), kills, len(doubles), len(left))
		Expect(doubles).To(BeEmpty(), "devices in two allocations at once")
	})

	It("D2 extended resources and claim templates race for one node", func(ctx context.Context) {
		node := spec.draNode
		gpus := nodeGPUs(ctx, node)
		const extended, templated = 64, 16
		watch := watchDevices(ctx)
		createGPUTemplate(ctx, spec.ns)
		var pods []*v1.Pod
		for i := range extended {
			pods = append(pods, shortGPUPod(fmt.Sprintf("extended-%02d", i), 2, []string{node}))
		}
		for i := range templated {
			pod := shortGPUPod(fmt.Sprintf("template-%02d", i), 2, []string{node})
			pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Claims: []v1.ResourceClaim{{Name: "gpu"}}}
			pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
			pods = append(pods, pod)
		}
		start := time.Now()
		var wg sync.WaitGroup
		for _, pod := range pods {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
			}()
		}
		wg.Wait()
		waitSucceeded(ctx, spec.ns, len(pods), 10*time.Minute)
		doubles, maxInUse := watch.result(node)
		drillReport("D2 race", "%d nvidia.com/gpu and %d claim-template pods at once on %s (%d GPUs): all completed in %s; most GPUs allocated at once: %d; devices in two allocations at once: %d",
			extended, templated, node, gpus, time.Since(start).Round(time.Second), maxInUse, len(doubles))
		Expect(doubles).To(BeEmpty(), "devices in two allocations at once")
		Expect(maxInUse).To(BeNumerically("<=", gpus), "GPUs allocated at once on %s", node)
		Expect(maxInUse).To(BeNumerically(">", 1), "the race had no concurrency to check")
	})

	It("D3 node faults: driver crash under load, kubelet down, reboot", func(ctx context.Context) {
		requireCRI()
		node := spec.draNode
		pluginNodes := devicePluginNodes(ctx)
		driver := component(ctx, "draext-gpu*", "--node-name="+node)
		kubelet := kubeletComponent(ctx, node)

		By("SIGKILL the driver of " + node + " while 16 pods are prepared")
		const load = 16
		for i := range load {
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, shortGPUPod(fmt.Sprintf("load-%02d", i), 2, []string{node}), metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(ctx, func() (int, error) {
			claims, err := cluster.client.ResourceV1beta1().ResourceClaims(spec.ns).List(ctx, metav1.ListOptions{})
			return len(claims.Items), err
		}).WithTimeout(2*time.Minute).Should(BeNumerically(">=", 4), "claims allocated before the crash")
		clusterCtl(ctx, "signal", driver, "KILL")
		clusterCtl(ctx, "start", driver)
		crashStart := time.Now()
		waitSucceeded(ctx, spec.ns, load, 5*time.Minute)
		crashFigure := time.Since(crashStart)
		Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})).To(Succeed())

		By("a pod created while the kubelet of " + node + " is down")
		clusterCtl(ctx, "stop", kubelet)
		DeferCleanup(func(ctx context.Context) {
			// Whatever happened, the node gets its kubelet back.
			clusterCtl(ctx, "start", kubelet)
			waitDevicePluginNodes(ctx, node, pluginNodes)
		})
		// It restarts like a Deployment's pod: after the reboot stand-in the
		// kubelet must create its container again.
		waiting := shortGPUPod("while-down", 3600, []string{node})
		waiting.Spec.RestartPolicy = v1.RestartPolicyAlways
		waiting, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, waiting, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		time.Sleep(5 * time.Second)
		clusterCtl(ctx, "start", kubelet)
		back := time.Now()
		waitDevicePluginNodes(ctx, node, pluginNodes)
		waiting = waitRunning(ctx, spec.ns, waiting.Name, 3*time.Minute)
		downFigure := time.Since(back)
		gpus := visibleDevices(ctx, spec.ns, waiting.Name)
		Expect(gpus).NotTo(BeEmpty(), "GPUs of the pod created while the kubelet was down")
		firstContainer := containerID(waiting, "app")

		By("reboot stand-in: kubelet and driver stopped, the node's sandboxes removed, its CDI directory wiped")
		cdiRoot := ""
		for _, a := range componentArgs(ctx, driver) {
			if v, ok := strings.CutPrefix(a, "--cdi-root="); ok {
				cdiRoot = v
			}
		}
		Expect(cdiRoot).NotTo(BeEmpty(), "the driver of %s has no --cdi-root", node)
		socket := criSocketOf(ctx, firstContainer)
		clusterCtl(ctx, "stop", kubelet)
		clusterCtl(ctx, "stop", driver)
		out, err := exec.CommandContext(ctx, os.Getenv("E2E_CRICTL"), "--runtime-endpoint", "unix://"+socket, "rmp", "--all", "--force").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "crictl rmp --all on %s: %s", socket, out)
		specs, err := filepath.Glob(filepath.Join(cdiRoot, "*"))
		Expect(err).NotTo(HaveOccurred())
		for _, f := range specs {
			Expect(os.RemoveAll(f)).To(Succeed())
		}
		clusterCtl(ctx, "start", driver)
		clusterCtl(ctx, "start", kubelet)
		rebooted := time.Now()
		waitDevicePluginNodes(ctx, node, pluginNodes)
		Eventually(ctx, func() (string, error) {
			p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, waiting.Name, metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			for _, s := range p.Status.ContainerStatuses {
				if s.Name == "app" && s.State.Running != nil && !strings.HasSuffix(s.ContainerID, firstContainer) {
					return "running again", nil
				}
			}
			return string(p.Status.Phase), nil
		}).WithTimeout(3*time.Minute).WithPolling(500*time.Millisecond).Should(Equal("running again"), "the pod's container is not recreated after the reboot stand-in")
		rebootFigure := time.Since(rebooted)
		// The recreated container prints its GPUs again: the same ones.
		Eventually(ctx, func() string { return lastGPUs(ctx, spec.ns, waiting.Name) }).WithTimeout(time.Minute).Should(Equal(gpus), "GPUs after the reboot stand-in")
		drillReport("D3 node faults", "driver SIGKILLed under load: %d pods completed %s after its restart; a pod created while the kubelet was down: Running %.1fs after it came back; reboot stand-in (sandboxes removed, CDI wiped): container recreated with its GPUs %.1fs after kubelet and driver started",
			load, crashFigure.Round(time.Second), downFigure.Seconds(), rebootFigure.Seconds())
	})

	It("D4 kube-apiserver SIGKILLed during a burst", func(ctx context.Context) {
		nodes := draNodes(ctx, 1)
		count := envInt("E2E_DRILL_APISERVER_PODS", 100)
		done := createBurst(ctx, spec.ns, "burst", count, 1, nodes, "the kill")
		By("SIGKILL kube-apiserver, then start it again")
		clusterCtl(ctx, "signal", "kube-apiserver", "KILL")
		clusterCtl(ctx, "start", "kube-apiserver")
		// As a supervisor would: whatever exited without the API server runs again.
		for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
			clusterCtl(ctx, "start", name)
		}
		Eventually(done).WithTimeout(5 * time.Minute).Should(BeClosed())
		waitSucceeded(ctx, spec.ns, count, 10*time.Minute)

		pods, err := cluster.client.CoreV1().Pods(spec.ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		unmapped, rejected := 0, 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" && p.Status.ExtendedResourceClaimStatus == nil {
				unmapped++
			}
			if p.Status.Reason == "UnallocatedExtendedResource" {
				rejected++
			}
		}
		for _, reason := range podEventReasonsAll(ctx, spec.ns) {
			if reason == "UnallocatedExtendedResource" {
				rejected++
			}
		}
		By("waiting 2 minutes for the claims of gone or unbound pods to go")
		Expect(cluster.client.CoreV1().Pods(spec.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})).To(Succeed())
		var orphans []string
		Eventually(ctx, func() ([]string, error) {
			var err error
			orphans, err = claimNames(ctx, spec.ns, nil)
			return orphans, err
		}).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims of gone pods")
		drillReport("D4 apiserver kill", "%d pods completed; pods bound without a mapping: %d; claims of gone or unbound pods after 2 minutes: %d; UnallocatedExtendedResource rejections: %d",
			count, unmapped, len(orphans), rejected)
		Expect(unmapped).To(BeZero(), "pods bound without a mapping")
		Expect(rejected).To(BeZero(), "UnallocatedExtendedResource rejections")
	})

	It("D9 kube-apiserver stopped for seconds during a burst", func(ctx context.Context) {
		nodes := draNodes(ctx, 1)
		count := envInt("E2E_DRILL_APISERVER_PODS", 100)
		pause := time.Duration(envInt("E2E_DRILL_APISERVER_PAUSE_SECONDS", 8)) * time.Second
		watch := watchDevices(ctx)
		done := createBurst(ctx, spec.ns, "pause", count, 4, nodes, "the pause")
		// While it is stopped, the scheduler's writes (claims, binding,
		// status) time out after they may have been stored: the path
		// that keeps a created claim and its in-flight entry.
		By(fmt.Sprintf("SIGSTOP kube-apiserver for %s, then SIGCONT", pause))
		clusterCtl(ctx, "signal", "kube-apiserver", "STOP")
		DeferCleanup(func(ctx context.Context) { _, _ = runClusterCtl(ctx, "signal", "kube-apiserver", "CONT") })
		time.Sleep(pause)
		clusterCtl(ctx, "signal", "kube-apiserver", "CONT")
		Eventually(done).WithTimeout(5 * time.Minute).Should(BeClosed())
		waitSucceeded(ctx, spec.ns, count, 10*time.Minute)

		concurrent, shared := sharedGPUs(ctx, spec.ns)

		// A claim that a pod owns but its status does not name is one
		// that an attempt kept, or lost track of, after another one bound
		// the pod with a new claim: it must not stay allocated.
		By("waiting 2 minutes for the claims that no pod's status names to go")
		var strays []string
		Eventually(ctx, func() ([]string, error) {
			pods, err := cluster.client.CoreV1().Pods(spec.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, err
			}
			named := map[types.UID]string{}
			for _, p := range pods.Items {
				if status := p.Status.ExtendedResourceClaimStatus; status != nil {
					named[p.UID] = status.ResourceClaimName
				}
			}
			strays, err = claimNames(ctx, spec.ns, func(c resourceapi.ResourceClaim) bool {
				if c.Status.Allocation == nil {
					return false
				}
				for _, owner := range c.OwnerReferences {
					if owner.Kind == "Pod" && named[owner.UID] != c.Name {
						return true
					}
				}
				return false
			})
			return strays, err
		}).WithTimeout(2*time.Minute).Should(BeEmpty(), "allocated claims of pods whose status names another claim, or none")
		doubles, _ := watch.result("")
		drillReport("D9 apiserver pause", "%d pods completed across a %s SIGSTOP of kube-apiserver; pairs of pods that ran at once on one node: %d, sharing a GPU: %d; devices in two allocations at once: %d; allocated claims that no pod's status names: %d",
			count, pause, concurrent, len(shared), len(doubles), len(strays))
		Expect(concurrent).To(BeNumerically(">", 0), "no two pods ran at once: the GPU check had nothing to compare")
		Expect(shared).To(BeEmpty(), "GPUs in two running pods at once")
		Expect(doubles).To(BeEmpty(), "devices in two allocations at once")
	})

	It("D10 kube-scheduler's claim informer lags behind its writes while bindings fail", func(ctx context.Context) {
		if os.Getenv("E2E_CLUSTER_CTL") == "" {
			skipOrFail("restart", "E2E_CLUSTER_CTL is not set: the drill restarts kube-scheduler behind a proxy (make drills sets it for the local cluster)")
		}
		nodes := draNodes(ctx, 1)
		count := envInt("E2E_DRILL_LAG_PODS", 60)
		lag := time.Duration(envInt("E2E_DRILL_CLAIM_LAG_SECONDS", 3)) * time.Second
		// The scheduler's ResourceClaim informer then delivers the
		// claims that PreBind created and allocated, and their
		// deletion, lag late. A pod deleted while it is scheduled fails
		// its binding after PreBind wrote its claim: Unreserve deletes
		// the claim, whose allocation the informer has not delivered
		// yet, and another pod may get the devices while the late
		// events of the old claim arrive (issue 50, item 3).
		By(fmt.Sprintf("restarting kube-scheduler behind a proxy that holds back its ResourceClaim watch by %s", lag))
		proxy := restartBehindLagProxy(ctx, lag)
		watch := watchDevices(ctx)
		By(fmt.Sprintf("%d one-GPU pods of 4 s, every other one force-deleted 0-1 s after its create", count))
		var deleters sync.WaitGroup
		for i := range count {
			pod := shortGPUPod(fmt.Sprintf("lag-%03d", i), 4, nodes)
			if i%2 == 1 {
				pod.Name = fmt.Sprintf("gone-%03d", i)
			}
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			if i%2 == 1 {
				deleters.Add(1)
				go func(name string, after time.Duration) {
					defer GinkgoRecover()
					defer deleters.Done()
					time.Sleep(after)
					err := cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
					if err != nil && !apierrors.IsNotFound(err) {
						Expect(err).NotTo(HaveOccurred(), "delete pod %s", name)
					}
				}(pod.Name, time.Duration(i*37%1000)*time.Millisecond)
			}
		}
		deleters.Wait()
		kept := count - count/2
		waitSucceeded(ctx, spec.ns, kept, 10*time.Minute)

		concurrent, shared := sharedGPUs(ctx, spec.ns)
		By("waiting 2 minutes for the claims of the deleted pods to go")
		Eventually(ctx, func() ([]string, error) {
			return claimNames(ctx, spec.ns, func(c resourceapi.ResourceClaim) bool {
				for _, owner := range c.OwnerReferences {
					if strings.HasPrefix(owner.Name, "gone-") {
						return true
					}
				}
				return false
			})
		}).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims of the deleted pods")
		doubles, _ := watch.result("")
		drillReport("D10 claim informer lag", "%d of %d pods kept and completed with kube-scheduler's ResourceClaim watch held back %s (%d watch streams); pairs of pods that ran at once on one node: %d, sharing a GPU: %d; devices in two allocations at once: %d",
			kept, count, lag, proxy.watches.Load(), concurrent, len(shared), len(doubles))
		Expect(concurrent).To(BeNumerically(">", 0), "no two pods ran at once: the GPU check had nothing to compare")
		Expect(shared).To(BeEmpty(), "GPUs in two running pods at once")
		Expect(doubles).To(BeEmpty(), "devices in two allocations at once")
	})

	It("D5 kube-controller-manager restarted while pods complete", func(ctx context.Context) {
		node := spec.draNode
		const count = 24
		for i := range count {
			pod := shortGPUPod(fmt.Sprintf("complete-%02d", i), 3, []string{node})
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		Eventually(ctx, func(g Gomega) int {
			succeeded, failed, err := podCounts(ctx, spec.ns)
			g.Expect(err).NotTo(HaveOccurred())
			Expect(failed).To(BeEmpty(), "failed pods")
			return succeeded
		}).WithTimeout(5*time.Minute).Should(BeNumerically(">=", 4), "pods completed before the restart")
		By("restarting kube-controller-manager")
		clusterCtl(ctx, "restart", "kube-controller-manager")
		waitSucceeded(ctx, spec.ns, count, 10*time.Minute)
		start := time.Now()
		var left []string
		Eventually(ctx, func() ([]string, error) {
			var err error
			left, err = allocatedClaims(ctx, spec.ns)
			return left, err
		}).WithTimeout(2*time.Minute).Should(BeEmpty(), "claims of completed pods still allocated")
		drillReport("D5 controller-manager restart", "%d pods completed across a kube-controller-manager restart; claims still allocated: %d, all released %s after the last pod completed",
			count, len(left), time.Since(start).Round(time.Second))
	})

	It("D6 a force-deleted pod's GPU goes to the next pod only after its container stopped", func(ctx context.Context) {
		requireCRI()
		node := spec.draNode
		gpus := nodeGPUs(ctx, node)
		By(fmt.Sprintf("filling node %s with %d one-GPU pods", node, gpus))
		var running []*v1.Pod
		for i := range gpus {
			pod := shortGPUPod(fmt.Sprintf("hold-%d", i), 3600, []string{node})
			_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
		}
		for i := range gpus {
			Eventually(ctx, func() (v1.PodPhase, error) {
				p, err := cluster.client.CoreV1().Pods(spec.ns).Get(ctx, fmt.Sprintf("hold-%d", i), metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				if p.Status.Phase == v1.PodRunning {
					running = append(running, p)
				}
				return p.Status.Phase, nil
			}).WithTimeout(3 * time.Minute).Should(Equal(v1.PodRunning))
		}
		victim := running[0]
		victimGPUs := visibleDevices(ctx, spec.ns, victim.Name)
		victimContainer := containerID(victim, "app")

		By("force-deleting " + victim.Name + " and creating the next pod at once")
		deleted := time.Now()
		Expect(cluster.client.CoreV1().Pods(spec.ns).Delete(ctx, victim.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})).To(Succeed())
		// The kubelet removes the containers of a deleted pod soon after they
		// stop: read the old one's end while it is there.
		victimEnded := make(chan time.Time, 1)
		go func() {
			defer GinkgoRecover()
			victimEnded <- criTime(criInspectEventually(ctx, victimContainer, "finishedAt").Status.FinishedAt)
		}()
		next := createPodWithin(ctx, spec.ns, shortGPUPod("next", 3600, []string{node}), v1.PodRunning, 3*time.Minute)
		toRunning := time.Since(deleted)
		nextGPUs := visibleDevices(ctx, spec.ns, next.Name)
		Expect(nextGPUs).To(Equal(victimGPUs), "the node had no other GPU free")

		nextStart := criTime(criInspectEventually(ctx, containerID(next, "app"), "startedAt").Status.StartedAt)
		var victimEnd time.Time
		Eventually(victimEnded).WithTimeout(time.Minute).Should(Receive(&victimEnd))
		overlap := victimEnd.Sub(nextStart)
		drillReport("D6 force delete", "next pod Running %.1fs after the force delete of a running pod, with its GPU %s; the old container stopped %s before the new one started (overlap: %v)",
			toRunning.Seconds(), nextGPUs, (-overlap).Round(time.Millisecond), overlap > 0)
		Expect(victimEnd.Before(nextStart)).To(BeTrue(), "GPU %s was in two running containers at once: the old container stopped at %s, the new one started at %s",
			nextGPUs, victimEnd.Format(time.RFC3339Nano), nextStart.Format(time.RFC3339Nano))
	})

	It("D7 quota holds under 20 concurrent creates", func(ctx context.Context) {
		const hard, creates = 4, 20
		names := createGPUQuota(ctx, spec.ns, hard)

		var maxUsed atomic.Int64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			defer close(sampled)
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				q, err := cluster.client.CoreV1().ResourceQuotas(spec.ns).Get(ctx, "gpus", metav1.GetOptions{})
				if err != nil {
					continue
				}
				for _, n := range names {
					if used, ok := q.Status.Used[n]; ok && used.Value() > maxUsed.Load() {
						maxUsed.Store(used.Value())
					}
				}
			}
		}()
		var admitted atomic.Int32
		var wg sync.WaitGroup
		for i := range creates {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				pod := shortGPUPod(fmt.Sprintf("quota-%02d", i), 30, []string{spec.draNode})
				_, err := cluster.client.CoreV1().Pods(spec.ns).Create(ctx, pod, metav1.CreateOptions{})
				if err == nil {
					admitted.Add(1)
					return
				}
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "create of %s: %v", pod.Name, err)
				Expect(err.Error()).To(ContainSubstring("exceeded quota"))
			}()
		}
		wg.Wait()
		// Let the admitted pods run and the quota controller catch up.
		time.Sleep(10 * time.Second)
		close(stop)
		<-sampled
		drillReport("D7 quota", "%d concurrent creates against a quota of %d GPUs in %d names: %d admitted, most used: %d",
			creates, hard, len(names), admitted.Load(), maxUsed.Load())
		Expect(admitted.Load()).To(BeNumerically("<=", hard), "pods admitted")
		Expect(admitted.Load()).To(BeNumerically(">", 0), "pods admitted")
		Expect(maxUsed.Load()).To(BeNumerically("<=", hard), "quota used")
	})
})

// sharedGPUs compares the GPUs that the namespace's completed pods printed:
// two pods on one node whose containers ran at the same time must not share
// one. It returns how many such pairs ran at once and the GPUs they shared.
// The container times have seconds: runs that overlap within one second are
// not seen.
func sharedGPUs(ctx context.Context, ns string) (concurrent int, shared []string) {
	GinkgoHelper()
	pods, err := cluster.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	type run struct {
		pod, node  string
		start, end time.Time
		gpus       []string
	}
	var runs []run
	for _, p := range pods.Items {
		r := run{pod: p.Name, node: p.Spec.NodeName}
		for _, c := range p.Status.ContainerStatuses {
			if t := c.State.Terminated; t != nil {
				r.start, r.end = t.StartedAt.Time, t.FinishedAt.Time
			}
		}
		Expect(r.end.IsZero()).To(BeFalse(), "pod %s has no terminated container", p.Name)
		r.gpus = strings.Split(visibleDevices(ctx, ns, p.Name), ",")
		runs = append(runs, r)
	}
	for i, a := range runs {
		for _, b := range runs[i+1:] {
			if a.node != b.node || !a.start.Before(b.end) || !b.start.Before(a.end) {
				continue
			}
			concurrent++
			for _, gpu := range a.gpus {
				if slices.Contains(b.gpus, gpu) {
					shared = append(shared, fmt.Sprintf("%s in %s and %s", gpu, a.pod, b.pod))
				}
			}
		}
	}
	return concurrent, shared
}

// createBurst creates count one-GPU pods of the seconds (shortGPUPod), named
// prefix-NNN, one after the other in the background, retrying while the API
// server does not answer, and returns once a third of them exist (before
// the fault named what); the channel is closed when all exist.
func createBurst(ctx context.Context, ns, prefix string, count, seconds int, nodes []string, what string) <-chan struct{} {
	GinkgoHelper()
	var created atomic.Int32
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for i := range count {
			pod := shortGPUPod(fmt.Sprintf("%s-%03d", prefix, i), seconds, nodes)
			createRetrying(ctx, "pod "+pod.Name, func(ctx context.Context) error {
				_, err := cluster.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
				return err
			})
			created.Add(1)
		}
	}()
	Eventually(ctx, created.Load).WithTimeout(2*time.Minute).Should(BeNumerically(">=", count/3), "pods created before %s", what)
	return done
}

// envInt is the environment variable as a positive number, or def.
func envInt(name string, def int) int {
	GinkgoHelper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	Expect(err).NotTo(HaveOccurred(), "%s=%q is not a number", name, v)
	Expect(n).To(BeNumerically(">", 0), "%s", name)
	return n
}

// criInspectEventually inspects the container until the field (startedAt or
// finishedAt) is set.
func criInspectEventually(ctx context.Context, id, field string) criContainer {
	GinkgoHelper()
	var c criContainer
	Eventually(ctx, func() (time.Time, error) {
		var err error
		c, err = criInspect(ctx, id)
		if field == "startedAt" {
			return criTime(c.Status.StartedAt), err
		}
		return criTime(c.Status.FinishedAt), err
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).ShouldNot(BeZero(), "%s of container %s", field, id)
	return c
}
