package gpu

import (
	"context"
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
	// XID is the NVIDIA XID error code.
	XID uint64
}

// WatchHealth registers for critical XID events of the given GPUs and calls
// unhealthy for each event that means a GPU can no longer be trusted, until
// ctx is done. A GPU that does not report such events is assumed healthy (and
// logged). Errors of NVML calls end the watch and are returned.
//
// lib must be initialized (nvmlInit) by the caller for the whole watch.
func WatchHealth(ctx context.Context, lib nvml.Interface, uuids []string, unhealthy func(HealthEvent)) error {
	logger := klog.FromContext(ctx)
	set, ret := lib.EventSetCreate()
	if err := check("EventSetCreate", ret); err != nil {
		return err
	}
	defer set.Free()

	watched := 0
	for _, uuid := range uuids {
		dev, ret := lib.DeviceGetHandleByUUID(uuid)
		if err := check(fmt.Sprintf("DeviceGetHandleByUUID(%s)", uuid), ret); err != nil {
			return err
		}
		supported, ret := dev.GetSupportedEventTypes()
		if ret == nvml.ERROR_NOT_SUPPORTED || (ret == nvml.SUCCESS && supported&nvml.EventTypeXidCriticalError == 0) {
			logger.Info("GPU does not report XID events, health is not watched", "uuid", uuid)
			continue
		}
		if err := check(fmt.Sprintf("DeviceGetSupportedEventTypes(%s)", uuid), ret); err != nil {
			return err
		}
		if err := check(fmt.Sprintf("DeviceRegisterEvents(%s)", uuid), dev.RegisterEvents(nvml.EventTypeXidCriticalError, set)); err != nil {
			return err
		}
		watched++
	}
	logger.V(2).Info("Watching GPU health", "gpus", watched)

	for ctx.Err() == nil {
		data, ret := set.Wait(uint32(healthWaitTimeout.Milliseconds()))
		switch ret {
		case nvml.SUCCESS:
		case nvml.ERROR_TIMEOUT:
			continue
		default:
			return check("EventSetWait", ret)
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
