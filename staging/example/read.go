// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// resourceGroup is the API group of DRA.
const resourceGroup = "resource.k8s.io"

// resourceVersions are the versions of resource.k8s.io that the plugin
// reads, the preferred first. v1 (Kubernetes 1.34+) is not in the v0.33
// client: it is read as JSON and decoded into the v1beta2 Go types, whose
// JSON shape is the same.
var resourceVersions = []string{"v1", "v1beta2", "v1beta1"}

// listPageSize is the page size of every list call.
const listPageSize = 500

// resourceAPI reads DRA objects in one version of resource.k8s.io and
// converts them into the internal model (model.go).
type resourceAPI interface {
	// GroupVersion is e.g. "resource.k8s.io/v1beta2".
	GroupVersion() string
	DeviceClasses(ctx context.Context) ([]deviceClass, error)
	ResourceSlices(ctx context.Context) ([]resourceSlice, error)
	// ResourceClaims lists the claims of a namespace, of all when it is "".
	ResourceClaims(ctx context.Context, namespace string) ([]resourceClaim, error)
	ResourceClaim(ctx context.Context, namespace, name string) (*resourceClaim, error)
}

// pickResourceVersion asks discovery which versions of resource.k8s.io the
// server serves and returns the first of resourceVersions among them.
func pickResourceVersion(disc discovery.DiscoveryInterface) (string, error) {
	groups, err := disc.ServerGroups()
	if err != nil {
		return "", fmt.Errorf("discover the API groups of the server: %w", err)
	}
	served := map[string]bool{}
	for _, g := range groups.Groups {
		if g.Name != resourceGroup {
			continue
		}
		for _, v := range g.Versions {
			served[v.Version] = true
		}
	}
	for _, v := range resourceVersions {
		if served[v] {
			return v, nil
		}
	}
	return "", fmt.Errorf("the server serves none of %s %s: DRA is off (on Kubernetes 1.33 it needs the DynamicResourceAllocation gate and --runtime-config=resource.k8s.io/v1beta1=true)",
		resourceGroup, strings.Join(resourceVersions, ", "))
}

// newResourceAPI returns the reader of version ("v1", "v1beta2" or
// "v1beta1"). raw reaches the server's root (the discovery REST client) and
// is only used for v1.
func newResourceAPI(version string, client kubernetes.Interface, raw rest.Interface) (resourceAPI, error) {
	switch version {
	case "v1":
		if raw == nil {
			return nil, fmt.Errorf("internal error: no REST client to read %s/v1", resourceGroup)
		}
		return v1API{raw: raw}, nil
	case "v1beta2":
		return v1beta2API{client: client}, nil
	case "v1beta1":
		return v1beta1API{client: client}, nil
	}
	return nil, fmt.Errorf("unsupported version %s/%s (want one of %s)", resourceGroup, version, strings.Join(resourceVersions, ", "))
}

// listAll calls list page by page and returns the items of every page.
func listAll[T any](ctx context.Context, list func(context.Context, metav1.ListOptions) ([]T, string, error)) ([]T, error) {
	var all []T
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		items, next, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		opts.Continue = next
	}
}

// namespaceText is how errors name a namespace argument.
func namespaceText(namespace string) string {
	if namespace == "" {
		return "all namespaces"
	}
	return "namespace " + namespace
}

// ---------------------------------------------------------------- v1beta2

type v1beta2API struct{ client kubernetes.Interface }

func (a v1beta2API) GroupVersion() string { return resourcev1beta2.SchemeGroupVersion.String() }

func (a v1beta2API) DeviceClasses(ctx context.Context) ([]deviceClass, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta2.DeviceClass, string, error) {
		l, err := a.client.ResourceV1beta2().DeviceClasses().List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list DeviceClasses (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, classFromV1beta2), nil
}

func (a v1beta2API) ResourceSlices(ctx context.Context) ([]resourceSlice, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta2.ResourceSlice, string, error) {
		l, err := a.client.ResourceV1beta2().ResourceSlices().List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceSlices (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, sliceFromV1beta2), nil
}

func (a v1beta2API) ResourceClaims(ctx context.Context, namespace string) ([]resourceClaim, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta2.ResourceClaim, string, error) {
		l, err := a.client.ResourceV1beta2().ResourceClaims(namespace).List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceClaims (%s) in %s: %w", a.GroupVersion(), namespaceText(namespace), err)
	}
	return convertAll(items, claimFromV1beta2), nil
}

func (a v1beta2API) ResourceClaim(ctx context.Context, namespace, name string) (*resourceClaim, error) {
	c, err := a.client.ResourceV1beta2().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get ResourceClaim %s/%s (%s): %w", namespace, name, a.GroupVersion(), err)
	}
	return ptr.To(claimFromV1beta2(c)), nil
}

// ---------------------------------------------------------------- v1beta1

