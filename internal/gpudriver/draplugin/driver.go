// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"

	"github.com/draext/draext/internal/gpudriver/gpu"
	"github.com/draext/draext/internal/gpudriver/state"
)

// Config is what the DRA driver needs to run on one node.
type Config struct {
	// DriverName is the DRA driver name (DefaultDriverName unless configured).
	DriverName string
	// NodeName is this node; it also names the driver's pool.
	NodeName string
	// Client publishes the ResourceSlices.
	Client kubernetes.Interface
	// Devices are the node's GPUs.
	Devices []gpu.Device
	// State prepares claims and keeps them across restarts.
	State *state.State
	// PluginDir holds the dra.sock socket the kubelet calls.
	PluginDir string
	// RegistrarDir is the kubelet's plugin registration directory.
	RegistrarDir string
	// SliceCheckPeriod is how often the driver asks the API server whether
	// its ResourceSlice is still there, in case its watch missed a delete.
	// Zero or less means DefaultSliceCheckPeriod.
	SliceCheckPeriod time.Duration
	// DevicePluginHolders, when set, asks the kubelet which pods it runs
	// and which device IDs a device plugin gave their containers for the
	// resource (PodResources List). The GPUs of those IDs are left out of
	// the ResourceSlice, and refused in Prepare, until they are free: a
	// node that moved from the device plugin to DRA with pods running
	// never gives a GPU out twice. An answer counts only once it lists
	// every pod of DevicePluginPods (see heldGPUs); the driver publishes
	// nothing before that, and refuses every GPU in Prepare.
	DevicePluginHolders func(ctx context.Context) (KubeletAnswer, error)
	// DevicePluginPods returns the pods (namespace/name) that may hold
	// device-plugin GPUs, from the API server: bound to this node, not
	// finished, asking for the resource (WatchNodePods). Required with
	// DevicePluginHolders.
	DevicePluginPods func(ctx context.Context) (map[string]bool, error)
	// MIGParent returns the UUID of the GPU of a MIG device, from the MIG
	// device's UUID (gpu.MIGParent). Nil: device-plugin IDs MIG-<uuid>
	// cannot be mapped, and withhold every GPU.
	MIGParent func(migUUID string) (string, error)
	// IgnoreForeignGPUs makes device-plugin IDs that are GPU UUIDs of GPUs
	// this node does not have count for nothing, instead of withholding
	// every GPU: for hosts whose kubelets share one device-plugin socket
	// (the local cluster), where one node's kubelet may give out another
	// node's GPUs.
	IgnoreForeignGPUs bool
	// HeldCheckPeriod is how often DevicePluginHolders is asked again.
	// Zero or less means DefaultHeldCheckPeriod.
	HeldCheckPeriod time.Duration
}

// DefaultHeldCheckPeriod is how often a driver asks by default which GPUs
// device-plugin containers still hold.
const DefaultHeldCheckPeriod = 10 * time.Second

// heldRetry is how long the driver waits between attempts to learn the
// GPUs that device-plugin containers hold, before it first publishes.
const heldRetry = 2 * time.Second

// DefaultSliceCheckPeriod is how often a driver checks by default that its
// ResourceSlice exists: one LIST per node, limited to that node's slices of
// this driver, twice a minute.
const DefaultSliceCheckPeriod = 30 * time.Second

// Driver is a running DRA kubelet plugin.
type Driver struct {
	cfg    Config
	byName map[string]gpu.Device
	helper *kubeletplugin.Helper
	// held knows which GPUs device-plugin containers may hold; nil
	// without DevicePluginHolders.
	held *heldGPUs

	pubMu sync.Mutex
	pub   *publisher // nil until the first publish

	mu        sync.Mutex
	unhealthy map[string]string // GPU UUID -> why it is unhealthy (gpu.HealthEvent.String)

	cancel context.CancelFunc // ends the watch of held GPUs
	wg     sync.WaitGroup
}

var _ kubeletplugin.DRAPlugin = &Driver{}

