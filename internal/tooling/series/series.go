// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package series reads and checks a draext patch series: the directory that
// holds GIT_TAG, RELEASE, series and the numbered patch files exported by
// `git format-patch`.
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
	"sort"
	"strconv"
	"strings"
)

// Areas are the subsystems a patch may belong to. The area is the prefix of
// the commit subject ("scheduler: ...") and therefore the second part of the
// file name that git format-patch derives from it.
var Areas = []string{
	"api", "apiserver", "controller", "features", "gen", "kubelet",
	"quota", "scheduler", "test",
}

// RequiredTrailers are the metadata lines every patch message must carry.
// They answer: which upstream change is this (or none), which KEP, how does
// it differ from upstream, when can we drop it, which pull request (topic)
// it belongs to, and what its release note says.
var RequiredTrailers = []string{"Upstream-PR", "KEP", "Backport-Delta", "Drop-When", "Topic", "Release-Note"}

// NoReleaseNote is the Release-Note: of a patch users do not notice, as
// upstream's pull request template spells it.
const NoReleaseNote = "NONE"

// KEP is the enhancement every patch of this series belongs to.
const KEP = "5004"

const zeroFromLine = "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"

var (
	gitTagRE     = regexp.MustCompile(`^v1\.(\d+)\.(\d+)$`)
	fileNameRE   = regexp.MustCompile(`^(\d{4})-([a-z]+)-[A-Za-z0-9._-]+\.patch$`)
	subjectRE    = regexp.MustCompile(`^Subject: \[PATCH\] ([a-z]+): (\S.*)$`)
	authorRE     = regexp.MustCompile(`^(\S.*\S) <[^@<>\s]+@([^@<>\s]+)>$`)
	trailerRE    = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9-]*): ?(.*)$`)
	upstreamPRRE = regexp.MustCompile(`^(none|https://github\.com/[^/\s]+/[^/\s]+/pull/\d+(, https://github\.com/[^/\s]+/[^/\s]+/pull/\d+)*)$`)
	dropWhenRE   = regexp.MustCompile(`^(v1\.\d+(\.\d+)?|never)$`)
)

// Patch is one entry of the series.
type Patch struct {
	// File is the file name relative to the series directory.
	File string
	// Number is the NNNN prefix of the file name.
	Number int
	// Area is the subsystem, taken from the commit subject.
	Area string
	// Subject is the commit subject without "[PATCH]".
	Subject string
	// Author is the From: line of the patch.
	Author string
	// Trailers holds the last paragraph of the commit message as key/value pairs.
	Trailers map[string]string
}

// Topic returns the patch's Topic: trailer.
func (p Patch) Topic() string { return p.Trailers["Topic"] }

// Series is a parsed patch series directory.
type Series struct {
	Dir     string
	GitTag  string
	Release int
	Patches []Patch
	// Topics are the pull requests the series falls into, in stacking
	// order (TOPICS.md).
	Topics []Topic
	// Layout says how the topics relate: Stacked or Independent.
	Layout string
}

// ValidateGitTag checks that tag names a Kubernetes v1.x.y release and
// returns the matching staging module version (v0.x.y).
func ValidateGitTag(tag string) (string, error) {
	m := gitTagRE.FindStringSubmatch(tag)
	if m == nil {
		return "", fmt.Errorf("GIT_TAG %q is not a Kubernetes release tag of the form v1.<minor>.<patch>", tag)
	}
	return fmt.Sprintf("v0.%s.%s", m[1], m[2]), nil
}

