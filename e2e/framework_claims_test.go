// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// claimRecorder keeps the last allocated version of every claim in a
// namespace that a watch delivered: the allocation the scheduler wrote,
// even when the claim is deallocated or deleted afterwards.
type claimRecorder struct {
	mutex     sync.Mutex
	allocated map[string]*resourceapi.ResourceClaim
}

func recordClaims(ctx context.Context, ns string) *claimRecorder {
	r := &claimRecorder{allocated: map[string]*resourceapi.ResourceClaim{}}
	// The node's context ends with the node (a BeforeEach): the watch
	// must last until the spec's cleanup.
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	DeferCleanup(cancel)
	w, err := cluster.client.ResourceV1beta1().ResourceClaims(ns).Watch(watchCtx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	go func() {
		defer GinkgoRecover()
		for event := range w.ResultChan() {
			claim, ok := event.Object.(*resourceapi.ResourceClaim)
			if !ok || event.Type == watch.Deleted || claim.Status.Allocation == nil {
				continue
			}
			r.mutex.Lock()
			r.allocated[claim.Name] = claim
			r.mutex.Unlock()
		}
	}()
	return r
}

func (r *claimRecorder) byName(ctx context.Context, name string) *resourceapi.ResourceClaim {
	var claim *resourceapi.ResourceClaim
	Eventually(ctx, func() *resourceapi.ResourceClaim {
		r.mutex.Lock()
		defer r.mutex.Unlock()
		claim = r.allocated[name]
		return claim
	}).WithTimeout(30*time.Second).ShouldNot(BeNil(), "claim %s never got allocated", name)
	return claim
}

// allocated returns the pod's extended resource claim as the scheduler
// allocated it, after checking what marks it as the pod's.
func (r *claimRecorder) extendedClaim(ctx context.Context, pod *v1.Pod) *resourceapi.ResourceClaim {
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		// The mapping is written before the binding; read again.
		p, err := cluster.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		status = p.Status.ExtendedResourceClaimStatus
	}
	Expect(status).NotTo(BeNil(), "pod %s has no extendedResourceClaimStatus", pod.Name)
	claim := r.byName(ctx, status.ResourceClaimName)
	Expect(claim.Name).To(HavePrefix(pod.Name + "-extended-resources-"))
	Expect(claim.Annotations).To(HaveKeyWithValue(resourceapi.ExtendedResourceClaimAnnotation, "true"))
	owner := metav1.GetControllerOf(claim)
	Expect(owner).NotTo(BeNil(), "claim %s has no controller", claim.Name)
	Expect(owner.UID).To(Equal(pod.UID), "claim %s is controlled by %s, not by pod %s", claim.Name, owner.Name, pod.Name)
	Expect(claim.Status.ReservedFor).To(ConsistOf(resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID}))
	return claim
}

// ownedBy lists the allocated claims the pod controls.
func (r *claimRecorder) ownedBy(pod *v1.Pod) []string {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	var names []string
	for name, claim := range r.allocated {
		if owner := metav1.GetControllerOf(claim); owner != nil && owner.UID == pod.UID {
			names = append(names, name)
		}
	}
	return names
}

func claimDevices(claim *resourceapi.ResourceClaim) []string {
	var devices []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		devices = append(devices, r.Driver+"/"+r.Pool+"/"+r.Device)
	}
	return devices
}

// claimRequests describes the requests as name: "class xCount".
func claimRequests(claim *resourceapi.ResourceClaim) map[string]string {
	requests := map[string]string{}
	for _, r := range claim.Spec.Devices.Requests {
		requests[r.Name] = fmt.Sprintf("%s x%d", r.DeviceClassName, r.Count)
	}
	return requests
}

// claimUUIDs returns the UUIDs of the claim's devices, of the given requests
// only if any are given.
func claimUUIDs(rs []resourceapi.ResourceSlice, claim *resourceapi.ResourceClaim, requests ...string) []string {
	var uuids []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(requests) > 0 && !slices.Contains(requests, r.Request) {
			continue
		}
		uuids = append(uuids, deviceUUID(rs, r.Pool, r.Device))
	}
	return uuids
}

