// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/dynamic-resource-allocation/extendedresource"
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
	name, ok := extendedresource.ImplicitName(class)
	return string(name), ok
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
// does, with the scheduler's own resolver
// (k8s.io/dynamic-resource-allocation/extendedresource): several classes
// with one explicit name, the newest (creationTimestamp) wins, ties go to
// the smaller name; every class is also reachable through its implicit name.
type resolver struct {
	classes  map[string]*deviceClass
	resolver *extendedresource.Resolver
	// explicit are the explicit names of the classes.
	explicit sets.Set[string]
}

func newResolver(classes []deviceClass) resolver {
	r := resolver{classes: map[string]*deviceClass{}, resolver: extendedresource.NewResolver(), explicit: sets.New[string]()}
	for i := range classes {
		c := &classes[i]
		r.classes[c.Name] = c
		dc := &resourcev1beta1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: c.Name, CreationTimestamp: metav1.NewTime(c.Created)}}
		if c.ExtendedResourceName != "" {
			dc.Spec.ExtendedResourceName = &c.ExtendedResourceName
			r.explicit.Insert(c.ExtendedResourceName)
		}
		r.resolver.AddOrUpdate(dc)
	}
	return r
}

// class is the DeviceClass that serves name, nil when none does.
func (r resolver) class(name string) *deviceClass {
	className, ok := r.resolver.Resolve(v1.ResourceName(name))
	if !ok {
		return nil
	}
	return r.classes[className]
}

// candidates are the classes that name an explicit name, the winner first.
func (r resolver) candidates(name string) []string {
	return r.resolver.Candidates(v1.ResourceName(name))
}

// losers are the classes that name explicitly but that lose it to another,
// in the order in which they would take over.
func (r resolver) losers(name string) []string {
	candidates := r.candidates(name)
	if len(candidates) < 2 {
		return nil
	}
	return candidates[1:]
}

// winsExplicit tells whether the class serves its explicit name.
func (r resolver) winsExplicit(class deviceClass) bool {
	winner, ok := r.resolver.Resolve(v1.ResourceName(class.ExtendedResourceName))
	return class.ExtendedResourceName != "" && ok && winner == class.Name
}

// explicitNames are the explicit names of all classes, sorted.
func (r resolver) explicitNames() []string {
	return sets.List(r.explicit)
}
