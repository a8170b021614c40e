// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// TopicsFile is the file of a series directory that describes its topics:
// the pull requests the series falls into, in the order they stack.
const TopicsFile = "TOPICS.md"

// Where a topic stands against upstream Kubernetes.
const (
	// Carry: upstream has the change (1.34 or later); the topic carries it to
	// the base release.
	Carry = "carry"
	// Proposal: beyond upstream; the topic is to be proposed upstream.
	Proposal = "proposal"
	// Local: beyond upstream, but only this series needs it (upstream made
	// it unnecessary), so it is not proposed.
	Local = "local"
)

// How the topics of a series relate, the "- Topics:" line of the preamble.
const (
	// Stacked: each topic needs the topics above it (the 1.33 series).
	Stacked = "stacked"
	// Independent: each topic applies, builds and passes its tests on the
	// base release alone (the forward series).
	Independent = "independent"
)

// Kinds are the /kind labels of kubernetes/kubernetes a topic may carry.
var Kinds = []string{"api-change", "bug", "cleanup", "documentation", "feature", "flake"}

// Topic is one pull request's worth of the series.
type Topic struct {
	// ID is what the patches' Topic: trailer names.
	ID string
	// Title is the pull request's title.
	Title string
	// Kinds and SIGs become the /kind and /sig lines of the description.
	Kinds []string
	SIGs  []string
	// Upstream is Carry, Proposal or Local.
	Upstream string
	// Issues are the issue references of the description (upstream issues
	// and enhancements).
	Issues []string
	// Docs are extra lines of the description's docs block.
	Docs []string
	// SecuritySensitive topics go to the Kubernetes Security Response
	// Committee before any public pull request (SECURITY.md).
	SecuritySensitive bool
	// Text says what the pull request does and why, in Markdown.
	Text string
}

var (
	topicHeadingRE = regexp.MustCompile(`^## ([a-z][a-z0-9-]*): (\S.*)$`)
	topicFieldRE   = regexp.MustCompile(`^- ([A-Z][A-Za-z-]*): (.*)$`)
	sigRE          = regexp.MustCompile(`^[a-z][a-z-]*$`)
	// issueRE is one entry of "- Issues:": a link to an issue (/issues/N)
	// or a pull request (/pull/N) on GitHub, which says which one it is,
	// optionally after the keyword of upstream's template.
	issueRE = regexp.MustCompile(`^((Fixes|Closes|Part of) )?https://github\.com/[^/\s]+/[^/\s]+/(issues|pull)/\d+$`)
)

// ParseTopics reads a topics file: an optional preamble, then one section
// per topic, in stacking order:
//
//	## <id>: <title>
//
//	- Kind: feature
//	- SIG: scheduling, node
//	- Upstream: carry | proposal | local
//	- Issues: https://github.com/kubernetes/kubernetes/issues/131730, https://github.com/kubernetes/kubernetes/pull/139141
//	- Docs: [Usage]: https://...
//
//	What the pull request does and why (the rest of the section).
//
// It checks each topic for what a pull request description needs.
func ParseTopics(data []byte) ([]Topic, error) {
	var topics []Topic
	var errs []error
	var cur *Topic
	var text []string
	inFields := false
	finish := func() {
		if cur == nil {
			return
		}
		cur.Text = strings.TrimSpace(strings.Join(text, "\n"))
		errs = append(errs, cur.check()...)
		topics = append(topics, *cur)
		cur, text = nil, nil
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			finish()
			m := topicHeadingRE.FindStringSubmatch(line)
			if m == nil {
				errs = append(errs, fmt.Errorf("%s:%d: %q: a topic heading is \"## <id>: <title>\", the id in lower case with hyphens", TopicsFile, n, line))
				continue
			}
			if seen[m[1]] {
				errs = append(errs, fmt.Errorf("%s:%d: topic %q is described twice", TopicsFile, n, m[1]))
			}
			seen[m[1]] = true
			cur, inFields = &Topic{ID: m[1], Title: m[2]}, true
			continue
		}
		if cur == nil {
			continue // preamble
		}
		if inFields {
			if strings.TrimSpace(line) == "" {
				if cur.Upstream != "" || len(cur.Kinds) > 0 || len(cur.SIGs) > 0 {
					inFields = false
				}
				continue
			}
			if m := topicFieldRE.FindStringSubmatch(line); m != nil {
				if err := cur.set(m[1], strings.TrimSpace(m[2])); err != nil {
					errs = append(errs, fmt.Errorf("%s:%d: topic %s: %w", TopicsFile, n, cur.ID, err))
				}
				continue
			}
			inFields = false
		}
		text = append(text, line)
	}
	finish()
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	if len(topics) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no topic (a section \"## <id>: <title>\")", TopicsFile))
	}
	return topics, errors.Join(errs...)
}

