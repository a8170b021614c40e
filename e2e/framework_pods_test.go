// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

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

type testContainer struct {
	name     string
	requests map[v1.ResourceName]int
	// sidecar makes an init container restartable.
	sidecar bool
}

// extendedPod is a pod pinned to the node whose containers ask for extended
// resources (requests and limits).
func extendedPod(name, node string, init, regular []testContainer) *v1.Pod {
	pod := shellPod(name)
	pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	app := pod.Spec.Containers[0]
	container := func(c testContainer) v1.Container {
		out := *app.DeepCopy()
		out.Name = c.name
		list := v1.ResourceList{}
		for name, n := range c.requests {
			list[name] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		}
		out.Resources = v1.ResourceRequirements{Requests: list, Limits: list}
		return out
	}
	pod.Spec.Containers = nil
	for _, c := range init {
		ic := container(c)
		if c.sidecar {
			ic.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		} else {
			ic.Command = []string{"sh", "-c", printGPUsCommand}
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
	}
	for _, c := range regular {
		pod.Spec.Containers = append(pod.Spec.Containers, container(c))
	}
	return pod
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

// eventTime is when the event, or the last of its series, happened.
func eventTime(event eventsv1.Event) time.Time {
	if event.Series != nil {
		return event.Series.LastObservedTime.Time
	}
	if !event.EventTime.IsZero() {
		return event.EventTime.Time
	}
	return event.DeprecatedLastTimestamp.Time
}

// podEventReasons lists the reasons of the events about the pod.
func podEventReasons(ctx context.Context, ns, pod string) []string {
	events, err := cluster.client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var reasons []string
	for _, event := range events.Items {
		if event.Regarding.Name == pod {
			reasons = append(reasons, event.Reason)
		}
	}
	return reasons
}

// podEventNotes lists the notes (messages) of the events about the pod with
// the reason, for polling. kube-scheduler's events library folds the events
// of a pod with the same reason into the series of the first one, whose note
// stays: a note tells what the first of them said.
func podEventNotes(ctx context.Context, ns, pod, reason string) ([]string, error) {
	events, err := cluster.client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, event := range events.Items {
		if event.Regarding.Kind == "Pod" && event.Regarding.Name == pod && event.Reason == reason {
			notes = append(notes, event.Note)
		}
	}
	return notes, nil
}