// Load reads dir and checks everything that can be checked without git:
// GIT_TAG and RELEASE, that series and the patch files agree, numbering,
// file names, subjects and trailers. All problems are returned together,
// each naming the file it is about.
func Load(dir string) (*Series, error) {
	s := &Series{Dir: dir}
	var errs []error

	tag, err := readOneLine(filepath.Join(dir, "GIT_TAG"))
	if err != nil {
		errs = append(errs, err)
	} else if _, err := ValidateGitTag(tag); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(dir, "GIT_TAG"), err))
	} else {
		s.GitTag = tag
	}

	rel, err := readOneLine(filepath.Join(dir, "RELEASE"))
	if err != nil {
		errs = append(errs, err)
	} else if n, err := strconv.Atoi(rel); err != nil || n < 1 {
		errs = append(errs, fmt.Errorf("%s: %q must be a positive integer (the N of -draext.N)", filepath.Join(dir, "RELEASE"), rel))
	} else {
		s.Release = n
	}

	names, err := ReadSeries(dir)
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	listed := map[string]bool{}
	for _, name := range names {
		if listed[name] {
			errs = append(errs, fmt.Errorf("series: %s is listed twice", name))
			continue
		}
		listed[name] = true
		p, perrs := loadPatch(dir, name)
		errs = append(errs, perrs...)
		s.Patches = append(s.Patches, p)
	}
	errs = append(errs, checkOrder(s.Patches)...)
	errs = append(errs, checkAuthors(s.Patches)...)
	if len(s.Patches) > 0 {
		// A topic with a problem is still a topic: the checks of the
		// patches against the topics run all the same.
		topics, err := LoadTopics(dir)
		if err != nil {
			errs = append(errs, err)
		}
		if len(topics) > 0 {
			s.Topics = topics
			errs = append(errs, checkTopics(s.Patches, topics)...)
			errs = append(errs, checkReleaseNotes(s.Patches, topics)...)
		}
		if data, err := os.ReadFile(filepath.Join(dir, TopicsFile)); err == nil {
			if s.Layout, err = ParseLayout(data); err != nil {
				errs = append(errs, err)
			}
		}
		if s.Layout == Independent {
			errs = append(errs, checkOneReleaseNote(s.Patches, topics)...)
		}
	}

	errs = append(errs, checkSums(dir, names)...)

	onDisk, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		errs = append(errs, err)
	}
	sort.Strings(onDisk)
	for _, f := range onDisk {
		if base := filepath.Base(f); !listed[base] {
			errs = append(errs, fmt.Errorf("%s: patch file is not listed in series (run make patches-export, or delete it)", base))
		}
	}
	if len(errs) > 0 {
		return s, errors.Join(errs...)
	}
	return s, nil
}

// checkOneReleaseNote: a topic of an independent series is one pull
// request to upstream, whose template has one release note.
func checkOneReleaseNote(patches []Patch, topics []Topic) []error {
	var errs []error
	for _, t := range topics {
		var with []string
		for _, p := range patches {
			if p.Topic() == t.ID && strings.TrimSpace(p.Trailers["Release-Note"]) != NoReleaseNote {
				with = append(with, p.File)
			}
		}
		if len(with) > 1 {
			errs = append(errs, fmt.Errorf("topic %s: %d patches have a Release-Note (%s); a pull request has one: give the others %s", t.ID, len(with), strings.Join(with, ", "), NoReleaseNote))
		}
	}
	return errs
}

// Version returns the version the patched binaries report, e.g. v1.33.13-draext.1.
func (s *Series) Version() string {
	return fmt.Sprintf("%s-draext.%d", s.GitTag, s.Release)
}

func loadPatch(dir, name string) (Patch, []error) {
	p := Patch{File: name}
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}

	m := fileNameRE.FindStringSubmatch(name)
	if m == nil {
		fail("file name must look like NNNN-<area>-<slug>.patch")
	} else {
		p.Number, _ = strconv.Atoi(m[1])
		if p.Number < 1 {
			fail("number 0000 is not a patch number (numbers start at 0001)")
		}
	}

	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		fail("listed in series but cannot be read: %v", err)
		return p, errs
	}
	hdr, err := ParseHeader(data)
	if err != nil {
		fail("%v", err)
		return p, errs
	}
	p.Area, p.Subject, p.Author, p.Trailers = hdr.Area, hdr.Subject, hdr.Author, hdr.Trailers
	if m != nil && m[2] != hdr.Area {
		fail("file name says area %q but the subject says %q", m[2], hdr.Area)
	}
	if !validArea(hdr.Area) {
		fail("area %q is not one of %s", hdr.Area, strings.Join(Areas, ", "))
	}
	if !hdr.ZeroCommit {
		fail("not normalised: first line must be %q (export with make patches-export)", zeroFromLine)
	}
	if hdr.Signature {
		fail("not normalised: ends with a format-patch signature (export with make patches-export)")
	}
	for _, key := range RequiredTrailers {
		v, ok := hdr.Trailers[key]
		switch {
		case !ok:
			fail("missing trailer %q in the last paragraph of the commit message", key+":")
		case strings.TrimSpace(v) == "":
			fail("trailer %q is empty", key+":")
		}
	}
	if v, ok := hdr.Trailers["KEP"]; ok && v != KEP {
		fail("trailer \"KEP:\" is %q, this series implements KEP %s", v, KEP)
	}
	if v, ok := hdr.Trailers["Upstream-PR"]; ok && v != "" && !upstreamPRRE.MatchString(v) {
		fail("trailer \"Upstream-PR:\" is %q: use none or one or more pull request URLs separated by \", \"", v)
	}
	if v, ok := hdr.Trailers["Drop-When"]; ok && v != "" && !dropWhenRE.MatchString(v) {
		fail("trailer \"Drop-When:\" is %q: use the release that makes the patch unnecessary (e.g. v1.34) or never", v)
	}
	if why := SubjectProblem(hdr.Subject); why != "" {
		fail("%s", why)
	}
	for _, why := range TextProblems(hdr.Body) {
		fail("the message: %s", why)
	}
	if v := hdr.Trailers["Release-Note"]; v != NoReleaseNote && strings.EqualFold(v, NoReleaseNote) {
		fail("trailer \"Release-Note:\" is %q: write %s (upstream's spelling) when users do not notice the patch", v, NoReleaseNote)
	}
	return p, errs
}