// Start registers the plugin with the kubelet and publishes the GPUs.
func Start(ctx context.Context, cfg Config) (*Driver, error) {
	if cfg.DevicePluginHolders != nil && cfg.DevicePluginPods == nil {
		return nil, errors.New("DevicePluginHolders needs DevicePluginPods: an answer of the kubelet can only be trusted against the pods that may hold GPUs")
	}
	d := &Driver{cfg: cfg, byName: map[string]gpu.Device{}, unhealthy: map[string]string{}, cancel: func() {}}
	for _, dev := range cfg.Devices {
		d.byName[SliceDeviceName(dev)] = dev
	}
	if cfg.DevicePluginHolders != nil {
		ids := newDeviceIDs(cfg.Devices, cfg.MIGParent, cfg.IgnoreForeignGPUs)
		d.held = newHeldGPUs(cfg.Devices, ids, cfg.DevicePluginHolders, cfg.DevicePluginPods)
	}
	helper, err := kubeletplugin.Start(ctx, d,
		kubeletplugin.DriverName(cfg.DriverName),
		kubeletplugin.KubeClient(cfg.Client),
		kubeletplugin.NodeName(cfg.NodeName),
		kubeletplugin.PluginDataDirectoryPath(cfg.PluginDir),
		kubeletplugin.RegistrarDirectoryPath(cfg.RegistrarDir),
	)
	if err != nil {
		return nil, fmt.Errorf("start kubelet plugin: %w", err)
	}
	d.helper = helper
	if d.held == nil {
		if err := d.publish(ctx); err != nil {
			helper.Stop()
			return nil, err
		}
		klog.FromContext(ctx).Info("DRA driver started", "driver", cfg.DriverName, "node", cfg.NodeName, "gpus", len(cfg.Devices))
		return d, nil
	}
	// Registered first, so that the kubelet can prepare the claims of
	// running pods as soon as the kubelet has answered in full (a
	// restarted kubelet retries a failed prepare only at its next pod
	// sync, a minute later); the GPUs are published once it is known
	// which ones device-plugin containers hold. Until then Prepare refuses
	// every GPU, and Start does not wait for it: the health service comes
	// up, and the driver stays live while the kubelet catches up.
	period := cfg.HeldCheckPeriod
	if period <= 0 {
		period = DefaultHeldCheckPeriod
	}
	watchCtx, cancel := context.WithCancel(ctx)
	d.cancel = cancel
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.held.run(watchCtx, period, func() error { return d.publish(watchCtx) })
	}()
	klog.FromContext(ctx).Info("DRA driver started; publishing once the kubelet has told which GPUs device-plugin containers hold",
		"driver", cfg.DriverName, "node", cfg.NodeName, "gpus", len(cfg.Devices))
	return d, nil
}

// publish publishes d.resources: it starts the publisher the first time,
// and updates it afterwards.
func (d *Driver) publish(ctx context.Context) error {
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	if d.pub != nil {
		d.pub.update(d.resources)
		return nil
	}
	checkPeriod := d.cfg.SliceCheckPeriod
	if checkPeriod <= 0 {
		checkPeriod = DefaultSliceCheckPeriod
	}
	pub, err := startPublisher(ctx, d.cfg.Client, d.cfg.DriverName, d.cfg.NodeName, checkPeriod, d.resources())
	if err != nil {
		return fmt.Errorf("publish ResourceSlices: %w", err)
	}
	d.pub = pub
	return nil
}

// republish publishes d.resources again if the driver publishes already.
func (d *Driver) republish() {
	d.pubMu.Lock()
	defer d.pubMu.Unlock()
	if d.pub != nil {
		d.pub.update(d.resources)
	}
}

// Stop stops publishing and unregisters the plugin. The ResourceSlices
// stay: the kubelet removes them when the driver does not come back.
func (d *Driver) Stop() {
	d.cancel()
	d.wg.Wait()
	d.pubMu.Lock()
	if d.pub != nil {
		d.pub.stop(errors.New("DRA driver was stopped"))
	}
	d.pubMu.Unlock()
	d.helper.Stop()
}

// Helper returns the kubeletplugin helper, e.g. for its registration status.
func (d *Driver) Helper() *kubeletplugin.Helper {
	return d.helper
}

