// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// driverNamespace is where overlays/base deploys the example driver.
const driverNamespace = "draext-gpu"

// What the specs ask the nodes of the local cluster directly: the kubelets'
// PodResources API and restarts of a kubelet. Against another cluster these
// specs are skipped (scripts/e2e.sh sets the variables for the local one).

// podResourcesContainer is one container as cmd/draext-podresources prints it.
type podResourcesContainer struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	Devices   []struct {
		Resource string   `json:"resource"`
		IDs      []string `json:"ids"`
	} `json:"devices"`
	Dynamic []struct {
		Claim          string   `json:"claim"`
		ClaimNamespace string   `json:"claimNamespace"`
		Driver         string   `json:"driver"`
		Pool           string   `json:"pool"`
		Device         string   `json:"device"`
		CDI            []string `json:"cdi"`
	} `json:"dynamic"`
}

// dynamicDevices lists the container's DRA devices as claim:driver/pool/device.
func (c podResourcesContainer) dynamicDevices() []string {
	var out []string
	for _, d := range c.Dynamic {
		out = append(out, d.Claim+":"+d.Driver+"/"+d.Pool+"/"+d.Device)
	}
	return out
}

// requirePodResources skips the spec unless the suite can ask the kubelets.
func requirePodResources() {
	if os.Getenv("E2E_PODRESOURCES") == "" || os.Getenv("E2E_PODRESOURCES_SOCKETS") == "" {
		skipOrFail("podresources", "E2E_PODRESOURCES and E2E_PODRESOURCES_SOCKETS are not set: the kubelets' PodResources sockets are not on this host (make e2e sets them for the local cluster)")
	}
}

// podResources asks every kubelet of the local cluster what it reports for
// the pod and returns its containers by name.
func podResources(ctx context.Context, pod *v1.Pod) map[string]podResourcesContainer {
	sockets, err := filepath.Glob(os.Getenv("E2E_PODRESOURCES_SOCKETS"))
	Expect(err).NotTo(HaveOccurred())
	Expect(sockets).NotTo(BeEmpty(), "no kubelet PodResources socket matches %s", os.Getenv("E2E_PODRESOURCES_SOCKETS"))
	out := map[string]podResourcesContainer{}
	for _, socket := range sockets {
		cmd := exec.CommandContext(ctx, os.Getenv("E2E_PODRESOURCES"), "--socket", socket, "--namespace", pod.Namespace, "--pod", pod.Name)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "draext-podresources: %s", stderr.String())
		var containers []podResourcesContainer
		Expect(json.Unmarshal(data, &containers)).To(Succeed())
		for _, c := range containers {
			out[c.Container] = c
		}
	}
	return out
}

// hostProcess is a component that make up runs as a host process, with its
// pid file "<pid> <exe>" in E2E_CLUSTER_RUN_DIR and its log in
// E2E_CLUSTER_LOG_DIR.
type hostProcess struct {
	// name is the pid file's name without .pid, e.g. kubelet1.
	name    string
	pidFile string
	pid     int
	args    []string
}

// findHostProcess returns the running host process whose pid file matches
// the glob (in E2E_CLUSTER_RUN_DIR) and whose command line has all the
// arguments. It skips the spec against a cluster that is not the local one.
func findHostProcess(glob string, want ...string) hostProcess {
	GinkgoHelper()
	runDir, logDir := os.Getenv("E2E_CLUSTER_RUN_DIR"), os.Getenv("E2E_CLUSTER_LOG_DIR")
	if runDir == "" || logDir == "" {
		skipOrFail("restart", "E2E_CLUSTER_RUN_DIR and E2E_CLUSTER_LOG_DIR are not set: the suite cannot restart this cluster's components (make e2e sets them for the local cluster)")
	}
	pidFiles, err := filepath.Glob(filepath.Join(runDir, glob))
	Expect(err).NotTo(HaveOccurred())
	for _, f := range pidFiles {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		var pid int
		var exe string
		if _, err := fmt.Sscan(string(data), &pid, &exe); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if !slices.ContainsFunc(want, func(a string) bool { return !slices.Contains(args, a) }) {
			return hostProcess{name: strings.TrimSuffix(filepath.Base(f), ".pid"), pidFile: f, pid: pid, args: args}
		}
	}
	Fail(fmt.Sprintf("no running process with a pid file %s in %s has the arguments %q", glob, runDir, want))
	return hostProcess{}
}

// restart stops the process and starts it again with the same command line,
// pid file and log (appended), as make up would.
func (p hostProcess) restart() {
	GinkgoHelper()
	p.restartWith(p.args)
}

