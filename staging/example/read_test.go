// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestPickResourceVersion(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		served  []string
		want    string
		wantErr string
	}{
		"1.34+":         {served: []string{"resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1"}, want: "v1"},
		"draext":        {served: []string{"resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2"}, want: "v1beta2"},
		"v1beta1 only":  {served: []string{"resource.k8s.io/v1beta1", "resource.k8s.io/v1alpha3"}, want: "v1beta1"},
		"v1alpha3 only": {served: []string{"resource.k8s.io/v1alpha3"}, wantErr: "serves none of resource.k8s.io v1, v1beta2, v1beta1"},
		"no DRA":        {served: []string{"apps/v1"}, wantErr: "DRA is off"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			disc := &fakediscovery.FakeDiscovery{Fake: &fake.NewClientset().Fake}
			for _, gv := range tc.served {
				disc.Resources = append(disc.Resources, &metav1.APIResourceList{GroupVersion: gv})
			}
			got, err := pickResourceVersion(disc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("version = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// v1Server answers resource.k8s.io/v1 like a 1.34+ apiserver, with fields
// that the v1beta2 types lack, and the device classes in two pages.
func v1Server(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"": `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClassList","metadata":{"continue":"page2"},"items":[
			{"metadata":{"name":"gpu","creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"extendedResourceName":"nvidia.com/gpu",
			 "selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}]}}]}`,
		"page2": `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClassList","metadata":{},"items":[
			{"metadata":{"name":"fpga","creationTimestamp":"2026-01-02T00:00:00Z"},"spec":{}}]}`,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/resource.k8s.io/v1/deviceclasses", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") != fmt.Sprint(listPageSize) {
			t.Errorf("list without limit=%d: %s", listPageSize, r.URL)
		}
		_, _ = w.Write([]byte(pages[r.URL.Query().Get("continue")]))
	})
	mux.HandleFunc("/apis/resource.k8s.io/v1/resourceslices", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSliceList","metadata":{},"items":[
			{"metadata":{"name":"n1-slice"},"spec":{"driver":"gpu.example.com","nodeName":"n1","pool":{"name":"n1","generation":3,"resourceSliceCount":1},
			 "devices":[{"name":"gpu-0","bindsToNode":false,"attributes":{"uuid":{"string":"GPU-0"},"index":{"int":0}},
			  "capacity":{"memory":{"value":"40Gi","requestPolicy":{"default":"1Gi"}}}}]}}]}`))
	})
	claim := `{"metadata":{"namespace":"default","name":"pod-extended-resources-abcde"},"spec":{"devices":{"requests":[
		{"name":"container-0-request-0","exactly":{"deviceClassName":"gpu","count":1}}]}},
		"status":{"allocation":{"devices":{"results":[{"request":"container-0-request-0","driver":"gpu.example.com","pool":"n1","device":"gpu-0","shareID":"x"}]}}}}`
	mux.HandleFunc("/apis/resource.k8s.io/v1/resourceclaims", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimList","metadata":{},"items":[` + claim + `]}`))
	})
	mux.HandleFunc("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/pod-extended-resources-abcde", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(claim))
	})
	mux.HandleFunc("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/nosuch", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"resourceclaims.resource.k8s.io \"nosuch\" not found","reason":"NotFound","code":404}`))
	})
	server := httptest.NewServer(mux)
	t.Cleanup(server.Close)
	return server
}

// wantClaim is what every version's reader must give for the claim that
// v1Server and the typed test objects describe.
var wantClaim = resourceClaim{
	Namespace: "default", Name: "pod-extended-resources-abcde",
	Requests: map[string]string{"container-0-request-0": "gpu"},
	Results:  []allocationResult{{Request: "container-0-request-0", Driver: testDriver, Pool: "n1", Device: "gpu-0"}},
}

func TestV1API(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	api, err := newResourceAPI("v1", fake.NewClientset(), rootClient(v1Server(t).URL))
	if err != nil {
		t.Fatal(err)
	}
	if api.GroupVersion() != "resource.k8s.io/v1" {
		t.Errorf("GroupVersion = %s", api.GroupVersion())
	}
	classes, err := api.DeviceClasses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(classes) != 2 || classes[0].ExtendedResourceName != gpuName || classes[0].Selectors[0] != `device.driver == "gpu.example.com"` || classes[1].Name != "fpga" {
		t.Errorf("classes of both pages = %+v", classes)
	}
	rslices, err := api.ResourceSlices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rslices) != 1 || rslices[0].NodeName != "n1" || rslices[0].Generation != 3 || rslices[0].Devices[0].uuid(testDriver) != "GPU-0" ||
		!rslices[0].Devices[0].Capacity["memory"].Value.Equal(resource.MustParse("40Gi")) || *rslices[0].Devices[0].Attributes["index"].IntValue != 0 {
		t.Errorf("slices = %+v", rslices)
	}
	claims, err := api.ResourceClaims(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 || !reflect.DeepEqual(claims[0], wantClaim) {
		t.Errorf("claims = %+v, want %+v", claims, wantClaim)
	}
	claim, err := api.ResourceClaim(ctx, "default", wantClaim.Name)
	if err != nil || !reflect.DeepEqual(*claim, wantClaim) {
		t.Errorf("claim = %+v, %v; want %+v", claim, err, wantClaim)
	}
	if _, err := api.ResourceClaim(ctx, "default", "nosuch"); err == nil || !strings.Contains(err.Error(), "get ResourceClaim default/nosuch (resource.k8s.io/v1)") || !apierrors.IsNotFound(err) {
		t.Errorf("missing claim: error %v", err)
	}
}

func TestTypedAPIs(t *testing.T) {
	t.Parallel()
	v1beta1Objects := []runtime.Object{
		&resourcev1beta1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourcev1beta1.DeviceClassSpec{
			ExtendedResourceName: ptr.To(gpuName),
			Selectors:            []resourcev1beta1.DeviceSelector{{CEL: &resourcev1beta1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
		}},
		&resourcev1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "n1-slice"}, Spec: resourcev1beta1.ResourceSliceSpec{
			Driver: testDriver, NodeName: "n1", Pool: resourcev1beta1.ResourcePool{Name: "n1", ResourceSliceCount: 1},
			Devices: []resourcev1beta1.Device{{Name: "gpu-0", Basic: &resourcev1beta1.BasicDevice{
				Attributes: map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute{"uuid": {StringValue: ptr.To("GPU-0")}},
			}}},
		}},
		&resourcev1beta1.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: wantClaim.Name},
			Spec: resourcev1beta1.ResourceClaimSpec{Devices: resourcev1beta1.DeviceClaim{Requests: []resourcev1beta1.DeviceRequest{
				{Name: "container-0-request-0", DeviceClassName: "gpu", Count: 1},
			}}},
			Status: resourcev1beta1.ResourceClaimStatus{Allocation: &resourcev1beta1.AllocationResult{Devices: resourcev1beta1.DeviceAllocationResult{
				Results: []resourcev1beta1.DeviceRequestAllocationResult{{Request: "container-0-request-0", Driver: testDriver, Pool: "n1", Device: "gpu-0"}},
			}}},
		},
	}
	v1beta2Objects := []runtime.Object{
		v1beta2Class("gpu", gpuName, t0, `device.driver == "gpu.example.com"`),
		v1beta2Slice("n1", "A100"),
		v1beta2Claim("default", wantClaim.Name, "container-0-request-0", "gpu", "n1", "gpu-0"),
	}
	testCases := map[string]struct {
		version string
		objects []runtime.Object
		device  string
	}{
		"v1beta1": {version: "v1beta1", objects: v1beta1Objects, device: "gpu-0"},
		"v1beta2": {version: "v1beta2", objects: v1beta2Objects, device: "n1-gpu-0"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			api, err := newResourceAPI(tc.version, fake.NewClientset(tc.objects...), nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := "resource.k8s.io/" + tc.version; api.GroupVersion() != want {
				t.Errorf("GroupVersion = %s, want %s", api.GroupVersion(), want)
			}
			classes, err := api.DeviceClasses(ctx)
			if err != nil || len(classes) != 1 || classes[0].ExtendedResourceName != gpuName || len(classes[0].Selectors) != 1 {
				t.Errorf("classes = %+v, %v", classes, err)
			}
			rslices, err := api.ResourceSlices(ctx)
			if err != nil || len(rslices) != 1 || rslices[0].NodeName != "n1" || rslices[0].Devices[0].Name != tc.device || rslices[0].Devices[0].uuid(testDriver) == "" {
				t.Errorf("slices = %+v, %v", rslices, err)
			}
			claims, err := api.ResourceClaims(ctx, "default")
			if err != nil || len(claims) != 1 || !reflect.DeepEqual(claims[0], wantClaim) {
				t.Errorf("claims = %+v, %v; want %+v", claims, err, wantClaim)
			}
			if _, err := api.ResourceClaim(ctx, "default", "nosuch"); err == nil || !strings.Contains(err.Error(), "get ResourceClaim default/nosuch (resource.k8s.io/"+tc.version+")") {
				t.Errorf("missing claim: error %v", err)
			}
		})
	}
}

func TestNewResourceAPIErrors(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		version string
		wantErr string
	}{
		"v1 without a REST client": {version: "v1", wantErr: "no REST client"},
		"unknown version":          {version: "v1alpha3", wantErr: "unsupported version resource.k8s.io/v1alpha3"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := newResourceAPI(tc.version, fake.NewClientset(), nil); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