// resources are the node's GPUs without the unhealthy ones and those that
// device-plugin containers may hold (d.held).
func (d *Driver) resources() resourceslice.DriverResources {
	withheld := d.held.withheld()
	d.mu.Lock()
	defer d.mu.Unlock()
	leaveOut := make(map[string]bool, len(d.unhealthy)+len(withheld))
	for uuid := range d.unhealthy {
		leaveOut[uuid] = true
	}
	for uuid := range withheld {
		leaveOut[uuid] = true
	}
	return Resources(d.cfg.NodeName, d.cfg.Devices, leaveOut)
}

// MarkUnhealthy takes a GPU (all GPUs when the event names none) out of the
// published slice, so that it is no longer allocated, and refuses to prepare
// it from now on. Claims already prepared keep running: the workload decides
// what an XID error means to it.
func (d *Driver) MarkUnhealthy(ctx context.Context, e gpu.HealthEvent) error {
	d.mu.Lock()
	for _, dev := range d.cfg.Devices {
		if e.UUID == "" || e.UUID == dev.UUID {
			d.unhealthy[dev.UUID] = e.String()
		}
	}
	d.mu.Unlock()
	d.republish()
	return nil
}

// PrepareResourceClaims implements kubeletplugin.DRAPlugin.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	logger := klog.FromContext(ctx)
	result := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, claim := range claims {
		res, err := d.prepare(ctx, claim)
		if err != nil {
			logger.Error(err, "Preparing claim failed", "claim", klog.KObj(claim), "uid", claim.UID)
			res = kubeletplugin.PrepareResult{Err: err}
		} else {
			logger.Info("Prepared claim", "claim", klog.KObj(claim), "uid", claim.UID, "devices", deviceNames(res))
		}
		result[claim.UID] = res
	}
	return result, nil
}

// deviceNames lists the prepared devices as <pool>/<device>, for the log.
func deviceNames(res kubeletplugin.PrepareResult) []string {
	names := make([]string, 0, len(res.Devices))
	for _, d := range res.Devices {
		names = append(names, d.PoolName+"/"+d.DeviceName)
	}
	return names
}

func (d *Driver) prepare(ctx context.Context, claim *resourceapi.ResourceClaim) (kubeletplugin.PrepareResult, error) {
	requests, results, err := allocatedGPUs(claim, d.cfg.DriverName, d.cfg.NodeName, d.byName)
	if err != nil {
		return kubeletplugin.PrepareResult{}, err
	}
	if len(results) == 0 {
		return kubeletplugin.PrepareResult{Devices: []kubeletplugin.Device{}}, nil
	}
	if err := d.checkHealthy(requests); err != nil {
		return kubeletplugin.PrepareResult{}, fmt.Errorf("claim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	ids, err := d.cfg.State.Prepare(ctx, string(claim.UID), requests)
	if err != nil {
		return kubeletplugin.PrepareResult{}, err
	}
	return prepareResult(results, ids), nil
}

// checkHealthy refuses GPUs that are unhealthy, and those that
// device-plugin containers may hold (d.held).
func (d *Driver) checkHealthy(requests map[string][]string) error {
	var errs []error
	for request, uuids := range requests {
		for _, uuid := range uuids {
			d.mu.Lock()
			why, bad := d.unhealthy[uuid]
			d.mu.Unlock()
			if bad {
				errs = append(errs, fmt.Errorf("request %q: GPU %s is unhealthy (%s)", request, uuid, why))
			}
			if why, held := d.held.refusal(uuid); held {
				errs = append(errs, fmt.Errorf("request %q: GPU %s %s", request, uuid, why))
			}
		}
	}
	return errors.Join(errs...)
}

// UnprepareResourceClaims implements kubeletplugin.DRAPlugin.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	logger := klog.FromContext(ctx)
	result := make(map[types.UID]error, len(claims))
	for _, claim := range claims {
		ref := klog.KRef(claim.Namespace, claim.Name)
		err := d.cfg.State.Unprepare(ctx, string(claim.UID))
		if err != nil {
			logger.Error(err, "Unpreparing claim failed", "claim", ref, "uid", claim.UID)
		} else {
			logger.Info("Unprepared claim", "claim", ref, "uid", claim.UID)
		}
		result[claim.UID] = err
	}
	return result, nil
}