// restartWith stops the process and starts it with the command line args
// (the program first), the same pid file and log (appended).
func (p hostProcess) restartWith(args []string) {
	GinkgoHelper()
	By(fmt.Sprintf("stopping %s (pid %d)", p.name, p.pid))
	Expect(syscall.Kill(p.pid, syscall.SIGTERM)).To(Succeed())
	Eventually(func() bool { return processGone(p.pid) }).WithTimeout(30*time.Second).Should(BeTrue(), "%s (pid %d) does not stop", p.name, p.pid)

	By("starting " + p.name + " again")
	logFile, err := os.OpenFile(filepath.Join(os.Getenv("E2E_CLUSTER_LOG_DIR"), p.name+".log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	defer logFile.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	Expect(cmd.Start()).To(Succeed())
	Expect(os.WriteFile(p.pidFile, []byte(fmt.Sprintf("%d %s\n", cmd.Process.Pid, args[0])), 0o644)).To(Succeed())
	Expect(cmd.Process.Release()).To(Succeed())
}

// processGone reports whether the process has exited. A process that this
// suite started (an earlier restart) is its child: it stays a zombie, which
// signal 0 still reaches, until the suite reaps it.
func processGone(pid int) bool {
	var status syscall.WaitStatus
	if reaped, err := syscall.Wait4(pid, &status, syscall.WNOHANG, nil); err == nil && reaped == pid {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may contain spaces and parentheses.
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

// waitHealthy waits until the URL answers 200; the components of the local
// cluster serve their healthz over HTTPS with the cluster's own CA, which
// this check need not trust.
func waitHealthy(ctx context.Context, what, url string) {
	GinkgoHelper()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	Eventually(ctx, func() (int, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(2*time.Minute).Should(Equal(http.StatusOK), "%s is not healthy at %s", what, url)
}

// restartKubelet stops the kubelet of the node and starts it again with the
// same command line, pid file and log, as make up would, and waits until it
// is healthy again.
func restartKubelet(ctx context.Context, node string) {
	GinkgoHelper()
	restartKubeletWith(ctx, node, nil)
}

// restartKubeletWith restarts the kubelet of the node like restartKubelet,
// with the command line that change returns for its current one (nil: the
// same), and returns the command line that it had before.
func restartKubeletWith(ctx context.Context, node string, change func(args []string) []string) []string {
	GinkgoHelper()
	kubelet := findHostProcess("kubelet*.pid", "--hostname-override="+node)
	healthz := kubeletHealthz(kubelet.args)
	args := kubelet.args
	if change != nil {
		args = change(slices.Clone(args))
	}
	kubelet.restartWith(args)
	waitHealthy(ctx, "kubelet of node "+node, healthz)
	return kubelet.args
}

// giveBackDevicePlugin restarts the kubelet of the device-plugin node, if
// there is one besides node, after node's kubelet restarted: every kubelet
// on one host listens on the same hard-coded device plugin socket and the
// device plugin registers with the one started last.
func giveBackDevicePlugin(ctx context.Context, node string, pluginNodes []string) {
	GinkgoHelper()
	if len(pluginNodes) == 0 || slices.Contains(pluginNodes, node) {
		return
	}
	restartKubelet(ctx, pluginNodes[0])
	Eventually(ctx, func() ([]string, error) {
		return devicePluginNodes(ctx), nil
	}).WithTimeout(time.Minute).Should(Equal(pluginNodes), "nodes whose device plugin serves nvidia.com/gpu")
}

// restartDriver restarts the example driver of the node: the host process
// that make up started for it, or, when the driver runs as a DaemonSet, its
// pod on the node (the DaemonSet starts another one, which this waits for).
// The driver registers with the kubelet on its own; nothing here waits for
// that: the caller's next pod, which the kubelet must prepare through the
// driver, shows that it serves again.
func restartDriver(ctx context.Context, node string) {
	GinkgoHelper()
	pods, err := cluster.client.CoreV1().Pods(driverNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=draext-gpu",
		FieldSelector: "spec.nodeName=" + node,
	})
	Expect(err).NotTo(HaveOccurred())
	if len(pods.Items) == 0 {
		findHostProcess("draext-gpu*.pid", "--node-name="+node).restart()
		return
	}
	old := pods.Items[0]
	By("deleting the driver pod " + old.Name + " of node " + node)
	Expect(cluster.client.CoreV1().Pods(driverNamespace).Delete(ctx, old.Name, metav1.DeleteOptions{})).To(Succeed())
	Eventually(ctx, func() (bool, error) {
		pods, err := cluster.client.CoreV1().Pods(driverNamespace).List(ctx, metav1.ListOptions{
			LabelSelector: "app.kubernetes.io/name=draext-gpu",
			FieldSelector: "spec.nodeName=" + node,
		})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.UID != old.UID && p.Status.Phase == v1.PodRunning {
				return true, nil
			}
		}
		return false, nil
	}).WithTimeout(2*time.Minute).Should(BeTrue(), "the DaemonSet does not run a new driver pod on node %s", node)
}

// restartScheduler restarts kube-scheduler and waits until it is healthy.
func restartScheduler(ctx context.Context) {
	GinkgoHelper()
	findHostProcess("kube-scheduler.pid").restart()
	waitHealthy(ctx, "kube-scheduler", "https://127.0.0.1:10259/healthz")
}

// kubeletHealthz finds the healthz URL in the kubelet's config file.
func kubeletHealthz(args []string) string {
	var config string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config = v
		}
	}
	Expect(config).NotTo(BeEmpty(), "kubelet command line without --config: %v", args)
	data, err := os.ReadFile(config)
	Expect(err).NotTo(HaveOccurred())
	field := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `:\s*"?([^"\s]+)`).FindSubmatch(data)
		Expect(m).NotTo(BeNil(), "%s has no %s", config, name)
		return string(m[1])
	}
	return fmt.Sprintf("http://%s:%s/healthz", field("healthzBindAddress"), field("healthzPort"))
}
