// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The specs that restart components of the local cluster (a kubelet, a host
// process of the example driver, kube-scheduler) leave that to one command,
// E2E_CLUSTER_CTL (scripts/cluster/ctl.sh, which make e2e sets for the local
// cluster): it knows the components that make up started, their command
// lines, their logs and when each is ready. Against another cluster these
// specs are skipped.

// clusterCtl runs E2E_CLUSTER_CTL with the arguments and returns what it
// printed; the spec fails, with the command's stderr, when it fails.
func clusterCtl(ctx context.Context, args ...string) string {
	GinkgoHelper()
	out, err := runClusterCtl(ctx, args...)
	Expect(err).NotTo(HaveOccurred())
	return out
}

// runClusterCtl runs E2E_CLUSTER_CTL with the arguments and returns what it
// printed, and, when it fails, an error with the command and its stderr. It
// skips the spec when E2E_CLUSTER_CTL is not set.
func runClusterCtl(ctx context.Context, args ...string) (string, error) {
	GinkgoHelper()
	ctl := os.Getenv("E2E_CLUSTER_CTL")
	if ctl == "" {
		skipOrFail("restart", "E2E_CLUSTER_CTL is not set: the suite cannot restart this cluster's components (make e2e sets it for the local cluster)")
	}
	line := ctl + " " + strings.Join(args, " ")
	GinkgoWriter.Println(line)
	cmd := exec.CommandContext(ctx, ctl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, GinkgoWriter)
	// A component that the command starts must not keep its stdout or
	// stderr: past this delay after the command ends, Output returns an
	// error instead of waiting for them.
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", line, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// component is the name under which E2E_CLUSTER_CTL knows the one running
// component whose name matches the shell glob and whose command line has all
// the arguments, e.g. kubelet1 for "kubelet*", "--hostname-override=127.0.0.1".
func component(ctx context.Context, glob string, args ...string) string {
	GinkgoHelper()
	out, err := runClusterCtl(ctx, append([]string{"find", glob}, args...)...)
	names := strings.Fields(out)
	// find exits with 1 and prints nothing when no component matches.
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && len(names) == 0 {
		// What the cluster's process control sees, for a failure that a
		// rerun does not show (a cold make test once found no kubelet of
		// a node whose kubelet was running).
		list, listErr := runClusterCtl(ctx, "list")
		if listErr != nil {
			list += listErr.Error()
		}
		Fail(fmt.Sprintf("no running component %s has the arguments %q; ctl.sh list:\n%s", glob, args, list))
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(names).To(HaveLen(1), "running components %s with the arguments %q", glob, args)
	return names[0]
}

// componentArgs is the command line of the component, the program first, as
// E2E_CLUSTER_CTL recorded it.
func componentArgs(ctx context.Context, name string) []string {
	GinkgoHelper()
	args := strings.Split(strings.TrimSuffix(clusterCtl(ctx, "args", name), "\n"), "\n")
	Expect(args[0]).NotTo(BeEmpty(), "the recorded command line of %s", name)
	return args
}

// restartComponent stops the component and starts it again, with the
// command line args (the program first), which E2E_CLUSTER_CTL then records,
// or with its recorded one when args is nil, and waits until it is ready.
func restartComponent(ctx context.Context, name string, args []string) {
	GinkgoHelper()
	By("restarting " + name)
	ctlArgs := []string{"restart", name}
	if args != nil {
		ctlArgs = append(append(ctlArgs, "--"), args...)
	}
	clusterCtl(ctx, ctlArgs...)
}

// kubeletComponent is the name of the node's kubelet for E2E_CLUSTER_CTL.
func kubeletComponent(ctx context.Context, node string) string {
	GinkgoHelper()
	return component(ctx, "kubelet*", "--hostname-override="+node)
}

// restartKubelet stops the kubelet of the node and starts it again with the
// same command line, as make up would, and waits until it is healthy again.
func restartKubelet(ctx context.Context, node string) {
	GinkgoHelper()
	restartKubeletWith(ctx, node, nil)
}

// restartKubeletWith restarts the kubelet of the node like restartKubelet,
// with the command line that change returns for its current one (nil: the
// same), and returns the command line that it had before.
func restartKubeletWith(ctx context.Context, node string, change func(args []string) []string) []string {
	GinkgoHelper()
	name := kubeletComponent(ctx, node)
	before := componentArgs(ctx, name)
	var args []string
	if change != nil {
		args = change(slices.Clone(before))
	}
	restartComponent(ctx, name, args)
	return before
}

// waitDevicePluginNodes waits, after node's kubelet restarted, until the
// device plugin serves the device-plugin nodes again (it re-registers when
// their kubelet restarted too). On the local cluster every kubelet has its
// own device-plugin directory (a mount namespace per kubelet), so a DRA
// node's restarted kubelet never takes the device plugin over; on a host
// whose kubelets share one, restart the device-plugin node's kubelet last.
func waitDevicePluginNodes(ctx context.Context, node string, pluginNodes []string) {
	GinkgoHelper()
	if len(pluginNodes) == 0 || slices.Contains(pluginNodes, node) {
		return
	}
	Eventually(ctx, func() ([]string, error) {
		return listDevicePluginNodes(ctx)
	}).WithTimeout(time.Minute).Should(Equal(pluginNodes), "nodes whose device plugin serves nvidia.com/gpu")
}

// restartDriver restarts the example driver of the node: the host process
// that make up started for it (through E2E_CLUSTER_CTL), or, when the driver
// runs as a DaemonSet, its pod on the node (the DaemonSet starts another one,
// which this waits for). The driver registers with the kubelet on its own;
// nothing here waits for that: the caller's next pod, which the kubelet must
// prepare through the driver, shows that it serves again.
func restartDriver(ctx context.Context, node string) {
	GinkgoHelper()
	pods, err := cluster.client.CoreV1().Pods(driverNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/name=draext-gpu",
		FieldSelector: "spec.nodeName=" + node,
	})
	Expect(err).NotTo(HaveOccurred())
	if len(pods.Items) == 0 {
		restartComponent(ctx, component(ctx, "draext-gpu*", "--node-name="+node), nil)
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
	restartComponent(ctx, "kube-scheduler", nil)
}
