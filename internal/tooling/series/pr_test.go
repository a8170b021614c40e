// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// prSeries is a series of four topics: api (carry, two patches), quota
// (proposal), gates (local) and scoring (proposal, no release note).
func prSeries(t *testing.T) *Series {
	t.Helper()
	const p1 = "0001-features-add-the-gate.patch"
	const p2 = "0002-api-add-a-field.patch"
	const p3 = "0005-quota-count-devices.patch"
	const p4 = "0006-kubelet-keep-pods-when-the-gate-goes.patch"
	const p5 = "0007-scheduler-score-devices.patch"
	topics := goodTopics +
		"\n## quota: Quota for DRA-served names\n\n- Kind: bug\n- SIG: api-machinery, scheduling\n- Upstream: proposal\n- Issues: Fixes https://github.com/kubernetes/kubernetes/issues/7\n\nQuota counts every device.\n" +
		"\n## gates: Gate changes keep pods\n\n- Kind: bug\n- SIG: node\n- Upstream: local\n\nThe gate can go off.\n" +
		"\n## scoring: Scoring\n\n- Kind: feature\n- SIG: scheduling\n- Upstream: proposal\n\nScores devices.\n"
	quota := strings.NewReplacer("Topic: api", "Topic: quota", "Release-Note: NONE", "Release-Note: Fixed a bug where ResourceQuota counted a device twice.",
		"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: none").Replace(goodMessage)
	gates := strings.NewReplacer("Topic: api", "Topic: gates", "Drop-When: v1.34", "Drop-When: v1.37",
		"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: none").Replace(goodMessage)
	scoring := strings.NewReplacer("Topic: api", "Topic: scoring", "Drop-When: v1.34", "Drop-When: never",
		"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: none").Replace(goodMessage)
	api2 := strings.NewReplacer("Release-Note: NONE", "Release-Note: Pods can ask for devices by name.",
		"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: https://github.com/kubernetes/kubernetes/pull/134882",
		"Drop-When: v1.34", "Drop-When: v1.35").Replace(goodMessage)
	dir := writeSeries(t, map[string]string{
		p1:         patchText("features: add the gate", goodMessage),
		p2:         patchText("api: add a field", api2),
		p3:         patchText("quota: count devices", quota),
		p4:         patchText("kubelet: keep pods when the gate goes", gates),
		p5:         patchText("scheduler: score devices", scoring),
		TopicsFile: topics,
	}, []string{p1, p2, p3, p4, p5}, false)
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return s
}

func TestPullRequest(t *testing.T) {
	t.Parallel()
	s := prSeries(t)
	testCases := map[string]struct {
		topic string
		// want are parts of the description, in this order.
		want []string
		// wantNot must not appear in the description.
		wantNot *regexp.Regexp
		// wantErr is part of the error; wantRefused says it is a
		// *NoPullRequestError.
		wantErr     string
		wantRefused bool
	}{
		"proposal: the template's sections in its order": {
			topic: "quota",
			want: []string{
				"Upstream lacks this change. Pull requests target master",
				"#### What type of PR is this?\n\n/kind bug\n/sig api-machinery\n/sig scheduling\n",
				"#### What this PR does / why we need it:\n\nQuota counts every device.\n",
				"- quota: count devices\n",
				"#### Which issue(s) this PR is related to:\n\nKEP-5004: " + KEPIssue + "\nFixes #7\n",
				"#### Special notes for your reviewer:\n\nWritten against v1.33.13. Stacked on the topic(s) api: review those first.\n",
				"- quota: count devices: introduced at 1.33 (drop when: v1.34)\n",
				"#### Does this PR introduce a user-facing change?\n\n```release-note\nFixed a bug where ResourceQuota counted a device twice.\n```\n",
				"#### Additional documentation e.g., KEPs (Kubernetes Enhancement Proposals), usage docs, etc.:\n\n```docs\n- [KEP]: " + KEPIssue + "\n```\n",
			},
			wantNot: regexp.MustCompile(`(?m)^Upstream pull requests`),
		},
		"proposal without release notes says NONE": {
			topic: "scoring",
			want:  []string{"```release-note\nNONE\n```"},
		},
		"carry: upstream has it, from the first Drop-When with its pull requests": {
			topic:       "api",
			wantRefused: true,
			wantErr:     "topic api is carry: upstream has this change (from v1.34; pull requests https://github.com/kubernetes/kubernetes/pull/130653, https://github.com/kubernetes/kubernetes/pull/134882), so it gets no upstream pull request description",
		},
		"carry: the error says where proposals go": {
			topic:       "api",
			wantRefused: true,
			wantErr:     "what upstream lacks is proposed from the forward series (patches/v1.37, in progress)",
		},
		"local: only this series needs it": {
			topic:       "gates",
			wantRefused: true,
			wantErr:     "topic gates is local: only this series needs this change, upstream has no use for it, so it gets no upstream pull request description",
		},
		"unknown topic": {
			topic:   "metrics",
			wantErr: "no topic \"metrics\"; the topics are api, quota, gates, scoring",
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := s.PullRequest(tc.topic)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PullRequest(%s) error = %v, want one containing %q", tc.topic, err, tc.wantErr)
				}
				var refused *NoPullRequestError
				if errors.As(err, &refused) != tc.wantRefused {
					t.Errorf("PullRequest(%s) error is a *NoPullRequestError: %v, want %v", tc.topic, !tc.wantRefused, tc.wantRefused)
				}
				if got != "" {
					t.Errorf("PullRequest(%s) wrote a description with its error:\n%s", tc.topic, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("PullRequest(%s): %v", tc.topic, err)
			}
			rest := got
			for _, want := range tc.want {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("PullRequest(%s) lacks, after the parts before it:\n%s\n--- description:\n%s", tc.topic, want, got)
				}
				rest = rest[i+len(want):]
			}
			if tc.wantNot != nil && tc.wantNot.MatchString(got) {
				t.Errorf("PullRequest(%s) has %s:\n%s", tc.topic, tc.wantNot, got)
			}
		})
	}
}

