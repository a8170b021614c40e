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

func TestTableByTopic(t *testing.T) {
	trailers := func(topic string) map[string]string {
		return map[string]string{"Topic": topic, "Upstream-PR": "none", "Backport-Delta": "none", "Drop-When": "never"}
	}
	s := &Series{
		Topics: []Topic{{ID: "api", Title: "The API", Upstream: Carry}, {ID: "preemption", Title: "Preemption", Upstream: Proposal}},
		Patches: []Patch{
			{Number: 1, Area: "api", Subject: "api: one", Trailers: trailers("api")},
			{Number: 3, Area: "scheduler", Subject: "scheduler: preempt", Trailers: trailers("preemption")},
			{Number: 4, Area: "api", Subject: "api: two", Trailers: trailers("api")},
		},
	}
	want := "### The API\n\nTopic `api`, carry (upstream has it), 2 patch(es); `make pr-branches` makes it branch `pr/01-api`.\n\n" +
		"| # | Area | What the patch does | Upstream | Differs from upstream | Drop when |\n|---|---|---|---|---|---|\n" +
		"| 0001 | api | one | - | none | never |\n| 0004 | api | two | - | none | never |\n\n" +
		"### Preemption\n\nTopic `preemption`, proposal (beyond upstream, to be proposed), 1 patch(es); `make pr-branches` makes it branch `pr/02-preemption`.\n\n" +
		"| # | Area | What the patch does | Upstream | Differs from upstream | Drop when |\n|---|---|---|---|---|---|\n" +
		"| 0003 | scheduler | preempt | - | none | never |\n"
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
