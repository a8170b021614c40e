// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	s := &Series{Patches: []Patch{
		{Number: 1, Area: "features", Subject: "features: add the gate", Trailers: map[string]string{
			"Upstream-PR": "https://github.com/kubernetes/kubernetes/pull/130653", "Backport-Delta": "none", "Drop-When": "v1.34",
		}},
		{Number: 12, Area: "scheduler", Subject: "scheduler: a | b", Trailers: map[string]string{
			"Upstream-PR": "none", "Backport-Delta": "written for\tthis series", "Drop-When": "never",
		}},
		{Number: 13, Area: "kubelet", Subject: "kubelet: two", Trailers: map[string]string{
			"Upstream-PR": "https://github.com/kubernetes/kubernetes/pull/1, https://github.com/NVIDIA/k8s-dra-driver-gpu/pull/2", "Backport-Delta": "none", "Drop-When": "v1.35",
		}},
	}}
	want := `| # | Area | What the patch does | Upstream | Differs from upstream | Drop when |
|---|---|---|---|---|---|
| 0001 | features | add the gate | [#130653](https://github.com/kubernetes/kubernetes/pull/130653) | none | v1.34 |
| 0012 | scheduler | a \| b | - | written for this series | never |
| 0013 | kubelet | two | [#1](https://github.com/kubernetes/kubernetes/pull/1), [NVIDIA/k8s-dra-driver-gpu#2](https://github.com/NVIDIA/k8s-dra-driver-gpu/pull/2) | none | v1.35 |
`
	if got := s.Table(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestReplaceTable(t *testing.T) {
	doc := "# Patches\n\nIntro.\n\n" + TableBegin + "\nold rows\n" + TableEnd + "\n\nAfter.\n"
	testcases := map[string]struct {
		doc, want, wantErr string
	}{
		"replaced": {
			doc:  doc,
			want: "# Patches\n\nIntro.\n\n" + TableBegin + "\n| new |\n" + TableEnd + "\n\nAfter.\n",
		},
		"no markers": {
			doc:     "# Patches\n",
			wantErr: "the document has no generated table",
		},
		"two tables": {
			doc:     doc + doc,
			wantErr: "exactly one BEGIN marker",
		},
		"end before begin": {
			doc:     TableEnd + "\n" + TableBegin + "\n",
			wantErr: "exactly one BEGIN marker",
		},
	}
	for name, tc := range testcases {
		t.Run(name, func(t *testing.T) {
			got, err := ReplaceTable(tc.doc, "| new |\n")
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("unexpected error: %v", err)
			case got != tc.want:
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
