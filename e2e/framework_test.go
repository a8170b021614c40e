// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// newNamespace creates the spec's namespace and deletes it after the spec,
// saving its objects first when the spec failed.
func newNamespace(ctx context.Context) string {
	ns, err := cluster.client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "draext-e2e-", Labels: map[string]string{"draext.dev/e2e": "true"}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) {
		if CurrentSpecReport().Failed() {
			collect(ctx, ns.Name)
		}
		err := cluster.client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			Fail(fmt.Sprintf("delete namespace %s: %v", ns.Name, err))
		}
		Eventually(ctx, func() error {
			_, err := cluster.client.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			return err
		}).WithTimeout(2*time.Minute).Should(Satisfy(apierrors.IsNotFound), "namespace %s is not deleted", ns.Name)
	})
	// Pods need the namespace's default ServiceAccount.
	Eventually(ctx, func() error {
		_, err := cluster.client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err
	}).WithTimeout(time.Minute).Should(Succeed())
	return ns.Name
}

// collect saves pods, claims, slices and events of a failed spec.
func collect(ctx context.Context, ns string) {
	dir := filepath.Join(*artifacts, strings.NewReplacer(" ", "_", "/", "_").Replace(CurrentSpecReport().FullText()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		GinkgoWriter.Printf("cannot save artifacts: %v\n", err)
		return
	}
	save := func(name string, obj any, err error) {
		if err != nil {
			obj = map[string]string{"error": err.Error()}
		}
		if list, err := meta.ExtractList(asObject(obj)); err == nil {
			for _, o := range list {
				if m, err := meta.Accessor(o); err == nil {
					m.SetManagedFields(nil)
				}
			}
		}
		data, _ := yaml.Marshal(obj)
		_ = os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644)
	}
	pods, err := cluster.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	save("pods", pods, err)
	events, err := cluster.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	save("events", events, err)
	claims, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
	save("resourceclaims", claims, err)
	slices, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	save("resourceslices", slices, err)
	if pods != nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				logs, err := cluster.client.CoreV1().Pods(ns).GetLogs(p.Name, &v1.PodLogOptions{Container: c.Name}).DoRaw(ctx)
				if err != nil {
					logs = []byte(err.Error())
				}
				_ = os.WriteFile(filepath.Join(dir, p.Name+"-"+c.Name+".log"), logs, 0o644)
			}
		}
	}
	GinkgoWriter.Printf("artifacts of the failed spec: %s\n", dir)
}

// gpuEnvPrefix starts the variables through which the example driver hands
// GPUs to a container, one per GPU, DRAEXT_GPU_<ID>=<UUID>, in DRA and in
// device-plugin mode (internal/gpudriver/cdi.GPUEnvPrefix).
const gpuEnvPrefix = "DRAEXT_GPU_"

// printGPUsCommand is a shell line that prints the GPUs the container got as
// one line GPUS=<UUIDs>, comma-separated and sorted ("GPUS=" for none),
// built from the DRAEXT_GPU_* variables. It uses only shell builtins, as the
// cluster's busybox image links few applets: set lists the variables sorted
// by name, which sorts the UUIDs the names are made of. Append "; sleep 3600"
// or another command to keep the container running.
const printGPUsCommand = `set | { g=; while IFS= read -r l; do case $l in ` + gpuEnvPrefix + `*=*) n=${l%%=*}; ` +
	`case $n in *[!A-Z0-9_]*) ;; *) eval "v=\${$n-}"; [ -n "$v" ] && g=$g,$v;; esac;; esac; done; echo "GPUS=${g#,}"; }`

// gpusLinePrefix starts the line that printGPUsCommand prints.
const gpusLinePrefix = "GPUS="

// shellPod is a pod whose container prints its GPUs (printGPUsCommand) and
// waits.
func shellPod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			RestartPolicy:                 v1.RestartPolicyNever,
			DNSPolicy:                     v1.DNSDefault,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []v1.Container{{
				Name:    "app",
				Image:   *image,
				Command: []string{"sh", "-c", printGPUsCommand + "; sleep 3600"},
			}},
		},
	}
}

// runPod creates a pod and waits until it runs.
func runPod(ctx context.Context, ns string, pod *v1.Pod) *v1.Pod {
	return createPodUntil(ctx, ns, pod, v1.PodRunning)
}

// createPodUntil creates a pod and returns it once it is in the phase.
func createPodUntil(ctx context.Context, ns string, pod *v1.Pod, phase v1.PodPhase) *v1.Pod {
	return createPodWithin(ctx, ns, pod, phase, 2*time.Minute)
}

// createPodWithin creates a pod and returns it once it is in the phase,
// failing when that takes longer than timeout.
func createPodWithin(ctx context.Context, ns string, pod *v1.Pod, phase v1.PodPhase, timeout time.Duration) *v1.Pod {
	pod, err := cluster.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func() (v1.PodPhase, error) {
		p, err := cluster.client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		pod = p
		return p.Status.Phase, nil
	}).WithTimeout(timeout).Should(Equal(phase), "pod %s/%s is not %s within %s", ns, pod.Name, phase, timeout)
	return pod
}

// visibleDevices is the list of GPU UUIDs that the pod's (first) container
// printed with printGPUsCommand, comma-separated and sorted ("" for none),
// e.g. "GPU-27caaf52-...,GPU-4bb5f883-...". It waits for the line.
func visibleDevices(ctx context.Context, ns, pod string) string {
	return containerGPUs(ctx, ns, pod, "")
}

// containerGPUs is visibleDevices for the named container ("": the first
// one); init containers that have ended still have their logs.
func containerGPUs(ctx context.Context, ns, pod, container string) string {
	var value string
	Eventually(ctx, func() (string, error) {
		logs, err := cluster.client.CoreV1().Pods(ns).GetLogs(pod, &v1.PodLogOptions{Container: container}).DoRaw(ctx)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(logs), "\n") {
			if v, ok := strings.CutPrefix(line, gpusLinePrefix); ok {
				value = sortedList(v)
				return line, nil
			}
		}
		return "", nil
	}).WithTimeout(30*time.Second).ShouldNot(BeEmpty(), "container %q of pod %s/%s printed no %s line", container, ns, pod, gpusLinePrefix)
	return value
}

// sortedList sorts a comma-separated list and drops empty items.
func sortedList(list string) string {
	var items []string
	for _, item := range strings.Split(strings.TrimSpace(list), ",") {
		if item != "" {
			items = append(items, item)
		}
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// driverSlices are the example driver's ResourceSlices; the spec is skipped
// when the driver does not run in the cluster.
func driverSlices(ctx context.Context) []resourceapi.ResourceSlice {
	list, err := cluster.client.ResourceV1beta1().ResourceSlices().List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []resourceapi.ResourceSlice
	for _, s := range list.Items {
		if s.Spec.Driver == *driverName {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		skipOrFail("driver", fmt.Sprintf("no ResourceSlice of driver %s: the example driver does not run in this cluster (make up deploys it)", *driverName))
	}
	return out
}

// asObject returns obj as a runtime.Object, or nil.
func asObject(obj any) runtime.Object {
	o, _ := obj.(runtime.Object)
	return o
}