type v1beta1API struct{ client kubernetes.Interface }

func (a v1beta1API) GroupVersion() string { return resourcev1beta1.SchemeGroupVersion.String() }

func (a v1beta1API) DeviceClasses(ctx context.Context) ([]deviceClass, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta1.DeviceClass, string, error) {
		l, err := a.client.ResourceV1beta1().DeviceClasses().List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list DeviceClasses (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, classFromV1beta1), nil
}

func (a v1beta1API) ResourceSlices(ctx context.Context) ([]resourceSlice, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta1.ResourceSlice, string, error) {
		l, err := a.client.ResourceV1beta1().ResourceSlices().List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceSlices (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, sliceFromV1beta1), nil
}

func (a v1beta1API) ResourceClaims(ctx context.Context, namespace string) ([]resourceClaim, error) {
	items, err := listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]resourcev1beta1.ResourceClaim, string, error) {
		l, err := a.client.ResourceV1beta1().ResourceClaims(namespace).List(ctx, opts)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceClaims (%s) in %s: %w", a.GroupVersion(), namespaceText(namespace), err)
	}
	return convertAll(items, claimFromV1beta1), nil
}

func (a v1beta1API) ResourceClaim(ctx context.Context, namespace, name string) (*resourceClaim, error) {
	c, err := a.client.ResourceV1beta1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get ResourceClaim %s/%s (%s): %w", namespace, name, a.GroupVersion(), err)
	}
	return ptr.To(claimFromV1beta1(c)), nil
}

// ---------------------------------------------------------------- v1

// v1API reads resource.k8s.io/v1 as JSON through a REST client of the
// server's root and decodes it into the v1beta2 Go types.
type v1API struct{ raw rest.Interface }

func (a v1API) GroupVersion() string { return resourceGroup + "/v1" }

// getJSON GETs /apis/resource.k8s.io/v1/<path> and decodes the body into out.
func (a v1API) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	req := a.raw.Get().AbsPath("/apis", resourceGroup, "v1", path)
	for k, vs := range query {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	body, err := req.DoRaw(ctx)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode the answer as JSON: %w", err)
	}
	return nil
}

// listV1 lists path (e.g. "resourceslices") page by page into lists of L.
func listV1[L any, T any](ctx context.Context, a v1API, path string, items func(*L) ([]T, string)) ([]T, error) {
	return listAll(ctx, func(ctx context.Context, opts metav1.ListOptions) ([]T, string, error) {
		query := url.Values{"limit": {fmt.Sprint(opts.Limit)}}
		if opts.Continue != "" {
			query.Set("continue", opts.Continue)
		}
		var list L
		if err := a.getJSON(ctx, path, query, &list); err != nil {
			return nil, "", err
		}
		l, next := items(&list)
		return l, next, nil
	})
}

func (a v1API) DeviceClasses(ctx context.Context) ([]deviceClass, error) {
	items, err := listV1(ctx, a, "deviceclasses", func(l *resourcev1beta2.DeviceClassList) ([]resourcev1beta2.DeviceClass, string) {
		return l.Items, l.Continue
	})
	if err != nil {
		return nil, fmt.Errorf("list DeviceClasses (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, classFromV1beta2), nil
}

func (a v1API) ResourceSlices(ctx context.Context) ([]resourceSlice, error) {
	items, err := listV1(ctx, a, "resourceslices", func(l *resourcev1beta2.ResourceSliceList) ([]resourcev1beta2.ResourceSlice, string) {
		return l.Items, l.Continue
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceSlices (%s): %w", a.GroupVersion(), err)
	}
	return convertAll(items, sliceFromV1beta2), nil
}

func (a v1API) ResourceClaims(ctx context.Context, namespace string) ([]resourceClaim, error) {
	path := "resourceclaims"
	if namespace != "" {
		path = "namespaces/" + namespace + "/resourceclaims"
	}
	items, err := listV1(ctx, a, path, func(l *resourcev1beta2.ResourceClaimList) ([]resourcev1beta2.ResourceClaim, string) {
		return l.Items, l.Continue
	})
	if err != nil {
		return nil, fmt.Errorf("list ResourceClaims (%s) in %s: %w", a.GroupVersion(), namespaceText(namespace), err)
	}
	return convertAll(items, claimFromV1beta2), nil
}

func (a v1API) ResourceClaim(ctx context.Context, namespace, name string) (*resourceClaim, error) {
	var c resourcev1beta2.ResourceClaim
	if err := a.getJSON(ctx, "namespaces/"+namespace+"/resourceclaims/"+name, nil, &c); err != nil {
		return nil, fmt.Errorf("get ResourceClaim %s/%s (%s): %w", namespace, name, a.GroupVersion(), err)
	}
	return ptr.To(claimFromV1beta2(&c)), nil
}
