// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseRequire runs without a cluster, beside the Ginkgo suite.
func TestParseRequire(t *testing.T) {
	for name, tc := range map[string]struct {
		value   string
		want    map[string]bool
		wantErr string
	}{
		"unset":          {value: "", want: map[string]bool{}},
		"one":            {value: "driver", want: map[string]bool{"driver": true}},
		"several, space": {value: "cluster, driver,device-plugin", want: map[string]bool{"cluster": true, "driver": true, "device-plugin": true}},
		"empty entries":  {value: ",driver,,", want: map[string]bool{"driver": true}},
		"unknown":        {value: "driver,drvier", wantErr: `unknown capability "drvier"`},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseRequire(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseRequire(%q) error = %v, want one containing %q", tc.value, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRequire(%q): %v", tc.value, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseRequire(%q) = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}
