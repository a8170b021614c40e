// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podExtendedResources is the output of `kubectl draext pod NAME`.
type podExtendedResources struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	Node               string `json:"node,omitempty"`
	ResourceAPIVersion string `json:"resourceAPIVersion"`
	// ResourceClaimName is status.extendedResourceClaimStatus.resourceClaimName.
	ResourceClaimName string `json:"resourceClaimName"`
	// Allocated: the claim has an allocation.
	Allocated  bool                `json:"allocated"`
	Containers []containerExtended `json:"containers"`
	Warnings   []string            `json:"warnings,omitempty"`
}

// containerExtended is a container's extended resources served through the
// claim.
type containerExtended struct {
	Name      string           `json:"name"`
	Resources []mappedResource `json:"resources"`
}

// mappedResource is one extended resource of a container and the devices
// of the claim's request that serves it.
type mappedResource struct {
	ResourceName string `json:"resourceName"`
	// Quantity is what the container requests.
	Quantity int64 `json:"quantity"`
	// Request is the request of the claim (requestMappings[].requestName).
	Request     string            `json:"request"`
	DeviceClass string            `json:"deviceClass,omitempty"`
	Devices     []allocatedDevice `json:"devices"`
}

// allocatedDevice is a device of the claim's allocation.
type allocatedDevice struct {
	Driver string `json:"driver"`
	Pool   string `json:"pool"`
	Device string `json:"device"`
	// UUID is the device's "uuid" attribute in its ResourceSlice, "" when
	// it has none.
	UUID string `json:"uuid"`
}

// noClaimError is the error for a pod without an extended resource claim.
func noClaimError(pod *v1.Pod) error {
	why := "its extended resources, if any, are served by device plugins"
	if pod.Spec.NodeName == "" {
		why = "it is not scheduled yet"
	}
	return fmt.Errorf("pod %s/%s has no extended resource claim (status.extendedResourceClaimStatus is not set): %s", pod.Namespace, pod.Name, why)
}

// buildPodReport maps the pod's containers to the devices of its extended
// resource claim; rslices give the UUIDs. It reads nothing from the
// cluster.
func buildPodReport(ctx context.Context, pod *v1.Pod, apiVersion string, claim *resourceClaim, rslices []resourceSlice) (*podExtendedResources, error) {
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		return nil, noClaimError(pod)
	}
	out := &podExtendedResources{
		APIVersion: outputAPIVersion, Kind: "PodExtendedResources",
		Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName, ResourceAPIVersion: apiVersion,
		ResourceClaimName: status.ResourceClaimName, Allocated: len(claim.Results) > 0, Containers: []containerExtended{},
	}
	if !out.Allocated {
		out.Warnings = append(out.Warnings, fmt.Sprintf("ResourceClaim %s/%s is not allocated", claim.Namespace, claim.Name))
	}
	inv := newInventory(ctx, nil, rslices, nil)
	// Init containers first, as the scheduler numbers them.
	containers := slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers)
	for _, c := range containers {
		var resources []mappedResource
		for _, m := range status.RequestMappings {
			if m.ContainerName != c.Name {
				continue
			}
			r := mappedResource{ResourceName: m.ResourceName, Request: m.RequestName, DeviceClass: claim.Requests[m.RequestName], Devices: []allocatedDevice{}}
			if q, ok := c.Resources.Requests[v1.ResourceName(m.ResourceName)]; ok {
				r.Quantity = q.Value()
			} else if q, ok := c.Resources.Limits[v1.ResourceName(m.ResourceName)]; ok {
				r.Quantity = q.Value()
			}
			for _, res := range claim.Results {
				if res.Request != m.RequestName {
					continue
				}
				id := deviceID{res.Driver, res.Pool, res.Device}
				d := allocatedDevice{Driver: res.Driver, Pool: res.Pool, Device: res.Device}
				if dev, ok := inv.lookup(id); ok {
					d.UUID = dev.uuid(res.Driver)
				} else {
					out.Warnings = append(out.Warnings, fmt.Sprintf("device %s is in no ResourceSlice: no UUID", id))
				}
				r.Devices = append(r.Devices, d)
			}
			resources = append(resources, r)
		}
		if len(resources) > 0 {
			out.Containers = append(out.Containers, containerExtended{Name: c.Name, Resources: resources})
		}
	}
	for _, m := range status.RequestMappings {
		if !slices.ContainsFunc(containers, func(c v1.Container) bool { return c.Name == m.ContainerName }) {
			out.Warnings = append(out.Warnings, fmt.Sprintf("the mapping names container %s, which the pod does not have", m.ContainerName))
		}
	}
	return out, nil
}

// readPodReport reads the pod, its claim and the slices, and builds the
// report.
func readPodReport(ctx context.Context, c *connection, namespace, name string) (*podExtendedResources, error) {
	pod, err := c.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		return nil, noClaimError(pod)
	}
	claim, err := c.api.ResourceClaim(ctx, namespace, status.ResourceClaimName)
	if err != nil {
		return nil, fmt.Errorf("the extended resource claim of pod %s/%s: %w", namespace, name, err)
	}
	rslices, err := c.api.ResourceSlices(ctx)
	if err != nil {
		return nil, err
	}
	return buildPodReport(ctx, pod, c.api.GroupVersion(), claim, rslices)
}

var (
	podColumns     = []string{"CONTAINER", "RESOURCE", "REQUEST", "DRIVER", "POOL", "DEVICE", "UUID"}
	podWideColumns = []string{"QUANTITY", "CLASS"}
)

// printPodTable writes one row per device (a resource without devices gets
// one row with <none>); the claim goes to errOut first.
func printPodTable(out, errOut io.Writer, r *podExtendedResources, wide bool) error {
	allocated := ""
	if !r.Allocated {
		allocated = " (not allocated)"
	}
	fmt.Fprintf(errOut, "Pod %s/%s on node %s: extended resource claim %s%s.\n", r.Namespace, r.Name, orNone(r.Node), r.ResourceClaimName, allocated)
	for _, w := range r.Warnings {
		fmt.Fprintf(errOut, "Warning: %s\n", w)
	}
	columns := podColumns
	if wide {
		columns = append(slices.Clone(columns), podWideColumns...)
	}
	t := newTable(out, columns)
	for _, c := range r.Containers {
		for _, res := range c.Resources {
			devices := res.Devices
			if len(devices) == 0 {
				devices = []allocatedDevice{{}}
			}
			for _, d := range devices {
				cells := []string{c.Name, res.ResourceName, res.Request, orNone(d.Driver), orNone(d.Pool), orNone(d.Device), orNone(d.UUID)}
				if wide {
					cells = append(cells, fmt.Sprint(res.Quantity), orNone(res.DeviceClass))
				}
				t.row(cells...)
			}
		}
	}
	return t.flush()
}
