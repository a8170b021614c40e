// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// KEPIssue is the enhancement issue of KEP-5004.
const KEPIssue = "https://github.com/kubernetes/enhancements/issues/5004"

// Topic returns the topic with the given id.
func (s *Series) Topic(id string) (Topic, bool) {
	for _, t := range s.Topics {
		if t.ID == id {
			return t, true
		}
	}
	return Topic{}, false
}

// TopicPatches returns the patches of a topic in series order.
func (s *Series) TopicPatches(id string) []Patch {
	var out []Patch
	for _, p := range s.Patches {
		if p.Topic() == id {
			out = append(out, p)
		}
	}
	return out
}

// ForwardSeries is where the changes upstream lacks are proposed from: a
// series against a current release, whose pull requests target master.
const ForwardSeries = "the forward series (patches/v1.37, in progress)"

// NoPullRequestError says why a topic gets no upstream pull request
// description: upstream has it (carry) or only this series needs it (local).
type NoPullRequestError struct {
	Topic    string
	Upstream string
	// Why says it in words, with the upstream release and pull requests of
	// a carry topic.
	Why string
}

func (e *NoPullRequestError) Error() string {
	return fmt.Sprintf("topic %s is %s: %s, so it gets no upstream pull request description; descriptions are for proposal topics, and what upstream lacks is proposed from %s", e.Topic, e.Upstream, e.Why, ForwardSeries)
}

