// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-kubeadm-config writes, from a kind cluster configuration of
// kind-configs/, the kubeadm configuration and containerd settings that give
// a kubeadm cluster the same feature gates, API groups and CDI settings
// (internal/tooling/kindconfig).
//
//	draext-kubeadm-config --kind-config kind-configs/multi-node-offline.yaml \
//	    --version v1.33.13-draext.1 --kubeadm out/kubeadm-config.yaml --containerd out/containerd-cdi.toml
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/draext/draext/internal/tooling/kindconfig"
)

func main() {
	kindConfig := flag.String("kind-config", "", "kind cluster configuration to read")
	version := flag.String("version", "", "kubernetesVersion of the ClusterConfiguration")
	kubeadm := flag.String("kubeadm", "", "kubeadm configuration to write")
	containerd := flag.String("containerd", "", "containerd settings to write")
	flag.Parse()
	if err := run(*kindConfig, *version, *kubeadm, *containerd); err != nil {
		fmt.Fprintln(os.Stderr, "draext-kubeadm-config:", err)
		os.Exit(1)
	}
}

func run(kindConfig, version, kubeadm, containerd string) error {
	if kindConfig == "" || version == "" || kubeadm == "" || containerd == "" {
		return fmt.Errorf("--kind-config, --version, --kubeadm and --containerd are required")
	}
	data, err := os.ReadFile(kindConfig)
	if err != nil {
		return err
	}
	settings, err := kindconfig.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", kindConfig, err)
	}
	source := filepath.Join(filepath.Base(filepath.Dir(kindConfig)), filepath.Base(kindConfig))
	config, err := settings.Kubeadm(version, source)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeadm, config, 0o644); err != nil {
		return err
	}
	return os.WriteFile(containerd, settings.Containerd(source), 0o644)
}
