// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kindconfig derives from a kind cluster configuration
// (kind-configs/) what a kubeadm cluster needs to behave the same: the
// feature gates of every component, the kubelets' extra gates, the API
// groups the apiserver serves and containerd's CDI settings. make release
// writes them as a kubeadm configuration, so that the kind clusters and the
// release cannot drift apart.
package kindconfig

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Settings are what a kind configuration sets for the components.
type Settings struct {
	// FeatureGates go to every component.
	FeatureGates map[string]bool
	// KubeletFeatureGates are the kubelets' gates: FeatureGates and
	// those of a KubeletConfiguration patch.
	KubeletFeatureGates map[string]bool
	// RuntimeConfig is the apiserver's --runtime-config.
	RuntimeConfig map[string]string
	// ContainerdConfigPatches are TOML fragments of containerd's config.
	ContainerdConfigPatches []string
}

// cluster is the part of kind's v1alpha4 Cluster that matters here.
type cluster struct {
	Kind                    string            `json:"kind"`
	APIVersion              string            `json:"apiVersion"`
	FeatureGates            map[string]bool   `json:"featureGates"`
	RuntimeConfig           map[string]string `json:"runtimeConfig"`
	ContainerdConfigPatches []string          `json:"containerdConfigPatches"`
	KubeadmConfigPatches    []string          `json:"kubeadmConfigPatches"`
}

// patch is a kubeadm config patch: its kind and, for a
// KubeletConfiguration, its gates.
type patch struct {
	Kind         string          `json:"kind"`
	FeatureGates map[string]bool `json:"featureGates"`
}

// Parse reads the settings of a kind cluster configuration.
func Parse(data []byte) (*Settings, error) {
	var c cluster
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse the kind configuration: %w", err)
	}
	if c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		return nil, fmt.Errorf("not a kind cluster configuration (kind %q, apiVersion %q; want Cluster, kind.x-k8s.io/v1alpha4)", c.Kind, c.APIVersion)
	}
	s := &Settings{
		FeatureGates:            c.FeatureGates,
		KubeletFeatureGates:     map[string]bool{},
		RuntimeConfig:           c.RuntimeConfig,
		ContainerdConfigPatches: c.ContainerdConfigPatches,
	}
	if len(s.FeatureGates) == 0 {
		return nil, fmt.Errorf("the kind configuration sets no featureGates")
	}
	for name, on := range c.FeatureGates {
		s.KubeletFeatureGates[name] = on
	}
	for i, text := range c.KubeadmConfigPatches {
		var p patch
		if err := yaml.Unmarshal([]byte(text), &p); err != nil {
			return nil, fmt.Errorf("kubeadmConfigPatches[%d]: %w", i, err)
		}
		if p.Kind != "KubeletConfiguration" {
			continue
		}
		for name, on := range p.FeatureGates {
			if cluster, ok := c.FeatureGates[name]; ok && cluster != on {
				return nil, fmt.Errorf("kubeadmConfigPatches[%d]: the KubeletConfiguration sets %s=%t, featureGates %s=%t", i, name, on, name, cluster)
			}
			s.KubeletFeatureGates[name] = on
		}
	}
	return s, nil
}

// gateFlag is the --feature-gates value of gates, sorted.
func gateFlag(gates map[string]bool) string {
	var parts []string
	for name, on := range gates {
		parts = append(parts, fmt.Sprintf("%s=%t", name, on))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// runtimeConfigFlag is the --runtime-config value, sorted.
func runtimeConfigFlag(config map[string]string) string {
	var parts []string
	for group, value := range config {
		parts = append(parts, group+"="+value)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

type arg struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type component struct {
	ExtraArgs []arg `json:"extraArgs"`
}

// Kubeadm returns a kubeadm configuration (kubeadm.k8s.io/v1beta4) with
// the settings: a ClusterConfiguration for kubernetesVersion, a
// KubeletConfiguration and a KubeProxyConfiguration, as kind passes them to
// kubeadm. source names the kind configuration in the header comment.
func (s *Settings) Kubeadm(kubernetesVersion, source string) ([]byte, error) {
	gates := arg{Name: "feature-gates", Value: gateFlag(s.FeatureGates)}
	apiServer := component{ExtraArgs: []arg{gates}}
	if len(s.RuntimeConfig) > 0 {
		apiServer.ExtraArgs = append(apiServer.ExtraArgs, arg{Name: "runtime-config", Value: runtimeConfigFlag(s.RuntimeConfig)})
	}
	docs := []any{
		map[string]any{
			"apiVersion":        "kubeadm.k8s.io/v1beta4",
			"kind":              "ClusterConfiguration",
			"kubernetesVersion": kubernetesVersion,
			"apiServer":         apiServer,
			"controllerManager": component{ExtraArgs: []arg{gates}},
			"scheduler":         component{ExtraArgs: []arg{gates}},
		},
		map[string]any{
			"apiVersion":   "kubelet.config.k8s.io/v1beta1",
			"kind":         "KubeletConfiguration",
			"featureGates": s.KubeletFeatureGates,
		},
		map[string]any{
			"apiVersion":   "kubeproxy.config.k8s.io/v1alpha1",
			"kind":         "KubeProxyConfiguration",
			"featureGates": s.FeatureGates,
		},
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# kubeadm configuration of draext %s, derived from %s (make release):\n", kubernetesVersion, source)
	out.WriteString("# the same feature gates, API groups and kubelet gates as the kind clusters.\n")
	out.WriteString("# Merge it into your own (kubeadm init --config, kubeadm upgrade apply --config).\n")
	for i, doc := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		out.Write(data)
	}
	return out.Bytes(), nil
}

// Containerd returns the containerd configuration fragments.
func (s *Settings) Containerd(source string) []byte {
	var out bytes.Buffer
	fmt.Fprintf(&out, "# containerd settings of the kind clusters, from %s (make release):\n", source)
	out.WriteString("# merge them into /etc/containerd/config.toml on every node and restart containerd.\n")
	for _, p := range s.ContainerdConfigPatches {
		out.WriteString(strings.TrimSpace(p))
		out.WriteString("\n")
	}
	return out.Bytes()
}
