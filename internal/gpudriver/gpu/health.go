// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"k8s.io/klog/v2"
)

// applicationXIDs are XID errors that an application causes (an illegal
// memory access, a kernel that was killed, ...). The GPU itself is fine, so
// they do not make it unhealthy.
var applicationXIDs = map[uint64]bool{13: true, 31: true, 43: true, 45: true, 68: true, 109: true}

// healthWaitTimeout bounds one nvmlEventSetWait so that a cancelled context
// is noticed promptly.
const healthWaitTimeout = 2 * time.Second

// HealthEvent says that a GPU became unhealthy.
type HealthEvent struct {
	// UUID of the GPU; empty when NVML did not name one, which means every
	// watched GPU is affected.
	UUID string
	// XID is the NVIDIA XID error code; 0 when the GPU is reported for
	// another reason.
	XID uint64
	// Reason says why the GPU is reported when it is not an XID error: its
	// health cannot be watched, or it is lost.
	Reason string
}

// String says why the GPU is unhealthy, for errors and logs.
func (e HealthEvent) String() string {
	if e.Reason != "" {
		return e.Reason
	}
	return fmt.Sprintf("XID %d", e.XID)
}

// Backoff of the retries after a failed nvmlEventSetWait.
const (
	healthRetryInitial = 100 * time.Millisecond
	healthRetryMax     = 30 * time.Second
)

// WatchHealth registers for critical XID events of the given GPUs and calls
// unhealthy for each event that means a GPU can no longer be trusted, until
// ctx is done. It fails closed, GPU by GPU:
//
//   - A GPU whose events cannot be registered (no handle, a failed
//     registration) is reported unhealthy at once, with the reason; the
//     others are watched.
//   - A GPU that does not report XID events at all is unmonitored: it is
//     logged and served as it is, since nothing says it is broken.
//   - When the event set cannot be created, every GPU is reported (an event
//     without UUID) and the error is returned.
//   - A lost GPU while waiting reports every GPU; other wait errors are
//     logged and retried with backoff.
//
// lib must be initialized (nvmlInit) by the caller for the whole watch.
func WatchHealth(ctx context.Context, lib nvml.Interface, uuids []string, unhealthy func(HealthEvent)) error {
	logger := klog.FromContext(ctx)
	set, ret := lib.EventSetCreate()
	if err := check("EventSetCreate", ret); err != nil {
		logger.Error(err, "GPU health cannot be watched, marking every GPU unhealthy")
		unhealthy(HealthEvent{Reason: "health cannot be watched: " + err.Error()})
		return err
	}
	defer func() { _ = set.Free() }()

	watched := 0
	for _, uuid := range uuids {
		err := register(lib, set, uuid)
		switch {
		case errors.Is(err, errNoXIDEvents):
			logger.Info("GPU does not report XID events, its health is unmonitored", "uuid", uuid)
		case err != nil:
			logger.Error(err, "GPU health cannot be watched, marking the GPU unhealthy", "uuid", uuid)
			unhealthy(HealthEvent{UUID: uuid, Reason: "health cannot be watched: " + err.Error()})
		default:
			watched++
		}
	}
	logger.V(2).Info("Watching GPU health", "gpus", watched)

	retry := healthRetryInitial
	for ctx.Err() == nil {
		data, ret := set.Wait(uint32(healthWaitTimeout.Milliseconds()))
		switch ret {
		case nvml.SUCCESS:
			retry = healthRetryInitial
		case nvml.ERROR_TIMEOUT:
			retry = healthRetryInitial
			continue
		case nvml.ERROR_GPU_IS_LOST:
			err := check("EventSetWait", ret)
			logger.Error(err, "A GPU is lost, marking every GPU unhealthy")
			unhealthy(HealthEvent{Reason: "a GPU is lost: " + err.Error()})
			return nil
		default:
			logger.Error(check("EventSetWait", ret), "Waiting for GPU health events failed, retrying", "retryIn", retry)
			select {
			case <-ctx.Done():
			case <-time.After(retry):
			}
			retry = min(2*retry, healthRetryMax)
			continue
		}
		if data.EventType != nvml.EventTypeXidCriticalError {
			continue
		}
		var uuid string
		if data.Device != nil {
			var ret nvml.Return
			uuid, ret = data.Device.GetUUID()
			if ret != nvml.SUCCESS {
				uuid = ""
			}
		}
		if applicationXIDs[data.EventData] {
			logger.V(2).Info("Application XID error, GPU stays healthy", "uuid", uuid, "xid", data.EventData)
			continue
		}
		logger.Info("Critical XID error, marking GPU unhealthy", "uuid", uuid, "xid", data.EventData)
		unhealthy(HealthEvent{UUID: uuid, XID: data.EventData})
	}
	return nil
}

// errNoXIDEvents: the GPU does not report XID events.
var errNoXIDEvents = errors.New("the GPU does not report XID events")

// register adds the critical XID events of one GPU to set.
func register(lib nvml.Interface, set nvml.EventSet, uuid string) error {
	dev, ret := lib.DeviceGetHandleByUUID(uuid)
	if err := check(fmt.Sprintf("DeviceGetHandleByUUID(%s)", uuid), ret); err != nil {
		return err
	}
	supported, ret := dev.GetSupportedEventTypes()
	if ret == nvml.ERROR_NOT_SUPPORTED || (ret == nvml.SUCCESS && supported&nvml.EventTypeXidCriticalError == 0) {
		return errNoXIDEvents
	}
	if err := check(fmt.Sprintf("DeviceGetSupportedEventTypes(%s)", uuid), ret); err != nil {
		return err
	}
	return check(fmt.Sprintf("DeviceRegisterEvents(%s)", uuid), dev.RegisterEvents(nvml.EventTypeXidCriticalError, set))
}
