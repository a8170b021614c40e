// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// MIGPrefix starts the UUID of a MIG device: MIG-<uuid> since driver R470,
// MIG-GPU-<parent uuid>/<GPU instance>/<compute instance> before.
const MIGPrefix = "MIG-"

// MIGParent returns the UUID of the GPU of which the MIG device with the
// given UUID is a part, as NVML tells it. NVML is initialized for the call
// and shut down again (NVML counts its initializations).
func MIGParent(lib nvml.Interface, migUUID string) (string, error) {
	if !strings.HasPrefix(migUUID, MIGPrefix) {
		return "", fmt.Errorf("%q is not a MIG device UUID", migUUID)
	}
	if err := check("Init", lib.Init()); err != nil {
		return "", err
	}
	defer func() { _ = lib.Shutdown() }()
	dev, ret := lib.DeviceGetHandleByUUID(migUUID)
	if err := check(fmt.Sprintf("DeviceGetHandleByUUID(%s)", migUUID), ret); err != nil {
		return "", err
	}
	isMIG, ret := dev.IsMigDeviceHandle()
	if err := check(fmt.Sprintf("device %s: IsMigDeviceHandle", migUUID), ret); err != nil {
		return "", err
	}
	if !isMIG {
		return "", fmt.Errorf("device %s is not a MIG device", migUUID)
	}
	parent, ret := dev.GetDeviceHandleFromMigDeviceHandle()
	if err := check(fmt.Sprintf("device %s: GetDeviceHandleFromMigDeviceHandle", migUUID), ret); err != nil {
		return "", err
	}
	uuid, ret := parent.GetUUID()
	if err := check(fmt.Sprintf("parent of device %s: GetUUID", migUUID), ret); err != nil {
		return "", err
	}
	return uuid, nil
}

// MockMIGUUID is the UUID that AddMockMIGDevices gives the MIG device n
// of the GPU with the given UUID.
func MockMIGUUID(parentUUID string, n int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("draext-mock-mig/%s/%d", parentUUID, n)))
	b := sum[:16]
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", MIGPrefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// AddMockMIGDevices turns MIG mode on for the GPU at index of a mock
// server (NewMock) and gives it count MIG devices, with the UUIDs of
// MockMIGUUID, which it returns. NVML finds them by UUID
// (DeviceGetHandleByUUID) and through the GPU (GetMigDeviceHandleByIndex);
// each names the GPU as its parent. The mock of go-nvml has GPU and compute
// instances, but no MIG device handles.
func AddMockMIGDevices(lib nvml.Interface, index, count int) ([]string, error) {
	srv, ok := lib.(*server.Server)
	if !ok {
		return nil, fmt.Errorf("not a mock NVML server: %T", lib)
	}
	if index < 0 || index >= len(srv.Devices) {
		return nil, fmt.Errorf("mock NVML server has no GPU %d", index)
	}
	parent, ok := srv.Devices[index].(*server.Device)
	if !ok {
		return nil, fmt.Errorf("mock GPU %d has unexpected type %T", index, srv.Devices[index])
	}
	if ret, _ := parent.SetMigMode(nvml.DEVICE_MIG_ENABLE); ret != nvml.SUCCESS {
		return nil, errors.New(nvml.ErrorString(ret))
	}
	migs := make([]nvml.Device, count)
	uuids := make([]string, count)
	for n := range count {
		uuid := MockMIGUUID(parent.UUID, n)
		uuids[n] = uuid
		migs[n] = &mock.Device{
			GetUUIDFunc:                            func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
			IsMigDeviceHandleFunc:                  func() (bool, nvml.Return) { return true, nvml.SUCCESS },
			GetDeviceHandleFromMigDeviceHandleFunc: func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS },
		}
	}
	parent.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return count, nvml.SUCCESS }
	parent.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		if n < 0 || n >= count {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return migs[n], nvml.SUCCESS
	}
	byUUID := srv.DeviceGetHandleByUUIDFunc
	srv.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		for n, u := range uuids {
			if u == uuid {
				return migs[n], nvml.SUCCESS
			}
		}
		return byUUID(uuid)
	}
	return uuids, nil
}
