// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package draplugin

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	// DevicePluginHolders, when set, returns the GPUs (by UUID) that
	// containers still hold through the device plugin, with who holds
	// each (namespace/pod/container). Such GPUs are left out of the
	// ResourceSlice, and refused in Prepare, until they are free: a node
	// that moved from the device plugin to DRA with pods running never
	// gives a GPU out twice. The driver publishes nothing before the first
	// successful answer.
	DevicePluginHolders func(ctx context.Context) (map[string]string, error)
	// HeldCheckPeriod is how often DevicePluginHolders is asked again.
	// Zero or less means DefaultHeldCheckPeriod.
	HeldCheckPeriod time.Duration
}

// DefaultHeldCheckPeriod is how often a driver asks by default which GPUs
// device-plugin containers still hold.
const DefaultHeldCheckPeriod = 10 * time.Second

// heldRetry is how long Start waits between attempts to learn the GPUs
// that device-plugin containers hold.
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
	pub    *publisher

	mu        sync.Mutex
	unhealthy map[string]string // GPU UUID -> why it is unhealthy (gpu.HealthEvent.String)
	held      map[string]string // GPU UUID -> the device-plugin container that holds it

	cancel context.CancelFunc // ends the watch of held GPUs
	wg     sync.WaitGroup
}

var _ kubeletplugin.DRAPlugin = &Driver{}

// Start registers the plugin with the kubelet and publishes the GPUs.
func Start(ctx context.Context, cfg Config) (*Driver, error) {
	d := &Driver{cfg: cfg, byName: map[string]gpu.Device{}, unhealthy: map[string]string{}, held: map[string]string{}, cancel: func() {}}
	for _, dev := range cfg.Devices {
		d.byName[SliceDeviceName(dev)] = dev
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
	// Registered first, so that the kubelet can prepare the claims of
	// running pods at once (a restarted kubelet retries a failed prepare
	// only at its next pod sync, a minute later); the GPUs are published
	// once it is known which ones device-plugin containers hold. Claims
	// prepared meanwhile were allocated from slices that left those out.
	if cfg.DevicePluginHolders != nil {
		if err := d.learnHeld(ctx); err != nil {
			helper.Stop()
			return nil, err
		}
	}
	checkPeriod := cfg.SliceCheckPeriod
	if checkPeriod <= 0 {
		checkPeriod = DefaultSliceCheckPeriod
	}
	pub, err := startPublisher(ctx, cfg.Client, cfg.DriverName, cfg.NodeName, checkPeriod, d.resources())
	if err != nil {
		helper.Stop()
		return nil, fmt.Errorf("publish ResourceSlices: %w", err)
	}
	d.pub = pub
	if cfg.DevicePluginHolders != nil {
		period := cfg.HeldCheckPeriod
		if period <= 0 {
			period = DefaultHeldCheckPeriod
		}
		watchCtx, cancel := context.WithCancel(ctx)
		d.cancel = cancel
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.watchHeld(watchCtx, period)
		}()
	}
	klog.FromContext(ctx).Info("DRA driver started", "driver", cfg.DriverName, "node", cfg.NodeName, "gpus", len(cfg.Devices))
	return d, nil
}

// learnHeld asks which GPUs device-plugin containers hold until it gets an
// answer, so that the first ResourceSlice already leaves them out.
func (d *Driver) learnHeld(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	for {
		held, err := d.cfg.DevicePluginHolders(ctx)
		if err == nil {
			d.setHeld(logger, held)
			return nil
		}
		logger.Error(err, "Cannot tell which GPUs device-plugin containers hold; publishing none until then", "retryAfter", heldRetry)
		select {
		case <-ctx.Done():
			return fmt.Errorf("learning which GPUs device-plugin containers hold: %w", context.Cause(ctx))
		case <-time.After(heldRetry):
		}
	}
}

// watchHeld asks every period which GPUs device-plugin containers hold and
// publishes the GPUs they gave back. When it cannot tell, it keeps what it
// knew: a GPU is published only once it is known to be free.
func (d *Driver) watchHeld(ctx context.Context, period time.Duration) {
	logger := klog.FromContext(ctx)
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		held, err := d.cfg.DevicePluginHolders(ctx)
		if err != nil {
			if ctx.Err() == nil {
				logger.Error(err, "Cannot tell which GPUs device-plugin containers hold; keeping the last answer")
			}
			continue
		}
		if d.setHeld(logger, held) {
			d.pub.update(d.resources)
		}
	}
}

// setHeld records the GPUs of this node that device-plugin containers hold
// (IDs of other devices are ignored) and reports whether that changed.
func (d *Driver) setHeld(logger klog.Logger, held map[string]string) bool {
	mine := make(map[string]string, len(held))
	for _, dev := range d.cfg.Devices {
		if holder, ok := held[dev.UUID]; ok {
			mine[dev.UUID] = holder
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if maps.Equal(mine, d.held) {
		return false
	}
	for uuid, holder := range d.held {
		if _, still := mine[uuid]; !still {
			logger.Info("GPU is no longer held by a device-plugin container, publishing it", "gpu", uuid, "heldBy", holder)
		}
	}
	for uuid, holder := range mine {
		if _, before := d.held[uuid]; !before {
			logger.Info("GPU is held by a device-plugin container, leaving it out of the ResourceSlice", "gpu", uuid, "heldBy", holder)
		}
	}
	d.held = mine
	return true
}

// Stop stops publishing and unregisters the plugin. The ResourceSlices
// stay: the kubelet removes them when the driver does not come back.
func (d *Driver) Stop() {
	d.cancel()
	d.wg.Wait()
	d.pub.stop(errors.New("DRA driver was stopped"))
	d.helper.Stop()
}

// Helper returns the kubeletplugin helper, e.g. for its registration status.
func (d *Driver) Helper() *kubeletplugin.Helper {
	return d.helper
}

// resources are the node's GPUs without the unhealthy ones and those that
// device-plugin containers hold.
func (d *Driver) resources() resourceslice.DriverResources {
	d.mu.Lock()
	defer d.mu.Unlock()
	leaveOut := make(map[string]bool, len(d.unhealthy)+len(d.held))
	for uuid := range d.unhealthy {
		leaveOut[uuid] = true
	}
	for uuid := range d.held {
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
	d.pub.update(d.resources)
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

func (d *Driver) checkHealthy(requests map[string][]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for request, uuids := range requests {
		for _, uuid := range uuids {
			if why, bad := d.unhealthy[uuid]; bad {
				errs = append(errs, fmt.Errorf("request %q: GPU %s is unhealthy (%s)", request, uuid, why))
			}
			if holder, held := d.held[uuid]; held {
				errs = append(errs, fmt.Errorf("request %q: GPU %s is still held by device-plugin container %s", request, uuid, holder))
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