func TestReleaseBefore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"v1.34", "v1.35", true},
		{"v1.35", "v1.34", false},
		{"v1.37", "v1.37.1", true},
		{"v1.37.1", "v1.37", false},
		{"v1.9", "v1.10", true},
		{"v1.34", "v1.34", false},
	} {
		if got := releaseBefore(tc.a, tc.b); got != tc.want {
			t.Errorf("releaseBefore(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// independentSeries is a series whose topics each apply to the base alone
// (the forward series): quota (security-sensitive, two patches, one
// release note) and scoring.
func independentSeries(t *testing.T, secondNote string) (*Series, error) {
	t.Helper()
	const p1 = "0010-quota-count-devices.patch"
	const p2 = "0020-test-quota-of-devices.patch"
	const p3 = "0030-scheduler-score-devices.patch"
	topics := "# Topics\n\n- Topics: independent\n" +
		"\n## quota: Quota for DRA-served names\n\n- Kind: bug\n- SIG: api-machinery\n- Upstream: proposal\n- Security-sensitive: yes\n- Issues: Fixes https://github.com/kubernetes/kubernetes/issues/7, https://github.com/kubernetes/kubernetes/pull/8\n\nQuota counts every device.\n" +
		"\n## scoring: Scoring\n\n- Kind: feature\n- SIG: scheduling\n- Upstream: proposal\n\nScores devices.\n"
	forward := func(topic, note string) string {
		return strings.NewReplacer("Topic: api", "Topic: "+topic, "Release-Note: NONE", "Release-Note: "+note,
			"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: none", "Drop-When: v1.34", "Drop-When: never").Replace(goodMessage)
	}
	dir := writeSeries(t, map[string]string{
		p1:         patchText("quota: count devices", forward("quota", "Fixed a bug where ResourceQuota counted a device twice.")),
		p2:         patchText("test: quota of devices", forward("quota", secondNote)),
		p3:         patchText("scheduler: score devices", forward("scoring", NoReleaseNote)),
		TopicsFile: topics,
	}, []string{p1, p2, p3}, false)
	return Load(dir)
}

func TestPullRequestIndependent(t *testing.T) {
	t.Parallel()
	s, err := independentSeries(t, NoReleaseNote)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Layout != Independent {
		t.Fatalf("Layout = %q, want %q", s.Layout, Independent)
	}
	got, err := s.PullRequest("quota")
	if err != nil {
		t.Fatalf("PullRequest(quota): %v", err)
	}
	rest := got
	for _, want := range []string{
		"<!-- SECURITY-SENSITIVE: report this to the Kubernetes Security Response Committee",
		"/kind bug\n/sig api-machinery\n",
		"The pull request has 2 commit(s); each builds and vets on its own:\n\n- quota: count devices\n- test: quota of devices\n",
		"KEP-5004: " + KEPIssue + "\nFixes #7\nhttps://github.com/kubernetes/kubernetes/pull/8\n",
		"Written against v1.33.13. Applies to v1.33.13 alone; no other topic of the series is needed.\n",
		"```release-note\nFixed a bug where ResourceQuota counted a device twice.\n```\n",
		"- [KEP]: " + KEPIssue + "\n```\n",
	} {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("PullRequest(quota) lacks, after the parts before it:\n%s\n--- description:\n%s", want, got)
		}
		rest = rest[i+len(want):]
	}
	for _, not := range []string{"Stacked on", "drop when", "make patches-bisect"} {
		if strings.Contains(got, not) {
			t.Errorf("PullRequest(quota) has %q, which a topic of an independent series does not:\n%s", not, got)
		}
	}
	scoring, err := s.PullRequest("scoring")
	if err != nil {
		t.Fatalf("PullRequest(scoring): %v", err)
	}
	if strings.Contains(scoring, "SECURITY-SENSITIVE") {
		t.Errorf("PullRequest(scoring) is marked security-sensitive:\n%s", scoring)
	}
}

func TestIndependentTopicHasOneReleaseNote(t *testing.T) {
	t.Parallel()
	_, err := independentSeries(t, "Added a test of ResourceQuota.")
	if err == nil || !strings.Contains(err.Error(), "topic quota: 2 patches have a Release-Note (0010-quota-count-devices.patch, 0020-test-quota-of-devices.patch); a pull request has one") {
		t.Fatalf("Load: error %v, want one about two release notes in topic quota", err)
	}
}
