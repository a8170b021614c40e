// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
)

// testCluster is a draext cluster: node n1 serves nvidia.com/gpu through
// DRA (3 GPUs, one held by gpu-pod's claim, one by a claim-template claim),
// n2 through a device plugin (2, one requested by dp-pod).
func testCluster() []runtime.Object {
	n1, n2 := testNode("n1", nil, nil), testNode("n2", nil, map[string]int64{gpuName: 2})
	dp := testPod("dp-pod", "n2", v1.PodRunning, map[string]int64{gpuName: 1})
	pod := testPod("gpu-pod", "n1", v1.PodRunning, map[string]int64{gpuName: 1})
	pod.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "gpu-pod-extended-resources-x7k2p", RequestMappings: []v1.ContainerExtendedResourceRequest{
		{ContainerName: "app", ResourceName: gpuName, RequestName: "container-0-request-0"},
	}}
	return []runtime.Object{
		&n1, &n2, &dp, &pod,
		v1beta2Class("gpu", gpuName, t0, a100...),
		v1beta2Class("gpu-old", gpuName, t0.Add(-1), a100...),
		v1beta2Slice("n1", "A100", "A100", "A100"),
		v1beta2Claim("default", "gpu-pod-extended-resources-x7k2p", "container-0-request-0", "gpu", "n1", "n1-gpu-1"),
		v1beta2Claim("team-a", "template-claim", "gpu", "gpu", "n1", "n1-gpu-2"),
	}
}

// metricsServer answers /metrics with the status and body.
func metricsServer(t *testing.T, status int, body string) rest.Interface {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(server.Close)
	return rootClient(server.URL)
}

