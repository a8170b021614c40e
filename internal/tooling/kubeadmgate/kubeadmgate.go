// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeadmgate turns one feature gate of one component on or off in
// the configuration a kubeadm cluster keeps in kube-system: the
// ClusterConfiguration of ConfigMap kubeadm-config (kube-apiserver,
// kube-controller-manager and kube-scheduler get their gates through
// extraArgs) and the KubeletConfiguration of ConfigMap kubelet-config.
// kubeadm upgrade apply and kubeadm upgrade node render the components from
// these, so a gate set there survives every later upgrade; one component at
// a time is what turning DRAExtendedResource on in the safe order needs.
package kubeadmgate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Components are the names Set accepts: the ClusterConfiguration's
// component fields, and kubelet for a KubeletConfiguration.
var Components = []string{"apiServer", "controllerManager", "scheduler", "kubelet"}

var gateName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// ParseAssignment reads COMPONENT:GATE=BOOL, as in
// apiServer:DRAExtendedResource=true.
func ParseAssignment(s string) (component, gate string, value bool, err error) {
	component, rest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", false, fmt.Errorf("%q: want COMPONENT:GATE=true|false (COMPONENT one of %s)", s, strings.Join(Components, ", "))
	}
	gate, v, ok := strings.Cut(rest, "=")
	if !ok {
		return "", "", false, fmt.Errorf("%q: want COMPONENT:GATE=true|false", s)
	}
	value, err = strconv.ParseBool(v)
	if err != nil {
		return "", "", false, fmt.Errorf("%q: the value of gate %s must be true or false, not %q", s, gate, v)
	}
	return component, gate, value, nil
}

// Set returns config with gate set to value for component. config is a
// ClusterConfiguration (kubeadm.k8s.io/v1beta3: extraArgs is a map;
// v1beta4: a list of name/value pairs) for apiServer, controllerManager and
// scheduler, or a KubeletConfiguration for kubelet. The other gates of the
// component, its other arguments and every other field are kept; the
// output is YAML with sorted keys (what kubeadm writes itself).
func Set(config []byte, component, gate string, value bool) ([]byte, error) {
	if !gateName.MatchString(gate) {
		return nil, fmt.Errorf("%q is not a feature gate name (letters and digits, starting with an upper-case letter)", gate)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(config, &doc); err != nil {
		return nil, fmt.Errorf("parse the configuration: %w", err)
	}
	kind, _ := doc["kind"].(string)
	apiVersion, _ := doc["apiVersion"].(string)
	switch component {
	case "kubelet":
		if kind != "KubeletConfiguration" {
			return nil, fmt.Errorf("component kubelet needs a KubeletConfiguration (ConfigMap kubelet-config, key kubelet), not kind %q", kind)
		}
		gates, ok := doc["featureGates"].(map[string]any)
		if doc["featureGates"] != nil && !ok {
			return nil, fmt.Errorf("featureGates of the KubeletConfiguration is not a map")
		}
		if gates == nil {
			gates = map[string]any{}
		}
		gates[gate] = value
		doc["featureGates"] = gates
	case "apiServer", "controllerManager", "scheduler":
		if kind != "ClusterConfiguration" {
			return nil, fmt.Errorf("component %s needs a ClusterConfiguration (ConfigMap kubeadm-config, key ClusterConfiguration), not kind %q", component, kind)
		}
		c, ok := doc[component].(map[string]any)
		if doc[component] != nil && !ok {
			return nil, fmt.Errorf("%s of the ClusterConfiguration is not a map", component)
		}
		if c == nil {
			c = map[string]any{}
		}
		var err error
		switch apiVersion {
		case "kubeadm.k8s.io/v1beta4":
			c["extraArgs"], err = setListArg(c["extraArgs"], gate, value)
		case "kubeadm.k8s.io/v1beta3":
			c["extraArgs"], err = setMapArg(c["extraArgs"], gate, value)
		default:
			return nil, fmt.Errorf("ClusterConfiguration apiVersion %q: only kubeadm.k8s.io/v1beta3 and v1beta4 are known", apiVersion)
		}
		if err != nil {
			return nil, fmt.Errorf("%s.extraArgs: %w", component, err)
		}
		doc[component] = c
	default:
		return nil, fmt.Errorf("unknown component %q (one of %s)", component, strings.Join(Components, ", "))
	}
	return yaml.Marshal(doc)
}

// setGate returns the --feature-gates value flag with gate set to value,
// in place when the gate is there, appended otherwise.
func setGate(flag, gate string, value bool) (string, error) {
	var parts []string
	found := false
	for _, part := range strings.Split(flag, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, _, ok := strings.Cut(part, "=")
		if !ok {
			return "", fmt.Errorf("feature-gates %q: %q is not GATE=BOOL", flag, part)
		}
		if strings.TrimSpace(name) == gate {
			if found {
				continue
			}
			part = fmt.Sprintf("%s=%t", gate, value)
			found = true
		}
		parts = append(parts, part)
	}
	if !found {
		parts = append(parts, fmt.Sprintf("%s=%t", gate, value))
	}
	return strings.Join(parts, ","), nil
}

// setListArg sets the gate in v1beta4 extraArgs: [{name, value}, ...].
func setListArg(extraArgs any, gate string, value bool) ([]any, error) {
	list, ok := extraArgs.([]any)
	if extraArgs != nil && !ok {
		return nil, fmt.Errorf("not a list of name/value pairs (kubeadm.k8s.io/v1beta4)")
	}
	for i, item := range list {
		arg, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("[%d] is not a name/value pair", i)
		}
		if arg["name"] != "feature-gates" {
			continue
		}
		flag, _ := arg["value"].(string)
		v, err := setGate(flag, gate, value)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		arg["value"] = v
		return list, nil
	}
	return append(list, map[string]any{"name": "feature-gates", "value": fmt.Sprintf("%s=%t", gate, value)}), nil
}

// setMapArg sets the gate in v1beta3 extraArgs: {flag: value}.
func setMapArg(extraArgs any, gate string, value bool) (map[string]any, error) {
	m, ok := extraArgs.(map[string]any)
	if extraArgs != nil && !ok {
		return nil, fmt.Errorf("not a map of flags (kubeadm.k8s.io/v1beta3)")
	}
	if m == nil {
		m = map[string]any{}
	}
	flag, _ := m["feature-gates"].(string)
	v, err := setGate(flag, gate, value)
	if err != nil {
		return nil, err
	}
	m["feature-gates"] = v
	return m, nil
}
