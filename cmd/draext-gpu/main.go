// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-gpu is the example NVIDIA GPU driver of draext. It discovers
// GPUs through NVML (or a mock) and serves them to pods either as a DRA
// driver (--mode=dra: ResourceSlices, claim preparation, CDI) or as a classic
// device plugin (--mode=device-plugin: an extended resource such as
// nvidia.com/gpu). One node runs one of the two modes for its GPUs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/draext/draext/internal/gpudriver/cdi"
	"github.com/draext/draext/internal/gpudriver/deviceplugin"
	"github.com/draext/draext/internal/gpudriver/draplugin"
	"github.com/draext/draext/internal/gpudriver/gpu"
	"github.com/draext/draext/internal/gpudriver/nodelock"
	"github.com/draext/draext/internal/gpudriver/state"
	"github.com/draext/draext/internal/podresources"
)

type options struct {
	mode            string
	nodeName        string
	nvml            string
	driverRoot      string
	devRoot         string
	stateDir        string
	cdiRoot         string
	driverName      string
	pluginsDir      string
	registrarDir    string
	devicePluginDir string
	resourceName    string
	// podResourcesSocket enables withholding GPUs that device-plugin
	// containers hold (DRA mode).
	podResourcesSocket string
	// ignoreForeignGPUs: device-plugin IDs of other nodes' GPUs count for
	// nothing (a host whose kubelets share one device-plugin socket).
	ignoreForeignGPUs bool
	sliceCheckPeriod  time.Duration
	healthAddress     string
	kubeconfig        string
	discoverOnly      bool
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Environ(), os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		if !errors.As(err, &reportedError{}) {
			fmt.Fprintln(os.Stderr, "draext-gpu:", err)
		}
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.Background().WithName("draext-gpu")
	ctx = klog.NewContext(ctx, logger)
	if err := run(ctx, o); err != nil {
		logger.Error(err, "Exiting")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}

func joinProfiles() string {
	s := ""
	for i, p := range gpu.MockProfiles() {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s
}

func run(ctx context.Context, o options) error {
	if o.mode != "dra" && o.mode != "device-plugin" {
		return fmt.Errorf("--mode=%q: use dra or device-plugin", o.mode)
	}
	if o.nodeName == "" && !o.discoverOnly {
		return errors.New("--node-name (or $" + flagEnvName("node-name") + ", or $NODE_NAME) is required")
	}
	lib, err := gpu.Open(o.nvml, o.driverRoot, o.nodeName)
	if err != nil {
		return err
	}
	devices, err := gpu.Discover(ctx, lib)
	if err != nil {
		return fmt.Errorf("GPU discovery: %w", err)
	}
	if o.discoverOnly {
		return printDiscovery(o, devices)
	}

	lock, err := nodelock.Acquire(filepath.Join(o.stateDir, "gpus.lock"), o.mode)
	if err != nil {
		return err
	}
	defer func() {
		if err := lock.Release(); err != nil {
			klog.FromContext(ctx).Error(err, "Releasing the GPU lock failed")
		}
	}()

	if o.mode == "device-plugin" {
		return runDevicePlugin(ctx, o, lib, devices)
	}
	return runDRA(ctx, o, lib, devices)
}

func runDRA(ctx context.Context, o options, lib nvml.Interface, devices []gpu.Device) error {
	if o.sliceCheckPeriod <= 0 {
		return fmt.Errorf("--slice-check-period=%v: must be positive", o.sliceCheckPeriod)
	}
	config, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	writer := &cdi.Writer{Root: o.cdiRoot, DevRoot: o.devRoot}
	st, err := state.New(ctx, devices, writer, filepath.Join(o.stateDir, "checkpoint.json"))
	if err != nil {
		return err
	}
	pluginDir := filepath.Join(o.pluginsDir, o.driverName)
	for _, dir := range []string{pluginDir, o.registrarDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
	}
	cfg := draplugin.Config{
		DriverName: o.driverName, NodeName: o.nodeName, Client: client,
		Devices: devices, State: st, PluginDir: pluginDir, RegistrarDir: o.registrarDir,
		SliceCheckPeriod: o.sliceCheckPeriod,
	}
	if o.podResourcesSocket != "" {
		// An answer of the kubelet counts once it lists every pod that the
		// API server says may hold device-plugin GPUs here.
		pods, err := draplugin.WatchNodePods(ctx, client, o.nodeName, o.resourceName)
		if err != nil {
			return err
		}
		defer pods.Stop()
		cfg.DevicePluginPods = pods.Pods
		cfg.DevicePluginHolders = func(ctx context.Context) (draplugin.KubeletAnswer, error) {
			resp, err := podresources.List(ctx, o.podResourcesSocket, 10*time.Second)
			if err != nil {
				return draplugin.KubeletAnswer{}, err
			}
			return kubeletAnswer(resp, o.resourceName), nil
		}
		cfg.MIGParent = func(migUUID string) (string, error) { return gpu.MIGParent(lib, migUUID) }
		cfg.IgnoreForeignGPUs = o.ignoreForeignGPUs
	}
	drv, err := draplugin.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer drv.Stop()
	if o.healthAddress != "" {
		hc, err := draplugin.StartHealthcheck(ctx, o.healthAddress, o.driverName, o.registrarDir, pluginDir)
		if err != nil {
			return err
		}
		defer hc.Stop()
	}
	go watchHealth(ctx, lib, devices, func(e gpu.HealthEvent) {
		if err := drv.MarkUnhealthy(ctx, e); err != nil {
			klog.FromContext(ctx).Error(err, "Republishing without the unhealthy GPU failed")
		}
	})
	<-ctx.Done()
	klog.FromContext(ctx).Info("Shutting down")
	return nil
}

func runDevicePlugin(ctx context.Context, o options, lib nvml.Interface, devices []gpu.Device) error {
	p, err := deviceplugin.New(deviceplugin.Config{
		ResourceName: o.resourceName, Devices: devices, PluginDir: o.devicePluginDir,
		Endpoint: "draext-gpu.sock", DevRoot: o.devRoot,
	})
	if err != nil {
		return err
	}
	go watchHealth(ctx, lib, devices, p.MarkUnhealthy)
	return p.Run(ctx)
}

// watchHealth reports XID errors until ctx is done. A failure to watch is
// logged, not fatal: the GPUs keep being served as they are.
func watchHealth(ctx context.Context, lib nvml.Interface, devices []gpu.Device, unhealthy func(gpu.HealthEvent)) {
	logger := klog.FromContext(ctx)
	if ret := lib.Init(); ret != nvml.SUCCESS {
		logger.Error(errors.New(nvml.ErrorString(ret)), "NVML init for health events failed, GPU health is not watched")
		return
	}
	defer func() { _ = lib.Shutdown() }()
	uuids := make([]string, len(devices))
	for i, d := range devices {
		uuids[i] = d.UUID
	}
	if err := gpu.WatchHealth(ctx, lib, uuids, unhealthy); err != nil {
		logger.Error(err, "GPU health is no longer watched")
	}
}

// kubeletAnswer reduces a PodResources List answer to the pods in it and
// the device-plugin devices of the resource; the driver maps the device IDs
// to its GPUs.
func kubeletAnswer(resp *podresourcesv1.ListPodResourcesResponse, resource string) draplugin.KubeletAnswer {
	answer := draplugin.KubeletAnswer{
		Pods:    map[string]bool{},
		Holders: podresources.DevicePluginHolders(podresources.Containers(resp, "", ""), resource),
	}
	for _, p := range resp.GetPodResources() {
		if p != nil {
			answer.Pods[p.GetNamespace()+"/"+p.GetName()] = true
		}
	}
	return answer
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("not in a pod (%w): pass --kubeconfig to run as a host process", err)
	}
	return config, nil
}

func printDiscovery(o options, devices []gpu.Device) error {
	for _, d := range devices {
		fmt.Printf("%s index=%d minor=%d uuid=%s product=%q arch=%s cc=%s driver=%s memory=%d\n",
			draplugin.SliceDeviceName(d), d.Index, d.Minor, d.UUID, d.ProductName, d.Architecture, d.CUDAComputeCapability, d.DriverVersion, d.MemoryBytes)
	}
	if len(devices) == 0 {
		return nil
	}
	writer := &cdi.Writer{Root: o.cdiRoot, DevRoot: o.devRoot}
	spec, _, err := writer.Spec("discover", map[string][]gpu.Device{"all": devices})
	if err != nil {
		return err
	}
	out, err := jsonIndent(spec)
	if err != nil {
		return err
	}
	fmt.Println(out)
	return nil
}
