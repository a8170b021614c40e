// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

//go:build stockdra_v037

package main

import (
	"context"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// versionOptions are the helper options of this library version
// (go.v037.mod): the mock GPUs have no health to report, so the helper does
// not advertise the DRAResourceHealth service (a v1.33 kubelet would not ask
// for it either).
func versionOptions() []kubeletplugin.Option {
	return []kubeletplugin.Option{kubeletplugin.HealthService(false)}
}

// WatchHealthStatus is part of the DRAPlugin interface of this library
// version; with HealthService(false) it is never called.
func (d *driver) WatchHealthStatus(context.Context, chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}
