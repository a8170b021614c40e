// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/version"
)

// servingRule says when DRA serves an extended resource name on a node; it
// depends on the server version (and the gate).
type servingRule string

const (
	// ruleAbsentOrZero: DRA serves a name that a DeviceClass maps where
	// node.status.allocatable lacks it or has it at 0 (draext on 1.33,
	// upstream 1.35+: a node whose device plugin is gone switches to DRA).
	ruleAbsentOrZero servingRule = "AllocatableAbsentOrZero"
	// ruleAbsent: DRA serves such a name only where allocatable lacks it
	// (upstream 1.34).
	ruleAbsent servingRule = "AllocatableAbsent"
	// ruleDevicePluginOnly: DRA serves no extended resource (a server
	// without KEP-5004, or the gate is off).
	ruleDevicePluginOnly servingRule = "DevicePluginOnly"
)

// Who serves a name on a node.
const (
	servedByDevicePlugin = "DevicePlugin"
	servedByDRA          = "DRA"
	servedByNone         = "None"
)

// draextVersionMarker is in the gitVersion of draext's binaries
// (v1.33.13-draext.N).
const draextVersionMarker = "-draext."

// ruleFor returns the serving rule of a server of gitVersion whose
// DRAExtendedResource gate is in state gate, and the reason, in words.
// classes tell a patched 1.33 server whose version string was changed: a
// stock 1.33 server drops spec.extendedResourceName, so a class that has one
// was stored by a server that knows the field.
func ruleFor(gitVersion string, gate gateState, classes []deviceClass) (servingRule, string) {
	if gate.State == gateOff {
		return ruleDevicePluginOnly, "the " + gateName + " gate of the kube-apiserver is off"
	}
	v, err := version.Parse(gitVersion)
	if err != nil {
		return ruleDevicePluginOnly, fmt.Sprintf("the server version %q cannot be parsed: assuming no DRA extended resources", gitVersion)
	}
	switch {
	case v.AtLeast(version.MajorMinor(1, 35)):
		return ruleAbsentOrZero, "Kubernetes 1.35+: DRA serves a mapped name where node allocatable lacks it or has it at 0"
	case v.Major() == 1 && v.Minor() == 34:
		return ruleAbsent, "Kubernetes 1.34: DRA serves a mapped name only where node allocatable lacks it"
	case v.Major() == 1 && v.Minor() == 33 && strings.Contains(gitVersion, draextVersionMarker):
		return ruleAbsentOrZero, "draext: DRA serves a mapped name where node allocatable lacks it or has it at 0"
	case v.Major() == 1 && v.Minor() == 33 && slices.ContainsFunc(classes, func(c deviceClass) bool { return c.ExtendedResourceName != "" }):
		return ruleAbsentOrZero, "a patched 1.33 server (a DeviceClass has extendedResourceName): DRA serves a mapped name where node allocatable lacks it or has it at 0"
	}
	return ruleDevicePluginOnly, fmt.Sprintf("Kubernetes %s has no DRA extended resources: device plugins serve every name", gitVersion)
}

// servedBy applies the rule to a name on a node: allocatable is
// node.status.allocatable[name] (ok: it is there), mapped whether a
// DeviceClass maps the name.
func (r servingRule) servedBy(allocatable resource.Quantity, ok, mapped bool) string {
	switch {
	case mapped && r == ruleAbsentOrZero && (!ok || allocatable.IsZero()):
		return servedByDRA
	case mapped && r == ruleAbsent && !ok:
		return servedByDRA
	case ok:
		return servedByDevicePlugin
	}
	return servedByNone
}

// implicitName is the implicit extended resource name of a class,
// deviceclass.resource.kubernetes.io/<class>, when that is a valid
// resource name.
func implicitName(class string) (string, bool) {
	name := resourcev1beta2.ResourceDeviceClassPrefix + class
	return name, len(validation.IsQualifiedName(name)) == 0
}

// isExtendedResourceName tells an extended resource name in node status
// from a native resource: it has a domain, which is not kubernetes.io or a
// subdomain of it, and is not a quota name.
func isExtendedResourceName(name v1.ResourceName) bool {
	domain, _, ok := strings.Cut(string(name), "/")
	if !ok || strings.HasPrefix(string(name), "requests.") {
		return false
	}
	return domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io")
}

// resolver maps extended resource names to DeviceClasses as the scheduler
// does: several classes with one explicit name, the newest
// (creationTimestamp) wins, ties go to the smaller name; every class is also
// reachable through its implicit name.
type resolver struct {
	classes map[string]*deviceClass
	// explicit maps an explicit name to its classes, the winner first.
	explicit map[string][]*deviceClass
}

func newResolver(classes []deviceClass) resolver {
	r := resolver{classes: map[string]*deviceClass{}, explicit: map[string][]*deviceClass{}}
	for i := range classes {
		c := &classes[i]
		r.classes[c.Name] = c
		if c.ExtendedResourceName != "" {
			r.explicit[c.ExtendedResourceName] = append(r.explicit[c.ExtendedResourceName], c)
		}
	}
	for _, list := range r.explicit {
		slices.SortFunc(list, func(a, b *deviceClass) int {
			if c := b.Created.Compare(a.Created); c != 0 {
				return c // newest first
			}
			return strings.Compare(a.Name, b.Name)
		})
	}
	return r
}

// class is the DeviceClass that serves name, nil when none does.
func (r resolver) class(name string) *deviceClass {
	if list := r.explicit[name]; len(list) > 0 {
		return list[0]
	}
	if class, ok := strings.CutPrefix(name, resourcev1beta2.ResourceDeviceClassPrefix); ok {
		return r.classes[class]
	}
	return nil
}

// losers are the classes that name explicitly but that lose it to another,
// in the order in which they would take over.
func (r resolver) losers(name string) []string {
	list := r.explicit[name]
	if len(list) < 2 {
		return nil
	}
	out := make([]string, 0, len(list)-1)
	for _, c := range list[1:] {
		out = append(out, c.Name)
	}
	return out
}

// winsExplicit tells whether the class serves its explicit name.
func (r resolver) winsExplicit(class deviceClass) bool {
	list := r.explicit[class.ExtendedResourceName]
	return len(list) > 0 && list[0].Name == class.Name
}

// explicitNames are the explicit names of all classes, sorted.
func (r resolver) explicitNames() []string {
	names := make([]string, 0, len(r.explicit))
	for name := range r.explicit {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
