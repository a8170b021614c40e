// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package podresources reads what a kubelet reports about the devices of its
// pods' containers, from the kubelet's PodResources API (List of
// podresources/v1 on the kubelet's unix socket): cmd/draext-podresources
// prints it, and the example driver's DRA mode keeps the GPUs that
// device-plugin containers still hold out of its ResourceSlice.
package podresources

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// DefaultSocket is where a kubelet with the default root directory serves
// the PodResources API.
const DefaultSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// maxMsgSize is what the kubelet's own PodResources client accepts.
const maxMsgSize = 16 * 1024 * 1024

// Container is one container of a pod and the devices the kubelet reports
// for it.
type Container struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container"`
	// Devices are the device plugins' devices, per resource name.
	Devices []Device `json:"devices"`
	// Dynamic are the DRA devices, one entry per device of each claim.
	Dynamic []DynamicDevice `json:"dynamic"`
}

// Device is the set of devices a device plugin gave a container for one
// resource.
type Device struct {
	Resource string   `json:"resource"`
	IDs      []string `json:"ids"`
}

// DynamicDevice is one device of a ResourceClaim that the kubelet prepared
// for a container.
type DynamicDevice struct {
	Claim          string   `json:"claim"`
	ClaimNamespace string   `json:"claimNamespace"`
	Driver         string   `json:"driver"`
	Pool           string   `json:"pool"`
	Device         string   `json:"device"`
	CDI            []string `json:"cdi"`
}

// List calls List on the kubelet PodResources socket.
func List(ctx context.Context, socket string, timeout time.Duration) (*podresourcesv1.ListPodResourcesResponse, error) {
	path, err := filepath.Abs(socket)
	if err != nil {
		return nil, fmt.Errorf("kubelet PodResources socket %s: %w", socket, err)
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kubelet PodResources socket %s does not exist: is the kubelet running, and is --socket <kubelet root dir>/pod-resources/kubelet.sock?", socket)
		}
		return nil, fmt.Errorf("kubelet PodResources socket %s: %w", socket, err)
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)))
	if err != nil {
		return nil, fmt.Errorf("kubelet PodResources socket %s: %w", socket, err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := podresourcesv1.NewPodResourcesListerClient(conn).List(ctx, &podresourcesv1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("List on kubelet PodResources socket %s: %w", socket, err)
	}
	return resp, nil
}

// Containers converts a List answer into one Container per container of
// every pod, in the order of the answer, keeping only pods of namespace and
// named pod when they are not empty. Devices, Dynamic and their ID lists are
// never nil, so they encode as [] when empty.
func Containers(resp *podresourcesv1.ListPodResourcesResponse, namespace, pod string) []Container {
	out := []Container{}
	for _, p := range resp.GetPodResources() {
		if p == nil || (namespace != "" && p.GetNamespace() != namespace) || (pod != "" && p.GetName() != pod) {
			continue
		}
		for _, c := range p.GetContainers() {
			if c == nil {
				continue
			}
			ctr := Container{
				Namespace: p.GetNamespace(),
				Pod:       p.GetName(),
				Container: c.GetName(),
				Devices:   []Device{},
				Dynamic:   []DynamicDevice{},
			}
			for _, d := range c.GetDevices() {
				if d == nil {
					continue
				}
				ctr.Devices = append(ctr.Devices, Device{
					Resource: d.GetResourceName(),
					IDs:      append([]string{}, d.GetDeviceIds()...),
				})
			}
			for _, dr := range c.GetDynamicResources() {
				if dr == nil {
					continue
				}
				for _, cr := range dr.GetClaimResources() {
					if cr == nil {
						continue
					}
					cdi := []string{}
					for _, dev := range cr.GetCDIDevices() {
						if dev != nil {
							cdi = append(cdi, dev.GetName())
						}
					}
					ctr.Dynamic = append(ctr.Dynamic, DynamicDevice{
						Claim:          dr.GetClaimName(),
						ClaimNamespace: dr.GetClaimNamespace(),
						Driver:         cr.GetDriverName(),
						Pool:           cr.GetPoolName(),
						Device:         cr.GetDeviceName(),
						CDI:            cdi,
					})
				}
			}
			out = append(out, ctr)
		}
	}
	return out
}

// DevicePluginHolders are the devices that a device plugin gave out for the
// resource to the containers in the List answer: device ID -> the holder as
// namespace/pod/container (the first one in the answer's order, should a
// device be listed twice).
func DevicePluginHolders(containers []Container, resource string) map[string]string {
	held := map[string]string{}
	for _, c := range containers {
		for _, d := range c.Devices {
			if d.Resource != resource {
				continue
			}
			for _, id := range d.IDs {
				if _, ok := held[id]; !ok {
					held[id] = c.Namespace + "/" + c.Pod + "/" + c.Container
				}
			}
		}
	}
	return held
}
