// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
)

// nodeResourceList is the output of `kubectl draext nodes`.
type nodeResourceList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// ServerVersion is the kube-apiserver's gitVersion.
	ServerVersion string `json:"serverVersion"`
	// ResourceAPIVersion is the version of resource.k8s.io that was read.
	ResourceAPIVersion string    `json:"resourceAPIVersion"`
	FeatureGate        gateState `json:"featureGate"`
	// ServingRule says when DRA serves a name (serving.go), Reason in words.
	ServingRule       servingRule    `json:"servingRule"`
	ServingRuleReason string         `json:"servingRuleReason"`
	Items             []nodeResource `json:"items"`
	// Warnings are CEL selectors that failed and similar problems.
	Warnings []string `json:"warnings,omitempty"`
}

// nodeResource is one extended resource name on one node.
type nodeResource struct {
	Node         string `json:"node"`
	ResourceName string `json:"resourceName"`
	// ServedBy is DevicePlugin, DRA or None.
	ServedBy string `json:"servedBy"`
	// DeviceClass is the class that the name maps to, "" when none.
	DeviceClass string `json:"deviceClass"`
	// Drivers are the drivers of the class's devices on the node.
	Drivers []string `json:"drivers"`
	// Capacity, Allocatable, Allocated and Free are those of whoever serves
	// the name: node.status and the requests of the node's pods for the
	// device plugin, the class's devices and the claims holding them for DRA.
	Capacity    int64 `json:"capacity"`
	Allocatable int64 `json:"allocatable"`
	Allocated   int64 `json:"allocated"`
	Free        int64 `json:"free"`
	// DRADevices and DRAAllocated count the class's devices on the node and
	// those allocated to claims, whoever serves the name.
	DRADevices   int64 `json:"draDevices"`
	DRAAllocated int64 `json:"draAllocated"`
	// Both: the device plugin serves the name (allocatable > 0) and the
	// node also has devices of the class: claims can be allocated devices
	// that the device plugin also gives out.
	Both bool `json:"both"`
	// Conflicts are the other classes with this extendedResourceName, which
	// lose it to DeviceClass.
	Conflicts []string `json:"conflicts"`
}

// nodesInput is what the nodes report is computed from.
type nodesInput struct {
	serverVersion string
	apiVersion    string
	gate          gateState
	nodes         []v1.Node
	pods          []v1.Pod
	classes       []deviceClass
	slices        []resourceSlice
	claims        []resourceClaim
}

// buildNodesReport computes the report; it reads nothing from the cluster.
func buildNodesReport(ctx context.Context, in nodesInput) *nodeResourceList {
	rule, reason := ruleFor(in.serverVersion, in.gate, in.classes)
	res := newResolver(in.classes)
	inv := newInventory(ctx, in.classes, in.slices, in.claims)
	podsByNode := map[string][]*v1.Pod{}
	for i := range in.pods {
		p := &in.pods[i]
		if p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			podsByNode[p.Spec.NodeName] = append(podsByNode[p.Spec.NodeName], p)
		}
	}
	out := &nodeResourceList{
		APIVersion: outputAPIVersion, Kind: "NodeExtendedResourceList",
		ServerVersion: in.serverVersion, ResourceAPIVersion: in.apiVersion, FeatureGate: in.gate,
		ServingRule: rule, ServingRuleReason: reason, Items: []nodeResource{},
	}
	for i := range in.nodes {
		node := &in.nodes[i]
		perClass := inv.forNode(node)
		names := sets.New[string]()
		for name := range node.Status.Allocatable {
			if isExtendedResourceName(name) {
				names.Insert(string(name))
			}
		}
		names.Insert(res.explicitNames()...)
		for class := range perClass {
			if implicit, ok := implicitName(class); ok {
				names.Insert(implicit)
			}
		}
		for _, name := range sets.List(names) {
			out.Items = append(out.Items, nodeRow(node, name, rule, res, perClass, podsByNode[node.Name]))
		}
	}
	slices.SortStableFunc(out.Items, func(a, b nodeResource) int {
		if c := strings.Compare(a.Node, b.Node); c != 0 {
			return c
		}
		return strings.Compare(a.ResourceName, b.ResourceName)
	})
	out.Warnings = slices.Compact(slices.Sorted(slices.Values(inv.warnings)))
	return out
}

