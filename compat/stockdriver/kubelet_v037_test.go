// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

//go:build stockdra_v037

package main

import drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"

// The DRA gRPC v1beta1 types of k8s.io/kubelet v0.37 come from
// protoc-gen-go (Uid, CdiDeviceIds) where v0.34 and a v1.33 kubelet have
// gogo's (UID, CDIDeviceIDs); the wire format is the same.

func v1beta1Claim(namespace, name, uid string) *drapbv1beta1.Claim {
	return &drapbv1beta1.Claim{Namespace: namespace, Name: name, Uid: uid}
}

func cdiDeviceIDs(d *drapbv1beta1.Device) []string { return d.GetCdiDeviceIds() }