// PullRequest writes the description of the pull request a topic makes, in
// the sections of kubernetes/kubernetes' .github/PULL_REQUEST_TEMPLATE.md.
// Only a proposal topic has one: for a carry or local topic it returns a
// *NoPullRequestError. The series must have loaded without error.
func (s *Series) PullRequest(id string) (string, error) {
	t, ok := s.Topic(id)
	if !ok {
		ids := make([]string, len(s.Topics))
		for i, t := range s.Topics {
			ids[i] = t.ID
		}
		return "", fmt.Errorf("no topic %q; the topics are %s", id, strings.Join(ids, ", "))
	}
	patches := s.TopicPatches(id)
	if len(patches) == 0 {
		return "", fmt.Errorf("topic %s has no patch", id)
	}
	switch t.Upstream {
	case Carry:
		return "", &NoPullRequestError{Topic: id, Upstream: Carry, Why: "upstream has this change" + upstreamHas(patches)}
	case Local:
		return "", &NoPullRequestError{Topic: id, Upstream: Local, Why: "only this series needs this change, upstream has no use for it"}
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("<!-- %s: topic %s of the draext series (%s-draext.%d). ", t.Title, t.ID, s.GitTag, s.Release)
	w("Upstream lacks this change. Pull requests target master: rebase the branch onto master before you open it. -->\n\n")
	if t.SecuritySensitive {
		w("<!-- SECURITY-SENSITIVE: report this to the Kubernetes Security Response Committee (security@kubernetes.io) and wait for its answer before you open a public pull request (SECURITY.md). -->\n\n")
	}

	w("#### What type of PR is this?\n\n")
	for _, k := range t.Kinds {
		w("/kind %s\n", k)
	}
	for _, sig := range t.SIGs {
		w("/sig %s\n", sig)
	}

	w("\n#### What this PR does / why we need it:\n\n%s\n\n", t.Text)
	if s.Layout == Independent {
		w("The pull request has %d commit(s); each builds and vets on its own:\n\n", len(patches))
	} else {
		w("The pull request has %d commit(s); each builds and vets on its own (make patches-bisect checks it):\n\n", len(patches))
	}
	for _, p := range patches {
		w("- %s\n", p.Subject)
	}

	w("\n#### Which issue(s) this PR is related to:\n\n")
	w("KEP-5004: %s\n", KEPIssue)
	for _, i := range t.Issues {
		w("%s\n", upstreamIssue(i))
	}
	if prs := upstreamPRs(patches); len(prs) > 0 {
		w("Upstream pull requests this carries or follows: %s\n", strings.Join(prs, ", "))
	}

	w("\n#### Special notes for your reviewer:\n\n")
	w("Written against %s. ", s.GitTag)
	if s.Layout == Independent {
		// One pull request against the release alone: no stack, no
		// backport notes.
		w("Applies to %s alone; no other topic of the series is needed.\n", s.GitTag)
	} else {
		if deps := s.dependsOn(id); len(deps) > 0 {
			w("Stacked on the topic(s) %s: review those first.\n", strings.Join(deps, ", "))
		} else {
			w("Applies to the release itself.\n")
		}
		w("\nHow each commit differs from upstream, and from which release it is no longer needed:\n\n")
		for _, p := range patches {
			w("- %s: %s (drop when: %s)\n", p.Subject, p.Trailers["Backport-Delta"], p.Trailers["Drop-When"])
		}
	}

	w("\n#### Does this PR introduce a user-facing change?\n\n```release-note\n")
	notes := releaseNotes(patches)
	if len(notes) == 0 {
		w("%s\n", NoReleaseNote)
	}
	for _, n := range notes {
		w("%s\n", n)
	}
	w("```\n")

	w("\n#### Additional documentation e.g., KEPs (Kubernetes Enhancement Proposals), usage docs, etc.:\n\n```docs\n")
	w("- [KEP]: %s\n", KEPIssue)
	for _, d := range t.Docs {
		w("- %s\n", d)
	}
	w("```\n")
	return b.String(), nil
}

// upstreamIssue writes an entry of "- Issues:" as upstream's template
// spells it: "Fixes #N" for an issue of kubernetes/kubernetes, the link
// otherwise.
func upstreamIssue(entry string) string {
	const kk = "https://github.com/kubernetes/kubernetes/issues/"
	if rest, ok := strings.CutPrefix(entry, "Fixes "); ok {
		if n, ok := strings.CutPrefix(rest, kk); ok {
			return "Fixes #" + n
		}
	}
	return entry
}

// dependsOn lists the topics before id in stacking order that have patches.
func (s *Series) dependsOn(id string) []string {
	var out []string
	for _, t := range s.Topics {
		if t.ID == id {
			break
		}
		if len(s.TopicPatches(t.ID)) > 0 {
			out = append(out, t.ID)
		}
	}
	return out
}

func releaseNotes(patches []Patch) []string {
	var out []string
	for _, p := range patches {
		if n := strings.TrimSpace(p.Trailers["Release-Note"]); n != "" && n != NoReleaseNote {
			out = append(out, n)
		}
	}
	return out
}

func upstreamPRs(patches []Patch) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range patches {
		for _, u := range strings.Split(p.Trailers["Upstream-PR"], ",") {
			u = strings.TrimSpace(u)
			if u == "" || u == "none" || seen[u] {
				continue
			}
			seen[u] = true
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// upstreamHas says from which release and through which pull requests
// upstream has a carry topic's change, from the patches' Drop-When: and
// Upstream-PR: trailers, as " (from v1.35: <urls>)"; "" when they name none.
func upstreamHas(patches []Patch) string {
	first := ""
	for _, p := range patches {
		v := p.Trailers["Drop-When"]
		if v == "" || v == "never" {
			continue
		}
		if first == "" || releaseBefore(v, first) {
			first = v
		}
	}
	var parts []string
	if first != "" {
		parts = append(parts, "from "+first)
	}
	if prs := upstreamPRs(patches); len(prs) > 0 {
		parts = append(parts, "pull requests "+strings.Join(prs, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// releaseBefore compares two Drop-When releases such as v1.34 and v1.37.1.
func releaseBefore(a, b string) bool {
	pa, pb := releaseParts(a), releaseParts(b)
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

func releaseParts(v string) []int {
	var out []int
	for _, f := range strings.Split(strings.TrimPrefix(v, "v"), ".") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}
