// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// NodePods watches, through the API server, the pods bound to one node that
// ask for one resource: the pods that may hold device-plugin devices of it
// there (Config.DevicePluginPods). A pod whose resource DRA serves (an
// extended resource claim) asks for it too and is counted: the kubelet
// lists it as well, and telling the two apart would take the pod's
// extendedResourceClaimStatus, which the driver's client (k8s.io/api
// v0.33) does not decode.
//
// The API server rather than the kubelet's device-plugin checkpoint
// (kubelet_internal_checkpoint): the checkpoint keeps entries of pods that
// ended until the next device-plugin allocation, which on a node moved to
// DRA may never come, it is the kubelet's internal format, and on a host
// whose kubelets share one device-plugin directory (the local cluster) it
// is any kubelet's. The watch needs list and watch on pods.
type NodePods struct {
	informer cache.SharedIndexInformer
	nodeName string
	resource v1.ResourceName
	synced   cache.InformerSynced
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// WatchNodePods starts watching the pods bound to nodeName (a field
// selector, so only those reach the driver, trimmed to what counts), and
// waits a little (nodePodsSyncWait) for the watch to sync. It fails at once, naming the
// permission, when the driver may not list pods; other errors are retried
// by the watch, and Pods fails until it has synced.
func WatchNodePods(ctx context.Context, client kubernetes.Interface, nodeName, resource string) (*NodePods, error) {
	selector := fields.OneTermEqualSelector("spec.nodeName", nodeName).String()
	probeCtx, cancelProbe := context.WithTimeout(ctx, 10*time.Second)
	_, err := client.CoreV1().Pods(metav1.NamespaceAll).List(probeCtx, metav1.ListOptions{FieldSelector: selector, Limit: 1})
	cancelProbe()
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return nil, fmt.Errorf("the driver must list and watch pods to tell which may hold device-plugin GPUs (ClusterRole draext-gpu): %w", err)
	}
	informer := coreinformers.NewFilteredPodInformer(client, metav1.NamespaceAll, 0, cache.Indexers{}, func(options *metav1.ListOptions) {
		options.FieldSelector = selector
	})
	if err := informer.SetTransform(trimPod(v1.ResourceName(resource))); err != nil {
		return nil, fmt.Errorf("watch pods of node %s: %w", nodeName, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &NodePods{informer: informer, nodeName: nodeName, resource: v1.ResourceName(resource), synced: informer.HasSynced, cancel: cancel}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		informer.Run(ctx.Done())
	}()
	// Wait a little for the first LIST, so that the first answer of the
	// kubelet can be checked against it; Pods fails until then.
	syncCtx, cancelSync := context.WithTimeout(ctx, nodePodsSyncWait)
	defer cancelSync()
	synced := cache.WaitForCacheSync(syncCtx.Done(), informer.HasSynced)
	klog.FromContext(ctx).V(2).Info("Watching the pods of the node that may hold device-plugin GPUs", "node", nodeName, "resource", resource, "synced", synced)
	return w, nil
}

// nodePodsSyncWait is how long WatchNodePods waits for its watch to sync.
var nodePodsSyncWait = 10 * time.Second

// Pods returns the pods (namespace/name) bound to the node that are not
// finished (phase neither Succeeded nor Failed) and ask for the resource in
// any container, init containers included.
func (w *NodePods) Pods(context.Context) (map[string]bool, error) {
	if !w.synced() {
		return nil, errors.New("the watch of the node's pods has not synced yet")
	}
	pods := map[string]bool{}
	for _, obj := range w.informer.GetStore().List() {
		pod, ok := obj.(*v1.Pod)
		if !ok || pod.Spec.NodeName != w.nodeName || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed || !asksFor(pod, w.resource) {
			continue
		}
		pods[pod.Namespace+"/"+pod.Name] = true
	}
	return pods, nil
}

// Stop ends the watch.
func (w *NodePods) Stop() {
	w.cancel()
	w.wg.Wait()
}

// asksFor reports whether a container of the pod asks for the resource
// (device-plugin resources are set as limits; requests, if given, equal
// them).
func asksFor(pod *v1.Pod, resource v1.ResourceName) bool {
	for _, containers := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range containers {
			if _, ok := c.Resources.Limits[resource]; ok {
				return true
			}
			if _, ok := c.Resources.Requests[resource]; ok {
				return true
			}
		}
	}
	return false
}

// trimPod keeps of a pod only what Pods looks at, so that the watch holds
// little per pod.
func trimPod(resource v1.ResourceName) cache.TransformFunc {
	return func(obj any) (any, error) {
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return obj, nil // a tombstone
		}
		trimmed := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
				ResourceVersion: pod.ResourceVersion, DeletionTimestamp: pod.DeletionTimestamp,
			},
			Spec:   v1.PodSpec{NodeName: pod.Spec.NodeName},
			Status: v1.PodStatus{Phase: pod.Status.Phase},
		}
		if asksFor(pod, resource) {
			trimmed.Spec.Containers = []v1.Container{{Name: "asks-for", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{resource: {}},
			}}}
		}
		return trimmed, nil
	}
}
