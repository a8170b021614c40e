// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

//go:build !stockdra_v037

package main

import "k8s.io/dynamic-resource-allocation/kubeletplugin"

// versionOptions are the helper options of this library version (go.mod,
// v0.34.x): none beyond the common ones.
func versionOptions() []kubeletplugin.Option { return nil }
