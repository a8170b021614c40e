package e2e

import (
	"bytes"
	"context"
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
)

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
		Skip("E2E_PODRESOURCES and E2E_PODRESOURCES_SOCKETS are not set: the kubelets' PodResources sockets are not on this host (make e2e sets them for the local cluster)")
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

// restartKubelet stops the kubelet of the node and starts it again with the
// same command line, pid file and log, as make up would, and waits until it
// is healthy again.
func restartKubelet(ctx context.Context, node string) {
	runDir, logDir := os.Getenv("E2E_CLUSTER_RUN_DIR"), os.Getenv("E2E_CLUSTER_LOG_DIR")
	if runDir == "" || logDir == "" {
		Skip("E2E_CLUSTER_RUN_DIR and E2E_CLUSTER_LOG_DIR are not set: the suite cannot restart this cluster's kubelets (make e2e sets them for the local cluster)")
	}
	pidFiles, err := filepath.Glob(filepath.Join(runDir, "kubelet*.pid"))
	Expect(err).NotTo(HaveOccurred())
	var pidFile string
	var pid int
	var args []string
	for _, f := range pidFiles {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		var exe string
		if _, err := fmt.Sscan(string(data), &pid, &exe); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		a := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if slices.Contains(a, "--hostname-override="+node) {
			pidFile, args = f, a
			break
		}
	}
	Expect(pidFile).NotTo(BeEmpty(), "no running kubelet in %s serves node %s", runDir, node)
	healthz := kubeletHealthz(args)

	By("stopping the kubelet of node " + node)
	Expect(syscall.Kill(pid, syscall.SIGTERM)).To(Succeed())
	Eventually(func() error { return syscall.Kill(pid, 0) }).WithTimeout(30*time.Second).Should(HaveOccurred(), "kubelet %d does not stop", pid)

	By("starting the kubelet of node " + node + " again")
	name := strings.TrimSuffix(filepath.Base(pidFile), ".pid")
	logFile, err := os.OpenFile(filepath.Join(logDir, name+".log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	Expect(err).NotTo(HaveOccurred())
	defer logFile.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	Expect(cmd.Start()).To(Succeed())
	Expect(os.WriteFile(pidFile, []byte(fmt.Sprintf("%d %s\n", cmd.Process.Pid, args[0])), 0o644)).To(Succeed())
	Expect(cmd.Process.Release()).To(Succeed())
	Eventually(ctx, func() (int, error) {
		resp, err := http.Get(healthz)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(2*time.Minute).Should(Equal(http.StatusOK), "kubelet of node %s is not healthy at %s", node, healthz)
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