// runCommand runs kubectl-draext with args against a fake draext cluster
// whose /metrics answer with status; it returns stdout, stderr and the
// error.
func runCommand(t *testing.T, metricsStatus int, args ...string) (string, string, error) {
	t.Helper()
	client := fake.NewClientset(testCluster()...)
	disc := client.Discovery().(*fakediscovery.FakeDiscovery)
	disc.FakedServerVersion = &version.Info{GitVersion: "v1.33.13-draext.1"}
	disc.Resources = []*metav1.APIResourceList{{GroupVersion: "resource.k8s.io/v1beta1"}, {GroupVersion: "resource.k8s.io/v1beta2"}}
	raw := metricsServer(t, metricsStatus, metricsOn)
	// A kubeconfig whose context's namespace is team-a.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: team-a}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	o := newOptions(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	o.newClients = func() (kubernetes.Interface, rest.Interface, error) { return client, raw, nil }
	cmd := newRootCommand(o)
	cmd.SetArgs(append([]string{"--kubeconfig", kubeconfig}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestCommands(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		args          []string
		metricsStatus int
		wantOut       []string
		wantErrOut    []string
		// wantIn are parts of stdout that need not be whole lines.
		wantIn  []string
		wantErr string
		check   func(t *testing.T, out string)
	}{
		"nodes": {
			args: []string{"nodes"},
			wantOut: []string{
				"NODE   RESOURCE                                     SERVED BY      CLASS     DRIVER            CAPACITY   ALLOCATED   FREE   BOTH   CONFLICTS",
				"n1     deviceclass.resource.kubernetes.io/gpu       DRA            gpu       gpu.example.com   3          2           1      no     <none>",
				"n1     deviceclass.resource.kubernetes.io/gpu-old   DRA            gpu-old   gpu.example.com   3          2           1      no     <none>",
				"n1     nvidia.com/gpu                               DRA            gpu       gpu.example.com   3          2           1      no     gpu-old",
				"n2     nvidia.com/gpu                               DevicePlugin   gpu       <none>            2          1           1      no     gpu-old",
			},
			wantErrOut: []string{"Server v1.33.13-draext.1, resource.k8s.io/v1beta2, feature gate DRAExtendedResource: on (ALPHA). draext: DRA serves a mapped name where node allocatable lacks it or has it at 0."},
		},
		"nodes -o wide, one node": {
			args: []string{"nodes", "n2", "-o", "wide"},
			wantOut: []string{
				"NODE   RESOURCE         SERVED BY      CLASS   DRIVER   CAPACITY   ALLOCATED   FREE   BOTH   CONFLICTS   ALLOCATABLE   DRA DEVICES   DRA ALLOCATED",
				"n2     nvidia.com/gpu   DevicePlugin   gpu     <none>   2          1           1      no     gpu-old     2             0             0",
			},
		},
		"nodes -o json": {
			args: []string{"nodes", "-o", "json"},
			check: func(t *testing.T, out string) {
				var list nodeResourceList
				if err := json.Unmarshal([]byte(out), &list); err != nil {
					t.Fatal(err)
				}
				if list.APIVersion != "draext.dev/v1alpha1" || list.Kind != "NodeExtendedResourceList" || list.FeatureGate.State != gateOn ||
					list.ServingRule != ruleAbsentOrZero || list.ResourceAPIVersion != "resource.k8s.io/v1beta2" || len(list.Items) != 4 {
					t.Errorf("list = %+v", list)
				}
				for _, field := range []string{`"servedBy": "DRA"`, `"resourceName": "nvidia.com/gpu"`, `"deviceClass": "gpu"`, `"drivers": [`, `"draDevices": 3`, `"conflicts": [`, `"both": false`, `"featureGate": {`} {
					if !strings.Contains(out, field) {
						t.Errorf("JSON lacks %s:\n%s", field, out)
					}
				}
			},
		},
		"nodes -o yaml, metrics forbidden": {
			args: []string{"nodes", "-o", "yaml"}, metricsStatus: http.StatusForbidden,
			wantOut: []string{"apiVersion: draext.dev/v1alpha1", "kind: NodeExtendedResourceList", "  state: unknown", "  reason: the kube-apiserver's /metrics are forbidden to this user", "  servedBy: DevicePlugin"},
		},
		"nodes, unknown node": {args: []string{"nodes", "nosuch"}, wantErr: `get node nosuch: nodes "nosuch" not found`},
		"pod, namespace from the flag": {
			args: []string{"pod", "gpu-pod", "-n", "default"},
			wantOut: []string{
				"CONTAINER   RESOURCE         REQUEST                 DRIVER            POOL   DEVICE     UUID",
				"app         nvidia.com/gpu   container-0-request-0   gpu.example.com   n1     n1-gpu-1   GPU-n1-gpu-1",
			},
			wantErrOut: []string{"Pod default/gpu-pod on node n1: extended resource claim gpu-pod-extended-resources-x7k2p."},
		},
		"pod -o json": {
			args:   []string{"pod", "gpu-pod", "--namespace=default", "-o", "json"},
			wantIn: []string{`"kind": "PodExtendedResources"`, `"resourceClaimName": "gpu-pod-extended-resources-x7k2p"`, `"uuid": "GPU-n1-gpu-1"`, `"request": "container-0-request-0"`},
		},
		"pod -o wide": {
			args:    []string{"pod", "gpu-pod", "-n", "default", "-o", "wide"},
			wantOut: []string{"app         nvidia.com/gpu   container-0-request-0   gpu.example.com   n1     n1-gpu-1   GPU-n1-gpu-1   1          gpu"},
		},
		"pod, namespace from the context": {args: []string{"pod", "gpu-pod"}, wantErr: `get pod team-a/gpu-pod: pods "gpu-pod" not found`},
		"pod without a claim":             {args: []string{"pod", "dp-pod", "-n", "default"}, wantErr: "pod default/dp-pod has no extended resource claim"},
		"pod without a name":              {args: []string{"pod"}, wantErr: "accepts 1 arg(s), received 0"},
		"classes": {
			args: []string{"classes"},
			wantOut: []string{
				"DEVICECLASS   EXTENDED RESOURCE NAMES                                  CONFLICTS",
				"gpu           nvidia.com/gpu, deviceclass.resource.kubernetes.io/gpu   gpu-old",
				"gpu-old       deviceclass.resource.kubernetes.io/gpu-old               nvidia.com/gpu served by gpu",
			},
		},
		"unknown output format": {args: []string{"nodes", "-o", "xml"}, wantErr: `unknown output format "xml" for -o/--output: want json, yaml or wide`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			status := tc.metricsStatus
			if status == 0 {
				status = http.StatusOK
			}
			out, errOut, err := runCommand(t, status, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v (stderr: %s)", err, errOut)
			}
			for _, line := range tc.wantOut {
				if !strings.Contains(out, line+"\n") {
					t.Errorf("stdout lacks the line %q:\n%s", line, out)
				}
			}
			for _, part := range tc.wantIn {
				if !strings.Contains(out, part) {
					t.Errorf("stdout lacks %q:\n%s", part, out)
				}
			}
			for _, line := range tc.wantErrOut {
				if !strings.Contains(errOut, line+"\n") {
					t.Errorf("stderr lacks the line %q:\n%s", line, errOut)
				}
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}