// checkOrder wants patch numbers that rise in series order (gaps are
// allowed: numbers are stable, see AssignNumbers) and subjects that are
// unique, because the subject is what keeps a patch's number.
func checkOrder(patches []Patch) []error {
	var errs []error
	last := Patch{}
	seen := map[string]string{}
	for _, p := range patches {
		if p.Number > 0 {
			if p.Number <= last.Number {
				errs = append(errs, fmt.Errorf("%s: number %04d stands after %s in series: numbers must rise in series order (gaps are allowed)", p.File, p.Number, last.File))
			} else {
				last = p
			}
		}
		if p.Subject == "" {
			continue
		}
		if other, dup := seen[p.Subject]; dup {
			errs = append(errs, fmt.Errorf("%s: same subject as %s: subjects must be unique, they keep a patch's number across exports", p.File, other))
		}
		seen[p.Subject] = p.File
	}
	return errs
}

// checkAuthors wants one author identity for the whole series, with a name
// and a mail address a reviewer can write to.
func checkAuthors(patches []Patch) []error {
	var errs []error
	first := ""
	for _, p := range patches {
		if p.Author == "" {
			continue
		}
		m := authorRE.FindStringSubmatch(p.Author)
		switch {
		case m == nil:
			errs = append(errs, fmt.Errorf("%s: author %q is not \"Name <address>\": set the project identity (git -c user.name=... -c user.email=... commit --amend --reset-author)", p.File, p.Author))
			continue
		case m[2] == "localhost" || !strings.Contains(m[2], "."):
			errs = append(errs, fmt.Errorf("%s: author %q has a placeholder address: use the project identity", p.File, p.Author))
			continue
		}
		if first == "" {
			first = p.Author
		} else if p.Author != first {
			errs = append(errs, fmt.Errorf("%s: author %q differs from %q: the series has one author, the project identity", p.File, p.Author, first))
		}
	}
	return errs
}

// checkTopics wants every patch's Topic: described in TOPICS.md, every topic
// used, and the patches of a topic together in the series, in the order of
// TOPICS.md, so that each topic is one pull request stacked on those before it.
func checkTopics(patches []Patch, topics []Topic) []error {
	var errs []error
	order := map[string]int{}
	for i, t := range topics {
		order[t.ID] = i
	}
	used := map[string]bool{}
	for _, p := range patches {
		id := p.Topic()
		if id == "" {
			continue // missing trailer, reported already
		}
		if _, ok := order[id]; !ok {
			errs = append(errs, fmt.Errorf("%s: topic %q is not described in %s", p.File, id, TopicsFile))
			continue
		}
		used[id] = true
	}
	for _, t := range topics {
		if !used[t.ID] {
			errs = append(errs, fmt.Errorf("%s: topic %s has no patch (drop it, or name it in a Topic: trailer)", TopicsFile, t.ID))
		}
	}
	s := &Series{Patches: patches, Topics: topics}
	for _, why := range s.Interleaved() {
		errs = append(errs, fmt.Errorf("%s: the patches of a topic stand together, in the order of %s, so that each topic is one pull request on the ones before it (move the patch or fix its Topic: trailer)", why, TopicsFile))
	}
	return errs
}

// checkReleaseNotes wants every Release-Note: in upstream's style (see
// ReleaseNoteProblems); the notes of a topic of kind bug say what was fixed.
func checkReleaseNotes(patches []Patch, topics []Topic) []error {
	bug := map[string]bool{}
	for _, t := range topics {
		bug[t.ID] = slices.Contains(t.Kinds, "bug")
	}
	var errs []error
	for _, p := range patches {
		note, ok := p.Trailers["Release-Note"]
		if !ok || note == "" || (note != NoReleaseNote && strings.EqualFold(note, NoReleaseNote)) {
			continue // reported already
		}
		for _, why := range ReleaseNoteProblems(note, bug[p.Topic()]) {
			errs = append(errs, fmt.Errorf("%s: %s", p.File, why))
		}
	}
	return errs
}

