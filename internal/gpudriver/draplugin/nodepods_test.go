// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
)

// nodePod is a pod on node in phase whose container app asks for limits
// and whose init container (if init is set) asks for initLimits.
func nodePod(name, node string, phase v1.PodPhase, limits, initLimits v1.ResourceList) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			NodeName:   node,
			Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{Limits: limits}}},
		},
		Status: v1.PodStatus{Phase: phase},
	}
	if initLimits != nil {
		pod.Spec.InitContainers = []v1.Container{{Name: "init", Resources: v1.ResourceRequirements{Limits: initLimits}}}
	}
	return pod
}

func TestNodePods(t *testing.T) {
	gpus := v1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	cpu := v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
	deleting := nodePod("deleting", "node-a", v1.PodRunning, gpus, nil)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	requestsOnly := nodePod("requests-only", "node-a", v1.PodRunning, nil, nil)
	requestsOnly.Spec.Containers[0].Resources.Requests = gpus
	client := fake.NewClientset(
		nodePod("dp", "node-a", v1.PodRunning, gpus, nil),
		nodePod("pending", "node-a", v1.PodPending, gpus, nil),
		nodePod("init", "node-a", v1.PodPending, cpu, gpus),
		nodePod("unknown-phase", "node-a", v1.PodUnknown, gpus, nil),
		deleting,
		requestsOnly,
		nodePod("done", "node-a", v1.PodSucceeded, gpus, nil),
		nodePod("failed", "node-a", v1.PodFailed, gpus, nil),
		nodePod("cpu", "node-a", v1.PodRunning, cpu, nil),
		nodePod("other-node", "node-b", v1.PodRunning, gpus, nil),
	)
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := WatchNodePods(ctx, client, "node-a", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	waitForPods := func(want ...string) {
		t.Helper()
		var got []string
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			var pods map[string]bool
			pods, err = w.Pods(ctx)
			got = slices.Sorted(maps.Keys(pods))
			if err == nil && slices.Equal(got, want) {
				return
			}
		}
		t.Fatalf("Pods() = %v, %v; want %v", got, err, want)
	}
	waitForPods("ns/deleting", "ns/dp", "ns/init", "ns/pending", "ns/requests-only", "ns/unknown-phase")

	// A pod that ends, and one that is bound.
	dp := nodePod("dp", "node-a", v1.PodSucceeded, gpus, nil)
	if _, err := client.CoreV1().Pods("ns").UpdateStatus(ctx, dp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("ns").Create(ctx, nodePod("new", "node-a", v1.PodPending, gpus, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForPods("ns/deleting", "ns/init", "ns/new", "ns/pending", "ns/requests-only", "ns/unknown-phase")
}

func TestNodePodsForbidden(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	})
	_, ctx := ktesting.NewTestContext(t)
	_, err := WatchNodePods(ctx, client, "node-a", "nvidia.com/gpu")
	if err == nil || !strings.Contains(err.Error(), "the driver must list and watch pods") {
		t.Fatalf("WatchNodePods without the permission: %v", err)
	}
}

func TestNodePodsNotSynced(t *testing.T) {
	defer func(wait time.Duration) { nodePodsSyncWait = wait }(nodePodsSyncWait)
	nodePodsSyncWait = 100 * time.Millisecond
	client := fake.NewClientset()
	// A LIST that fails keeps the watch from syncing; the first (the
	// permission check) passes.
	lists := 0
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists++
		if lists == 1 {
			return false, nil, nil
		}
		return true, nil, apierrors.NewServiceUnavailable("apiserver is restarting")
	})
	_, ctx := ktesting.NewTestContext(t)
	w, err := WatchNodePods(ctx, client, "node-a", "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if pods, err := w.Pods(ctx); err == nil {
		t.Fatalf("Pods() before the watch synced = %v, want an error", pods)
	}
}