// nodeRow computes one name on one node.
func nodeRow(node *v1.Node, name string, rule servingRule, res resolver, perClass map[string]classOnNode, pods []*v1.Pod) nodeResource {
	// Empty lists are [] in JSON, not null.
	row := nodeResource{Node: node.Name, ResourceName: name, Drivers: []string{}, Conflicts: append([]string{}, res.losers(name)...)}
	class := res.class(name)
	var dra classOnNode
	if class != nil {
		row.DeviceClass = class.Name
		dra = perClass[class.Name]
		row.Drivers = append(row.Drivers, dra.drivers...)
		row.DRADevices, row.DRAAllocated = dra.devices, dra.allocated
	}
	allocatable, ok := node.Status.Allocatable[v1.ResourceName(name)]
	row.ServedBy = rule.servedBy(allocatable, ok, class != nil)
	switch row.ServedBy {
	case servedByDRA:
		row.Capacity, row.Allocatable, row.Allocated = dra.devices, dra.devices, dra.allocated
	case servedByDevicePlugin:
		capacity := node.Status.Capacity[v1.ResourceName(name)]
		row.Capacity, row.Allocatable = capacity.Value(), allocatable.Value()
		row.Allocated = devicePluginRequests(pods, v1.ResourceName(name))
		row.Both = allocatable.Value() > 0 && dra.devices > 0
	}
	row.Free = row.Allocatable - row.Allocated
	return row
}

// devicePluginRequests sums the requests for name of the node's running
// pods, like kubectl describe node (init containers, sidecars and overhead
// included). A pod whose status maps name to its extended resource claim
// got its devices through DRA and is left out.
func devicePluginRequests(pods []*v1.Pod, name v1.ResourceName) int64 {
	var sum int64
	for _, pod := range pods {
		if mapsResource(pod, name) {
			continue
		}
		requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
		if q, ok := requests[name]; ok {
			sum += q.Value()
		}
	}
	return sum
}

// mapsResource tells whether the pod status maps name to the pod's extended
// resource claim.
func mapsResource(pod *v1.Pod, name v1.ResourceName) bool {
	status := pod.Status.ExtendedResourceClaimStatus
	if status == nil {
		return false
	}
	for _, m := range status.RequestMappings {
		if m.ResourceName == string(name) {
			return true
		}
	}
	return false
}

// readNodesInput reads what the nodes report needs; nodeNames, when given,
// restricts it to those nodes.
func readNodesInput(ctx context.Context, c *connection, nodeNames []string) (nodesInput, error) {
	in := nodesInput{serverVersion: c.serverVersion, apiVersion: c.api.GroupVersion(), gate: c.gate}
	if len(nodeNames) > 0 {
		for _, name := range nodeNames {
			n, err := c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return in, fmt.Errorf("get node %s: %w", name, err)
			}
			in.nodes = append(in.nodes, *n)
		}
	} else {
		nodes, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]v1.Node, string, error) {
			l, err := c.kube.CoreV1().Nodes().List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			return in, fmt.Errorf("list nodes: %w", err)
		}
		in.nodes = nodes
	}
	pods, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]v1.Pod, string, error) {
		opts.FieldSelector = "status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed)
		l, err := c.kube.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return in, fmt.Errorf("list the pods of all namespaces that have not terminated: %w", err)
	}
	in.pods = pods
	if in.classes, err = c.api.DeviceClasses(ctx); err != nil {
		return in, err
	}
	if in.slices, err = c.api.ResourceSlices(ctx); err != nil {
		return in, err
	}
	if in.claims, err = c.api.ResourceClaims(ctx, ""); err != nil {
		return in, err
	}
	return in, nil
}

// nodesColumns are the table columns of the nodes report; wide adds the rest.
var (
	nodesColumns     = []string{"NODE", "RESOURCE", "SERVED BY", "CLASS", "DRIVER", "CAPACITY", "ALLOCATED", "FREE", "BOTH", "CONFLICTS"}
	nodesWideColumns = []string{"ALLOCATABLE", "DRA DEVICES", "DRA ALLOCATED"}
)

// printNodesTable writes the report as a table; the header line (server,
// API version, gate, rule) goes to errOut, as kubectl writes its notes.
func printNodesTable(out, errOut io.Writer, list *nodeResourceList, wide bool) error {
	fmt.Fprintf(errOut, "Server %s, %s, feature gate %s: %s. %s.\n",
		list.ServerVersion, list.ResourceAPIVersion, list.FeatureGate.Name, list.FeatureGate, list.ServingRuleReason)
	for _, w := range list.Warnings {
		fmt.Fprintf(errOut, "Warning: %s\n", w)
	}
	if len(list.Items) == 0 {
		fmt.Fprintln(errOut, "No extended resources found.")
		return nil
	}
	columns := nodesColumns
	if wide {
		columns = append(slices.Clone(columns), nodesWideColumns...)
	}
	t := newTable(out, columns)
	for _, r := range list.Items {
		drivers := ""
		if r.ServedBy == servedByDRA || r.Both {
			drivers = strings.Join(r.Drivers, ",")
		}
		cells := []string{r.Node, r.ResourceName, r.ServedBy, orNone(r.DeviceClass), orNone(drivers),
			fmt.Sprint(r.Capacity), fmt.Sprint(r.Allocated), fmt.Sprint(r.Free), yesNo(r.Both), orNone(strings.Join(r.Conflicts, ","))}
		if wide {
			cells = append(cells, fmt.Sprint(r.Allocatable), fmt.Sprint(r.DRADevices), fmt.Sprint(r.DRAAllocated))
		}
		t.row(cells...)
	}
	return t.flush()
}
