// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"regexp"
	"strings"
	"testing"
)

func TestPullRequest(t *testing.T) {
	t.Parallel()
	const p1 = "0001-features-add-the-gate.patch"
	const p2 = "0002-api-add-a-field.patch"
	const p3 = "0005-quota-count-devices.patch"
	topics := goodTopics + "\n## quota: Quota for DRA-served names\n\n- Kind: bug\n- SIG: api-machinery, scheduling\n- Upstream: proposal\n- Issues: Fixes https://github.com/kubernetes/kubernetes/issues/7\n\nQuota counts every device.\n"
	quota := strings.NewReplacer("Topic: api", "Topic: quota", "Release-Note: NONE", "Release-Note: ResourceQuota counts each device once.",
		"Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653", "Upstream-PR: none").Replace(goodMessage)
	dir := writeSeries(t, map[string]string{
		p1:         patchText("features: add the gate", goodMessage),
		p2:         patchText("api: add a field", strings.Replace(goodMessage, "Release-Note: NONE", "Release-Note: Pods can ask for devices by name.", 1)),
		p3:         patchText("quota: count devices", quota),
		TopicsFile: topics,
	}, []string{p1, p2, p3}, false)
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}

	api, err := s.PullRequest("api")
	if err != nil {
		t.Fatalf("PullRequest(api): %v", err)
	}
	// The template's sections, in its order.
	sections := []string{
		"#### What type of PR is this?\n\n/kind feature\n/sig node\n/sig scheduling\n",
		"#### What this PR does / why we need it:\n\nAdds the fields.\n",
		"- features: add the gate\n- api: add a field\n",
		"#### Which issue(s) this PR is related to:\n\nKEP-5004: " + KEPIssue + "\n",
		"Upstream pull requests this carries or follows: https://github.com/kubernetes/kubernetes/pull/130653\n",
		"#### Special notes for your reviewer:\n\nWritten against v1.33.13. Applies to the release itself.\n",
		"- api: add a field: introduced at 1.33 (drop when: v1.34)\n",
		"#### Does this PR introduce a user-facing change?\n\n```release-note\nPods can ask for devices by name.\n```\n",
		"#### Additional documentation e.g., KEPs (Kubernetes Enhancement Proposals), usage docs, etc.:\n\n```docs\n- [KEP]: " + KEPIssue + "\n```\n",
	}
	rest := api
	for _, want := range sections {
		i := strings.Index(rest, want)
		if i < 0 {
			t.Fatalf("PullRequest(api) lacks, after the sections before it:\n%s\n--- description:\n%s", want, api)
		}
		rest = rest[i+len(want):]
	}
	if !strings.Contains(api, "as a pull request it is a carry for a fork's release-1.33 branch") {
		t.Errorf("a carry topic's description does not say where it can go:\n%s", api)
	}

	quotaPR, err := s.PullRequest("quota")
	if err != nil {
		t.Fatalf("PullRequest(quota): %v", err)
	}
	for _, want := range []string{
		"Upstream lacks this change. Pull requests target master",
		"/kind bug\n/sig api-machinery\n/sig scheduling\n",
		"Fixes https://github.com/kubernetes/kubernetes/issues/7\n",
		"Stacked on the topic(s) api: review those first.",
		"```release-note\nResourceQuota counts each device once.\n```",
	} {
		if !strings.Contains(quotaPR, want) {
			t.Errorf("PullRequest(quota) lacks %q:\n%s", want, quotaPR)
		}
	}
	if regexp.MustCompile(`(?m)^Upstream pull requests`).MatchString(quotaPR) {
		t.Errorf("a topic without upstream pull requests names some:\n%s", quotaPR)
	}

	if _, err := s.PullRequest("scoring"); err == nil || !strings.Contains(err.Error(), "the topics are api, quota") {
		t.Errorf("PullRequest(unknown) = %v, want an error listing the topics", err)
	}
}

func TestReleaseNoteNone(t *testing.T) {
	t.Parallel()
	const p1 = "0001-features-add-the-gate.patch"
	dir := writeSeries(t, map[string]string{p1: patchText("features: add the gate", goodMessage)}, []string{p1}, false)
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	pr, err := s.PullRequest("api")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(pr, "```release-note\nNONE\n```") {
		t.Errorf("a topic whose patches have no release note does not say NONE:\n%s", pr)
	}
}
