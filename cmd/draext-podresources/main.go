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
	"os"
	"time"

	"github.com/draext/draext/internal/podresources"
)

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
	socket := flags.String("socket", podresources.DefaultSocket, "the kubelet's PodResources unix socket (<kubelet root dir>/pod-resources/kubelet.sock)")
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
	resp, err := podresources.List(ctx, *socket, *timeout)
	if err != nil {
		return err
	}
	out, err := json.Marshal(podresources.Containers(resp, *namespace, *pod))
	if err != nil {
		return fmt.Errorf("encoding the answer of kubelet socket %s: %w", *socket, err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
