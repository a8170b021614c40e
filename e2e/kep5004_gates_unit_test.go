// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"slices"
	"testing"
)

func TestWithGateUnit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		value bool
		want  []string
	}{
		{
			name:  "the gate in the flag is replaced, the others kept in order",
			args:  []string{"kube-scheduler", "--v=2", "--feature-gates=A=true,DRAExtendedResource=true,B=false"},
			value: false,
			want:  []string{"kube-scheduler", "--v=2", "--feature-gates=A=true,B=false,DRAExtendedResource=false"},
		},
		{
			name:  "a flag without the gate gets it",
			args:  []string{"kube-apiserver", "--feature-gates=A=true"},
			value: true,
			want:  []string{"kube-apiserver", "--feature-gates=A=true,DRAExtendedResource=true"},
		},
		{
			name:  "no flag: one is appended (the kubelet's gates are in its config file)",
			args:  []string{"kubelet", "--config=/k.yaml"},
			value: false,
			want:  []string{"kubelet", "--config=/k.yaml", "--feature-gates=DRAExtendedResource=false"},
		},
		{
			name:  "every flag is changed, a gate whose name only starts alike is kept",
			args:  []string{"x", "--feature-gates=DRAExtendedResourceX=true", "--feature-gates=DRAExtendedResource=false"},
			value: true,
			want:  []string{"x", "--feature-gates=DRAExtendedResourceX=true,DRAExtendedResource=true", "--feature-gates=DRAExtendedResource=true"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.args)
			if got := withGate(tc.args, "DRAExtendedResource", tc.value); !slices.Equal(got, tc.want) {
				t.Errorf("withGate(%q) = %q, want %q", tc.args, got, tc.want)
			}
			if !slices.Equal(tc.args, before) {
				t.Errorf("withGate changed its argument to %q", tc.args)
			}
		})
	}
}