func (t *Topic) set(key, value string) error {
	list := func() []string {
		var out []string
		for _, v := range strings.Split(value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				out = append(out, v)
			}
		}
		return out
	}
	switch key {
	case "Kind":
		t.Kinds = append(t.Kinds, list()...)
	case "SIG":
		t.SIGs = append(t.SIGs, list()...)
	case "Upstream":
		t.Upstream = value
	case "Issues":
		t.Issues = append(t.Issues, list()...)
	case "Docs":
		t.Docs = append(t.Docs, value)
	case "Security-sensitive":
		switch value {
		case "yes":
			t.SecuritySensitive = true
		case "no":
			t.SecuritySensitive = false
		default:
			return fmt.Errorf("field Security-sensitive: %q is not yes or no", value)
		}
	default:
		return fmt.Errorf("unknown field %q (Kind, SIG, Upstream, Issues, Docs, Security-sensitive)", key)
	}
	return nil
}

// check says what a pull request description of the topic would lack.
func (t *Topic) check() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: topic %s: "+format, append([]any{TopicsFile, t.ID}, args...)...))
	}
	if len(t.Kinds) == 0 {
		fail("no \"- Kind:\" line (one or more of %s)", strings.Join(Kinds, ", "))
	}
	for _, k := range t.Kinds {
		if !slices.Contains(Kinds, k) {
			fail("kind %q is not one of %s", k, strings.Join(Kinds, ", "))
		}
	}
	if len(t.SIGs) == 0 {
		fail("no \"- SIG:\" line (the special interest groups that review it, e.g. scheduling, node)")
	}
	for _, s := range t.SIGs {
		if !sigRE.MatchString(s) {
			fail("SIG %q is not a SIG name like scheduling or api-machinery", s)
		}
	}
	switch t.Upstream {
	case Carry, Proposal, Local:
	case "":
		fail("no \"- Upstream:\" line (%s, %s or %s)", Carry, Proposal, Local)
	default:
		fail("upstream %q is not one of %s, %s, %s", t.Upstream, Carry, Proposal, Local)
	}
	for _, i := range t.Issues {
		m := issueRE.FindStringSubmatch(i)
		switch {
		case m == nil:
			fail("issue %q is not a link to an issue (https://github.com/<org>/<repo>/issues/N) or a pull request (.../pull/N), optionally after Fixes", i)
		case m[2] != "" && m[2] != "Part of" && m[3] == "pull":
			fail("%q: %s names an issue, not a pull request (say \"Part of\" or give the link alone)", i, m[2])
		}
	}
	if t.Text == "" {
		fail("no text saying what the pull request does and why")
	}
	for _, why := range TextProblems(t.Title + "\n\n" + t.Text) {
		fail("%s", why)
	}
	return errs
}

// topicsLayoutRE is the "- Topics:" line of a topics file's preamble.
var topicsLayoutRE = regexp.MustCompile(`^- Topics: (\S+)$`)

// ParseLayout returns how the topics of a topics file relate: the value of
// the "- Topics:" line of its preamble (before the first topic), Stacked
// when there is none.
func ParseLayout(data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		if m := topicsLayoutRE.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case Stacked, Independent:
				return m[1], nil
			default:
				return "", fmt.Errorf("%s:%d: Topics: %q is not %s or %s", TopicsFile, n, m[1], Stacked, Independent)
			}
		}
	}
	return Stacked, sc.Err()
}

// LoadTopics reads dir's topics file.
func LoadTopics(dir string) ([]Topic, error) {
	data, err := os.ReadFile(filepath.Join(dir, TopicsFile))
	if err != nil {
		return nil, err
	}
	return ParseTopics(data)
}
