// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"fmt"
	"sort"
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

// PullRequest writes the description of the pull request a topic makes, in
// the sections of kubernetes/kubernetes' .github/PULL_REQUEST_TEMPLATE.md.
// The series must have loaded without error.
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
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	w("<!-- %s: topic %s of the draext series (%s-draext.%d). ", t.Title, t.ID, s.GitTag, s.Release)
	switch t.Upstream {
	case Carry:
		w("Upstream has this change; as a pull request it is a carry for a fork's release-%s branch (upstream takes no features into release branches). -->\n\n", minor(s.GitTag))
	default:
		w("Upstream lacks this change. Pull requests target master: rebase the branch onto master before you open it. -->\n\n")
	}

	w("#### What type of PR is this?\n\n")
	for _, k := range t.Kinds {
		w("/kind %s\n", k)
	}
	for _, sig := range t.SIGs {
		w("/sig %s\n", sig)
	}

	w("\n#### What this PR does / why we need it:\n\n%s\n\n", t.Text)
	w("The pull request has %d commit(s); each builds and vets on its own (make patches-bisect checks it):\n\n", len(patches))
	for _, p := range patches {
		w("- %s\n", p.Subject)
	}

	w("\n#### Which issue(s) this PR is related to:\n\n")
	w("KEP-5004: %s\n", KEPIssue)
	for _, i := range t.Issues {
		w("%s\n", i)
	}
	if prs := upstreamPRs(patches); len(prs) > 0 {
		w("Upstream pull requests this carries or follows: %s\n", strings.Join(prs, ", "))
	}

	w("\n#### Special notes for your reviewer:\n\n")
	w("Written against %s. ", s.GitTag)
	if deps := s.dependsOn(id); len(deps) > 0 {
		w("Stacked on the topic(s) %s: review those first.\n", strings.Join(deps, ", "))
	} else {
		w("Applies to the release itself.\n")
	}
	w("\nHow each commit differs from upstream, and from which release it is no longer needed:\n\n")
	for _, p := range patches {
		w("- %s: %s (drop when: %s)\n", p.Subject, p.Trailers["Backport-Delta"], p.Trailers["Drop-When"])
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

// minor turns v1.33.13 into 1.33.
func minor(tag string) string {
	parts := strings.SplitN(strings.TrimPrefix(tag, "v"), ".", 3)
	if len(parts) < 2 {
		return tag
	}
	return parts[0] + "." + parts[1]
}
