// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draext-kubeadm-config writes, from a kind cluster configuration of
// kind-configs/, the kubeadm configuration and containerd settings that give
// a kubeadm cluster the same feature gates, API groups and CDI settings
// (internal/tooling/kindconfig).
//
//	draext-kubeadm-config --kind-config kind-configs/multi-node-offline.yaml \
//	    --version v1.33.13-draext.1 --kubeadm out/kubeadm-config.yaml --containerd out/containerd-cdi.toml
//
// With --set-gate it instead sets one feature gate of one component in the
// ClusterConfiguration or KubeletConfiguration it reads from standard input
// and writes the result to standard output (internal/tooling/kubeadmgate):
// the step of the upgrade runbook that turns a gate on in a running kubeadm
// cluster, one component at a time.
//
//	kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' |
//	    draext-kubeadm-config --set-gate apiServer:DRAExtendedResource=true
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/draext/draext/internal/tooling/kindconfig"
	"github.com/draext/draext/internal/tooling/kubeadmgate"
)

func main() {
	kindConfig := flag.String("kind-config", "", "kind cluster configuration to read")
	version := flag.String("version", "", "kubernetesVersion of the ClusterConfiguration")
	kubeadm := flag.String("kubeadm", "", "kubeadm configuration to write")
	containerd := flag.String("containerd", "", "containerd settings to write")
	setGate := flag.String("set-gate", "", "COMPONENT:GATE=true|false: set one gate in the configuration on standard input (COMPONENT: apiServer, controllerManager, scheduler, kubelet)")
	flag.Parse()
	var err error
	if *setGate != "" {
		if *kindConfig != "" || *version != "" || *kubeadm != "" || *containerd != "" {
			err = fmt.Errorf("--set-gate takes no other flag")
		} else {
			err = setGateFilter(*setGate, os.Stdin, os.Stdout)
		}
	} else {
		err = run(*kindConfig, *version, *kubeadm, *containerd)
	}
	if err != nil {
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

// setGateFilter sets the gate of assignment in the configuration read from in
// and writes it to out; nothing is written when it fails.
func setGateFilter(assignment string, in io.Reader, out io.Writer) error {
	component, gate, value, err := kubeadmgate.ParseAssignment(assignment)
	if err != nil {
		return fmt.Errorf("--set-gate %w", err)
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return fmt.Errorf("--set-gate: standard input is empty (the ConfigMap's key was not found?)")
	}
	config, err := kubeadmgate.Set(data, component, gate, value)
	if err != nil {
		return fmt.Errorf("--set-gate %s: %w", assignment, err)
	}
	_, err = out.Write(config)
	return err
}
