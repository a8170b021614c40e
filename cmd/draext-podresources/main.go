// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-podresources prints what a kubelet reports about the
// devices of its pods' containers, read from the kubelet's PodResources API
// (List of podresources/v1 on the kubelet's unix socket), as one JSON array
// with one object per container:
//
//	[{"namespace":"ns","pod":"p","container":"app",
//	  "devices":[{"resource":"nvidia.com/gpu","ids":["GPU-..."]}],
//	  "dynamic":[{"claim":"c","claimNamespace":"ns","driver":"gpu.draext.dev",
//	    "pool":"node-1","device":"gpu-0","cdi":["gpu.draext.dev/gpu=..."]}]}]
//
// "devices" are the device plugins' devices, "dynamic" the DRA devices, one
// entry per allocated device of each claim. The e2e suite uses it to check
// what the kubelet reports under dynamic resources for a pod whose extended
// resource DRA serves. The kubelet fills in dynamic resources only with the
// alpha gate KubeletPodResourcesDynamicResources on (the local cluster's
// kubelets have it); without it "dynamic" is always empty.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "draext-podresources: %v\n", err)
		os.Exit(1)
	}
}

// run prints the containers as main does; stderr gets the flag usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("draext-podresources", flag.ContinueOnError)
	flags.SetOutput(stderr)
	socket := flags.String("socket", DefaultSocket, "the kubelet's PodResources unix socket (<kubelet root dir>/pod-resources/kubelet.sock)")
	timeout := flags.Duration("timeout", 10*time.Second, "how long to wait for the kubelet's answer")
	namespace := flags.String("namespace", "", "only pods of this namespace (default: all)")
	pod := flags.String("pod", "", "only pods of this name (default: all)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: use --namespace and --pod to filter", flags.Args())
	}
	if *timeout <= 0 {
		return fmt.Errorf("--timeout=%v: must be positive", *timeout)
	}
	resp, err := list(ctx, *socket, *timeout)
	if err != nil {
		return err
	}
	out, err := json.Marshal(Containers(resp, *namespace, *pod))
	if err != nil {
		return fmt.Errorf("encoding the answer of kubelet socket %s: %w", *socket, err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// list calls List on the kubelet PodResources socket.
func list(ctx context.Context, socket string, timeout time.Duration) (*podresourcesv1.ListPodResourcesResponse, error) {
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