func mapping(container string, name v1.ResourceName, request string) v1.ContainerExtendedResourceRequest {
	return v1.ContainerExtendedResourceRequest{ContainerName: container, ResourceName: string(name), RequestName: request}
}

// mappedRequests lists the claim requests that the pod status maps to the
// container.
func mappedRequests(pod *v1.Pod, container string) []string {
	var requests []string
	for _, m := range pod.Status.ExtendedResourceClaimStatus.RequestMappings {
		if m.ContainerName == container {
			requests = append(requests, m.RequestName)
		}
	}
	return requests
}

// mappedDevices lists the claim's devices of the requests that the pod status
// maps to the container, as claim:driver/pool/device.
func mappedDevices(pod *v1.Pod, claim *resourceapi.ResourceClaim, container string) []string {
	requests := mappedRequests(pod, container)
	var out []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		if slices.Contains(requests, r.Request) {
			out = append(out, claim.Name+":"+r.Driver+"/"+r.Pool+"/"+r.Device)
		}
	}
	return out
}

// expectMappedGPUs waits for every container of the running pod to print its
// GPUs and checks that each sees exactly the devices of the claim's requests
// that the pod status maps to it (none for a container without a mapping).
// It returns the UUIDs by container.
func expectMappedGPUs(ctx context.Context, pod *v1.Pod, claim *resourceapi.ResourceClaim) map[string][]string {
	rs := driverSlices(ctx)
	got := map[string][]string{}
	for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		requests := mappedRequests(pod, c.Name)
		want := claimUUIDs(rs, claim, requests...)
		if len(requests) == 0 {
			want = nil
		}
		gpus := containerGPUs(ctx, pod.Namespace, pod.Name, c.Name)
		var list []string
		if gpus != "" {
			list = strings.Split(gpus, ",")
		}
		Expect(list).To(ConsistOf(want), "GPUs of container %q (mapped requests %v)", c.Name, requests)
		got[c.Name] = list
	}
	return got
}

// gpuQuotaNames are the three quota names that count each GPU of the
// driver's class once: requests of the extended resource, requests of the
// class's implicit name, and the class's devices.
func gpuQuotaNames() []v1.ResourceName {
	return []v1.ResourceName{
		"requests." + gpuResource,
		v1.ResourceName("requests." + resourceapi.ResourceDeviceClassPrefix + *className),
		v1.ResourceName(*className + v1.ResourceClaimsPerClass),
	}
}

// createGPUQuota creates the ResourceQuota "gpus" of the namespace with hard
// GPUs in each of the three names that count them (the extended resource, the
// implicit name, the class's devices), waits until the quota controller has
// computed it, and returns the names.
func createGPUQuota(ctx context.Context, ns string, hard int64) []v1.ResourceName {
	GinkgoHelper()
	names := gpuQuotaNames()
	quota := &v1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "gpus"}, Spec: v1.ResourceQuotaSpec{Hard: v1.ResourceList{}}}
	for _, n := range names {
		quota.Spec.Hard[n] = *resource.NewQuantity(hard, resource.DecimalSI)
	}
	_, err := cluster.client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Eventually(ctx, func() (int, error) {
		q, err := cluster.client.CoreV1().ResourceQuotas(ns).Get(ctx, "gpus", metav1.GetOptions{})
		return len(q.Status.Hard), err
	}).WithTimeout(time.Minute).Should(Equal(len(names)), "the quota controller has not computed the quota")
	return names
}

// createGPUTemplate creates the ResourceClaimTemplate "gpu" of the
// namespace: one GPU of the driver's class.
func createGPUTemplate(ctx context.Context, ns string) *resourceapi.ResourceClaimTemplate {
	GinkgoHelper()
	template, err := cluster.client.ResourceV1beta1().ResourceClaimTemplates(ns).Create(ctx, &resourceapi.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"},
		Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "gpu", DeviceClassName: *className, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
		}}}}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	return template
}
