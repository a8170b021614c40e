// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

const metricsOn = `# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.
# TYPE kubernetes_feature_enabled gauge
kubernetes_feature_enabled{name="DRAAdminAccess",stage="ALPHA"} 0
kubernetes_feature_enabled{name="DRAExtendedResource",stage="ALPHA"} 1
kubernetes_feature_enabled{name="DynamicResourceAllocation",stage="BETA"} 1
`

func TestParseGate(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		metrics    string
		want       gateState
		wantReason string
	}{
		"on":  {metrics: metricsOn, want: gateState{Name: gateName, State: gateOn, Stage: "ALPHA"}},
		"off": {metrics: strings.Replace(metricsOn, `"ALPHA"} 1`, `"ALPHA"} 0`, 1), want: gateState{Name: gateName, State: gateOff, Stage: "ALPHA"}},
		"labels in another order, GA": {
			metrics: `kubernetes_feature_enabled{stage="",name="DRAExtendedResource"} 1`,
			want:    gateState{Name: gateName, State: gateOn},
		},
		"a gate with a longer name is another gate": {
			metrics:    `kubernetes_feature_enabled{name="DRAExtendedResourceX",stage="ALPHA"} 1`,
			want:       gateState{Name: gateName, State: gateUnknown},
			wantReason: "do not list the gate",
		},
		"not listed": {metrics: "apiserver_request_total 1\n", want: gateState{Name: gateName, State: gateUnknown}, wantReason: "do not list the gate"},
		"odd value": {
			metrics:    `kubernetes_feature_enabled{name="DRAExtendedResource",stage="ALPHA"} 0.5`,
			want:       gateState{Name: gateName, State: gateUnknown},
			wantReason: `the value "0.5"`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := parseGate([]byte(tc.metrics), gateName)
			reason := got.Reason
			got.Reason = ""
			if got != tc.want {
				t.Errorf("gate = %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(reason, tc.wantReason) || (tc.wantReason == "") != (reason == "") {
				t.Errorf("reason = %q, want one containing %q", reason, tc.wantReason)
			}
		})
	}
}

// rootClient is a REST client of the server's root at url, as the plugin
// builds it (the discovery client's).
func rootClient(url string) rest.Interface {
	return discovery.NewDiscoveryClientForConfigOrDie(&rest.Config{Host: url}).RESTClient()
}

func TestReadGate(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		status     int
		body       string
		wantState  string
		wantReason string
	}{
		"readable":  {status: http.StatusOK, body: metricsOn, wantState: gateOn},
		"forbidden": {status: http.StatusForbidden, body: `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403}`, wantState: gateUnknown, wantReason: "forbidden"},
		"error":     {status: http.StatusInternalServerError, body: "boom", wantState: gateUnknown, wantReason: "reading the kube-apiserver's /metrics failed"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/metrics" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer server.Close()
			got := readGate(context.Background(), rootClient(server.URL), gateName)
			if got.State != tc.wantState || !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("gate = %+v, want state %s and a reason containing %q", got, tc.wantState, tc.wantReason)
			}
		})
	}
	if got := readGate(context.Background(), nil, gateName); got.State != gateUnknown {
		t.Errorf("without a client: %+v, want unknown", got)
	}
}