// Interleaved lists the patches that break the stacking order: a patch that
// stands after a patch of a topic that comes later in TOPICS.md. Lint refuses
// them, so that make pr-branches only has to cut the series into topics.
func (s *Series) Interleaved() []string {
	order := map[string]int{}
	for i, t := range s.Topics {
		order[t.ID] = i
	}
	var out []string
	last := -1
	for _, p := range s.Patches {
		i, ok := order[p.Topic()]
		if !ok {
			continue
		}
		if i < last {
			out = append(out, fmt.Sprintf("%s (topic %s) stands after a patch of topic %s", p.File, p.Topic(), s.Topics[last].ID))
			continue
		}
		last = i
	}
	return out
}

func validArea(a string) bool {
	for _, x := range Areas {
		if a == x {
			return true
		}
	}
	return false
}

// Header is what ParseHeader finds in a format-patch mail.
type Header struct {
	ZeroCommit bool
	Signature  bool
	// Author is the value of the From: header.
	Author  string
	Area    string
	Subject string
	// Body is the commit message after the subject, trailers included.
	Body string
	// Trailers are the "Key: value" lines of the message's last paragraph.
	Trailers map[string]string
}

// ParseHeader reads the mail header and commit message of one patch produced
// by git format-patch.
func ParseHeader(data []byte) (*Header, error) {
	h := &Header{Trailers: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)

	// Mail header: up to the first empty line. Subject and From may be
	// folded (git format-patch folds long ones).
	first := true
	var subject, from string
	var folding *string
	for sc.Scan() {
		line := sc.Text()
		if first {
			h.ZeroCommit = line == zeroFromLine
			first = false
			continue
		}
		if line == "" {
			break
		}
		switch {
		case strings.HasPrefix(line, "From: "):
			from, folding = line, &from
		case strings.HasPrefix(line, "Subject: "):
			subject, folding = line, &subject
		case folding != nil && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			*folding += line
		default:
			folding = nil
		}
	}
	if from != "" {
		h.Author = strings.Join(strings.Fields(strings.TrimPrefix(from, "From: ")), " ")
	}
	if subject == "" {
		return nil, errors.New("no Subject: header (is this a git format-patch file?)")
	}
	m := subjectRE.FindStringSubmatch(subject)
	if m == nil {
		return nil, fmt.Errorf("subject %q must be \"[PATCH] <area>: <what the patch does>\"", strings.TrimPrefix(subject, "Subject: "))
	}
	h.Area, h.Subject = m[1], m[1]+": "+m[2]

	// Commit message body: up to the "---" line that starts the diffstat.
	var paragraph, body []string
	sawSeparator := false
	for sc.Scan() {
		line := sc.Text()
		if line == "---" {
			sawSeparator = true
			break
		}
		body = append(body, line)
		if strings.TrimSpace(line) == "" {
			if len(paragraph) > 0 {
				paragraph = paragraph[:0]
			}
			continue
		}
		paragraph = append(paragraph, line)
	}
	if !sawSeparator {
		return nil, errors.New(`no "---" line after the commit message`)
	}
	h.Body = strings.Join(body, "\n")
	for _, line := range paragraph {
		if tm := trailerRE.FindStringSubmatch(line); tm != nil {
			h.Trailers[tm[1]] = strings.TrimSpace(tm[2])
		}
	}

	// format-patch signature: "-- " followed by the git version as the last lines.
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if n := len(lines); n >= 2 && lines[n-2] == "-- " {
		h.Signature = true
	}
	return h, sc.Err()
}

func readOneLine(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(data))
	if s == "" || strings.Contains(s, "\n") {
		return "", fmt.Errorf("%s: must hold exactly one non-empty line", path)
	}
	return s, nil
}

// ReadSeries returns the patch file names listed in dir/series, in order.
// Empty lines and lines starting with "#" are ignored.
func ReadSeries(dir string) ([]string, error) {
	path := filepath.Join(dir, "series")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, "/ \t") {
			return nil, fmt.Errorf("%s:%d: %q is not a plain patch file name", path, i+1, line)
		}
		names = append(names, line)
	}
	return names, nil
}
