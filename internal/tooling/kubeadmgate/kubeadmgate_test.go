// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeadmgate

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// v1beta4 as kubeadm v1.33 stores it in ConfigMap kubeadm-config on kind.
const clusterV1beta4 = `apiServer:
  certSANs:
  - localhost
  extraArgs:
  - name: feature-gates
    value: DRADeviceTaints=true,DynamicResourceAllocation=true
  - name: runtime-config
    value: resource.k8s.io/v1beta1=true
apiVersion: kubeadm.k8s.io/v1beta4
controllerManager:
  extraArgs:
  - name: enable-hostpath-provisioner
    value: "true"
  - name: feature-gates
    value: DynamicResourceAllocation=true
kind: ClusterConfiguration
kubernetesVersion: v1.33.13
scheduler:
  extraArgs:
  - name: v
    value: "4"
`

const clusterV1beta3 = `apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
apiServer:
  extraArgs:
    feature-gates: DynamicResourceAllocation=true
    runtime-config: resource.k8s.io/v1beta1=true
scheduler: {}
`

const kubelet = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
featureGates:
  DynamicResourceAllocation: true
imageGCHighThresholdPercent: 100
`

func TestSet(t *testing.T) {
	testCases := map[string]struct {
		config    string
		component string
		gate      string
		value     bool
		// path to the changed value, and what it must be
		path    []any
		want    any
		wantErr string
	}{
		"v1beta4 apiServer: appended to the existing gates": {
			config: clusterV1beta4, component: "apiServer", gate: "DRAExtendedResource", value: true,
			path: []any{"apiServer", "extraArgs", 0, "value"},
			want: "DRADeviceTaints=true,DynamicResourceAllocation=true,DRAExtendedResource=true",
		},
		"v1beta4 controllerManager: second argument": {
			config: clusterV1beta4, component: "controllerManager", gate: "DRAExtendedResource", value: true,
			path: []any{"controllerManager", "extraArgs", 1, "value"},
			want: "DynamicResourceAllocation=true,DRAExtendedResource=true",
		},
		"v1beta4 scheduler without gates: a feature-gates argument is added": {
			config: clusterV1beta4, component: "scheduler", gate: "DRAExtendedResource", value: true,
			path: []any{"scheduler", "extraArgs", 1},
			want: map[string]any{"name": "feature-gates", "value": "DRAExtendedResource=true"},
		},
		"v1beta4: a gate that is there changes in place": {
			config: clusterV1beta4, component: "apiServer", gate: "DynamicResourceAllocation", value: false,
			path: []any{"apiServer", "extraArgs", 0, "value"},
			want: "DRADeviceTaints=true,DynamicResourceAllocation=false",
		},
		"v1beta3 apiServer": {
			config: clusterV1beta3, component: "apiServer", gate: "DRAExtendedResource", value: true,
			path: []any{"apiServer", "extraArgs", "feature-gates"},
			want: "DynamicResourceAllocation=true,DRAExtendedResource=true",
		},
		"v1beta3 scheduler without extraArgs": {
			config: clusterV1beta3, component: "scheduler", gate: "DRAExtendedResource", value: true,
			path: []any{"scheduler", "extraArgs", "feature-gates"},
			want: "DRAExtendedResource=true",
		},
		"kubelet": {
			config: kubelet, component: "kubelet", gate: "DRAExtendedResource", value: true,
			path: []any{"featureGates", "DRAExtendedResource"},
			want: true,
		},
		"kubelet without featureGates": {
			config: "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n", component: "kubelet",
			gate: "DRAExtendedResource", value: false,
			path: []any{"featureGates", "DRAExtendedResource"},
			want: false,
		},
		"kubelet given a ClusterConfiguration": {
			config: clusterV1beta4, component: "kubelet", gate: "DRAExtendedResource", value: true,
			wantErr: `component kubelet needs a KubeletConfiguration (ConfigMap kubelet-config, key kubelet), not kind "ClusterConfiguration"`,
		},
		"apiServer given a KubeletConfiguration": {
			config: kubelet, component: "apiServer", gate: "DRAExtendedResource", value: true,
			wantErr: `component apiServer needs a ClusterConfiguration`,
		},
		"unknown component": {
			config: clusterV1beta4, component: "etcd", gate: "DRAExtendedResource", value: true,
			wantErr: `unknown component "etcd" (one of apiServer, controllerManager, scheduler, kubelet)`,
		},
		"bad gate name": {
			config: clusterV1beta4, component: "apiServer", gate: "DRAExtendedResource=true,X", value: true,
			wantErr: `is not a feature gate name`,
		},
		"unknown apiVersion": {
			config: "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n", component: "apiServer",
			gate: "DRAExtendedResource", value: true,
			wantErr: `only kubeadm.k8s.io/v1beta3 and v1beta4 are known`,
		},
		"broken feature-gates value": {
			config:    "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - name: feature-gates\n    value: DynamicResourceAllocation\n",
			component: "apiServer", gate: "DRAExtendedResource", value: true,
			wantErr: `apiServer.extraArgs: [0]: feature-gates "DynamicResourceAllocation": "DynamicResourceAllocation" is not GATE=BOOL`,
		},
		"v1beta3 extraArgs given as a list": {
			config:    "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - name: feature-gates\n    value: A=true\n",
			component: "apiServer", gate: "DRAExtendedResource", value: true,
			wantErr: `apiServer.extraArgs: not a map of flags (kubeadm.k8s.io/v1beta3)`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			out, err := Set([]byte(tc.config), tc.component, tc.gate, tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got, before map[string]any
			if err := yaml.Unmarshal(out, &got); err != nil {
				t.Fatalf("output is no YAML: %v\n%s", err, out)
			}
			if err := yaml.Unmarshal([]byte(tc.config), &before); err != nil {
				t.Fatal(err)
			}
			if v := lookup(t, got, tc.path); !reflect.DeepEqual(v, tc.want) {
				t.Errorf("%v = %#v, want %#v\n%s", tc.path, v, tc.want, out)
			}
			// Everything outside the component is kept.
			for key, value := range before {
				if key == tc.path[0] {
					continue
				}
				if !reflect.DeepEqual(got[key], value) {
					t.Errorf("%s changed: %#v, was %#v", key, got[key], value)
				}
			}
			// Setting it again changes nothing.
			again, err := Set(out, tc.component, tc.gate, tc.value)
			if err != nil || string(again) != string(out) {
				t.Errorf("a second Set changed the output (err %v):\n%s\nthen\n%s", err, out, again)
			}
		})
	}
}

// lookup follows path (map keys and list indexes) through doc.
func lookup(t *testing.T, doc any, path []any) any {
	t.Helper()
	for _, p := range path {
		switch key := p.(type) {
		case string:
			m, ok := doc.(map[string]any)
			if !ok {
				t.Fatalf("at %q: not a map: %#v", key, doc)
			}
			doc = m[key]
		case int:
			l, ok := doc.([]any)
			if !ok || key >= len(l) {
				t.Fatalf("at [%d]: not a list that long: %#v", key, doc)
			}
			doc = l[key]
		}
	}
	return doc
}

func TestParseAssignment(t *testing.T) {
	testCases := map[string]struct {
		in        string
		component string
		gate      string
		value     bool
		wantErr   string
	}{
		"on":            {in: "apiServer:DRAExtendedResource=true", component: "apiServer", gate: "DRAExtendedResource", value: true},
		"off":           {in: "kubelet:DRAExtendedResource=false", component: "kubelet", gate: "DRAExtendedResource"},
		"no component":  {in: "DRAExtendedResource=true", wantErr: "want COMPONENT:GATE=true|false"},
		"no value":      {in: "scheduler:DRAExtendedResource", wantErr: "want COMPONENT:GATE=true|false"},
		"not a boolean": {in: "scheduler:DRAExtendedResource=yes", wantErr: `the value of gate DRAExtendedResource must be true or false, not "yes"`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			component, gate, value, err := ParseAssignment(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || component != tc.component || gate != tc.gate || value != tc.value {
				t.Errorf("got %q %q %t %v, want %q %q %t", component, gate, value, err, tc.component, tc.gate, tc.value)
			}
		})
	}
}
