// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command stockdriver is a minimal mock-GPU DRA driver built only on stock,
// unpatched published modules (k8s.io/dynamic-resource-allocation,
// k8s.io/client-go, k8s.io/api): it shows that a driver written for
// upstream Kubernetes serves KEP-5004 extended resources on draext's
// v1.33 kubelet and kube-apiserver unchanged.
//
// It registers with the kubelet through the kubeletplugin helper, publishes
// one ResourceSlice with --devices mock GPUs (gpu-0, gpu-1, ...) in a pool
// named after the node, and prepares a claim by writing one CDI spec with
// one CDI device per allocated GPU. Each CDI device sets
// MOCK_GPU_<DEVICE>=<device> (MOCK_GPU_GPU_0=gpu-0) and the spec sets
// MOCK_GPU_DRIVER=<driver name> for every container that gets one of its
// devices: one variable per GPU, so that the edits of several devices given
// to one container compose (a single list variable would keep only the last
// device's value). Unprepare removes the spec.
//
// One source builds at two library versions: go.mod holds v0.34.x, and
// go.v037.mod the newest the module proxy serves, used with
// "-modfile=go.v037.mod -tags stockdra_v037" (the tag selects
// library_v037.go, which has what that version's DRAPlugin interface adds).
// Both serve the DRA gRPC API v1beta1 next to v1, which is what a v1.33
// kubelet speaks, and write ResourceSlices through resource.k8s.io/v1,
// falling back to v1beta2 and v1beta1 where v1 is not served.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"
)

// defaultDriverName is the driver of the mock GPUs. It is not the example
// driver's gpu.draext.dev (nor contains it: scripts grep for that name).
const defaultDriverName = "mock-gpu.stock.draext.dev"

// config is what the flags set.
type config struct {
	driverName    string
	nodeName      string
	devices       int
	cdiDir        string
	pluginDataDir string
	registrarDir  string
	kubeconfig    string
}

func main() {
	flags := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	var cfg config
	flags.StringVar(&cfg.driverName, "driver-name", defaultDriverName, "DRA driver name of the mock GPUs")
	flags.StringVar(&cfg.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of the node (default $NODE_NAME)")
	flags.IntVar(&cfg.devices, "devices", 2, "number of mock GPUs to publish")
	flags.StringVar(&cfg.cdiDir, "cdi-dir", "/var/run/cdi", "CDI spec directory that the node's container runtime reads")
	flags.StringVar(&cfg.pluginDataDir, "plugin-data-dir", "", "directory of the DRA socket (default <kubelet plugins dir>/<driver name>)")
	flags.StringVar(&cfg.registrarDir, "registrar-dir", kubeletplugin.KubeletRegistryDir, "the kubelet's plugin registration directory")
	flags.StringVar(&cfg.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster configuration)")
	klog.InitFlags(flags)
	_ = flags.Parse(os.Args[1:]) // ExitOnError

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := klog.LoggerWithName(klog.Background(), "stockdriver")
	ctx = klog.NewContext(ctx, logger)
	if err := run(ctx, cfg); err != nil {
		logger.Error(err, "Driver failed")
		klog.FlushAndExit(klog.ExitFlushTimeout, 1)
	}
}

// run builds the client and serves until ctx ends or a fatal error.
func run(ctx context.Context, cfg config) error {
	var restConfig *rest.Config
	var err error
	if cfg.kubeconfig != "" {
		restConfig, err = clientcmd.BuildConfigFromFlags("", cfg.kubeconfig)
	} else {
		restConfig, err = rest.InClusterConfig()
	}
	if err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	helper, err := start(ctx, cfg, client, cancel)
	if err != nil {
		return err
	}
	defer helper.Stop()
	<-ctx.Done()
	if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
		return err
	}
	klog.FromContext(ctx).Info("Stopping")
	return nil
}

// start registers the driver with the kubelet and publishes its devices.
// A fatal background error cancels ctx through cancel.
func start(ctx context.Context, cfg config, client kubernetes.Interface, cancel context.CancelCauseFunc) (*kubeletplugin.Helper, error) {
	logger := klog.FromContext(ctx)
	if cfg.nodeName == "" {
		return nil, errors.New("--node-name (or $NODE_NAME) is required")
	}
	if cfg.devices < 1 || cfg.devices > maxDevices {
		return nil, fmt.Errorf("--devices=%d: use 1 to %d", cfg.devices, maxDevices)
	}
	if cfg.pluginDataDir == "" {
		cfg.pluginDataDir = filepath.Join(kubeletplugin.KubeletPluginsDir, cfg.driverName)
	}
	// The helper listens in these directories; it does not create them.
	for _, dir := range []string{cfg.pluginDataDir, cfg.registrarDir, cfg.cdiDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create directory: %w", err)
		}
	}
	d := &driver{
		name:    cfg.driverName,
		node:    cfg.nodeName,
		devices: deviceNames(cfg.devices),
		cdi:     cdiWriter{dir: cfg.cdiDir, driver: cfg.driverName},
		fatal:   cancel,
	}
	library := libraryVersion()
	logger.Info("Starting", "driver", d.name, "node", d.node, "devices", cfg.devices, "library", library,
		"pluginDataDir", cfg.pluginDataDir, "registrarDir", cfg.registrarDir, "cdiDir", cfg.cdiDir)
	opts := append([]kubeletplugin.Option{
		kubeletplugin.DriverName(d.name),
		kubeletplugin.NodeName(d.node),
		kubeletplugin.KubeClient(client),
		kubeletplugin.PluginDataDirectoryPath(cfg.pluginDataDir),
		kubeletplugin.RegistrarDirectoryPath(cfg.registrarDir),
	}, versionOptions()...)
	helper, err := kubeletplugin.Start(ctx, d, opts...)
	if err != nil {
		return nil, fmt.Errorf("start kubelet plugin: %w", err)
	}
	if err := helper.PublishResources(ctx, driverResources(d.node, cfg.devices, library)); err != nil {
		helper.Stop()
		return nil, fmt.Errorf("publish ResourceSlice: %w", err)
	}
	return helper, nil
}

// libraryModule is the module whose version the driver reports.
const libraryModule = "k8s.io/dynamic-resource-allocation"

// libraryVersion is the version of libraryModule built in, "unknown" when
// the binary has no module information.
func libraryVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return moduleVersion(info.Deps, libraryModule)
}

// moduleVersion is the version of path among deps, after replacements.
func moduleVersion(deps []*debug.Module, path string) string {
	for _, m := range deps {
		if m.Path != path {
			continue
		}
		if m.Replace != nil {
			return m.Replace.Version
		}
		return m.Version
	}
	return "unknown"
}
