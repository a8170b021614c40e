// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// The texts of the series (commit messages, TOPICS.md, the docs) are read
// without the series at hand: in one topic's pull request, upstream, after a
// fold or a renumbering. So they name another patch by its subject or topic,
// never by its place or number, and never by this project's own tracker.

// MaxSubject is the longest subject a patch may have, as git log --format=%s
// shows it: "<area>: <what it does>". Longer ones are cut in git's one-line
// views and in the lists of a pull request.
const MaxSubject = 72

var (
	// positionalRE finds a patch or topic named by its place: "the next
	// patch", "(previous patch)", "the patch above", "the patches after it".
	positionalRE = regexp.MustCompile(`(?i)\b(?:(?:next|previous|following|preceding|prior|later|earlier)\s+(?:patch|patches|commit|commits)|(?:next|previous|following|preceding)\s+topics?|(?:patch|patches|commit|commits|topic|topics)\s+(?:above|below)|(?:patch|patches|commit|commits)\s+(?:before|after)\s+(?:it|this|that|them))\b`)
	// A positional phrase followed by the quoted subject names the patch:
	// the later patch "scheduler: make it configurable".
	namedAfterRE = regexp.MustCompile(`^\s+["“](` + strings.Join(Areas, "|") + `): `)
	// "the previous patch release" is a Kubernetes release, not a patch.
	releaseAfterRE = regexp.MustCompile(`(?i)^\s*(release|releases|version|versions|level)\b`)

	// internalRE finds references to this project's own tracker and work,
	// which mean nothing upstream: "issue 51", "issues 27 and 28", "#51",
	// "this session", "this round", "stop 47". Issues of other projects have
	// large numbers or a link.
	internalRE = regexp.MustCompile(`(?i)\bissues?\s+#?\d{1,3}\b|(?:^|[\s(\[])#\d{1,3}\b|\bsessions?\b|\bthis\s+round\b|\bstop\s+\d+\b`)

	// patchNumberRE finds a patch named by its file number, which a
	// renumbering, a fold or a pull request of one topic makes meaningless:
	// "patch 0044", "patches 0700-0760", a bare "0761-0768" or "0079".
	// Four digits with a leading zero are patch numbers in this project's
	// prose; a file mode belongs in backquotes.
	patchNumberRE = regexp.MustCompile(`(?i)\bpatch(?:es)?\s+\d{4}\b|(?:^|[^\w.,:/\-#])0\d{3}[a-z]?\b`)

	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// TextProblems returns what is wrong with one text of the series: a patch
// named by its place or number, a reference to this project's tracker. Each
// problem quotes what it found and says what to write instead.
func TextProblems(text string) []string {
	var out []string
	for _, p := range textProblems(text) {
		out = append(out, p.why)
	}
	return out
}

type textProblem struct {
	at  int // byte offset in the text
	why string
}

func textProblems(text string) []textProblem {
	// Code spans quote: commands, file modes, the examples of a rule.
	text = codeSpanRE.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat(" ", len(s)) })
	var out []textProblem
	for _, loc := range positionalRE.FindAllStringIndex(text, -1) {
		rest := text[loc[1]:]
		if namedAfterRE.MatchString(rest) || releaseAfterRE.MatchString(rest) {
			continue
		}
		out = append(out, textProblem{loc[0], fmt.Sprintf("%q names a patch or topic by its place: name it by its subject or topic, the order changes and a pull request holds one topic", oneLine(text[loc[0]:loc[1]]))})
	}
	for _, loc := range internalRE.FindAllStringIndex(text, -1) {
		at, m := trimmed(text, loc, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '(' || r == '[' })
		out = append(out, textProblem{at, fmt.Sprintf("%q refers to this project's own tracker or work, which a reader upstream cannot see: say what it is about", oneLine(m))})
	}
	for _, loc := range patchNumberRE.FindAllStringIndex(text, -1) {
		at, m := trimmed(text, loc, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		out = append(out, textProblem{at, fmt.Sprintf("%q names a patch by its number: name it by its subject or topic, numbers change when patches are folded or split", oneLine(m))})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// trimmed returns the match at loc without the leading runes that skip
// matches, and where it starts then.
func trimmed(text string, loc []int, skip func(rune) bool) (int, string) {
	m := text[loc[0]:loc[1]]
	t := strings.TrimLeftFunc(m, skip)
	return loc[0] + len(m) - len(t), t
}

// SubjectProblem says what is wrong with a patch subject, or "".
func SubjectProblem(subject string) string {
	if n := len([]rune(subject)); n > MaxSubject {
		return fmt.Sprintf("subject %q is %d characters, more than %d: git log --oneline and the commit list of a pull request cut it; say less, the message says the rest", subject, n, MaxSubject)
	}
	return ""
}

// sentenceEndRE finds the end of a sentence followed by another one. The
// abbreviations of English prose and version numbers are removed first.
var (
	sentenceEndRE   = regexp.MustCompile(`[.!?]\s+["(]?[A-Z]`)
	abbreviationsRE = regexp.MustCompile(`(?i)\b(e\.g|i\.e|etc|vs|cf)\.`)
)

// ReleaseNoteProblems checks a Release-Note: trailer against the style of
// upstream's release notes: NONE, or one sentence that ends with a period;
// a fix (in a topic of kind bug) says what was fixed, in the past tense,
// "Fixed a bug where ...".
func ReleaseNoteProblems(note string, bug bool) []string {
	if note == NoReleaseNote {
		return nil
	}
	var out []string
	if note != strings.TrimSpace(note) || strings.Contains(note, "\n") {
		out = append(out, fmt.Sprintf("release note %q has leading or trailing space", note))
	}
	note = strings.TrimSpace(note)
	switch {
	case note == "":
		return out
	case !strings.HasSuffix(note, "."):
		out = append(out, fmt.Sprintf("release note %q does not end with a period: a release note is one sentence", note))
	}
	body := strings.TrimSuffix(note, ".")
	body = abbreviationsRE.ReplaceAllString(body, "$1")
	if m := sentenceEndRE.FindString(body); m != "" {
		out = append(out, fmt.Sprintf("release note %q has more than one sentence: upstream's release notes are one sentence (join them with a semicolon or leave the detail to the commit message)", note))
	}
	if bug && !strings.HasPrefix(note, "Fixed ") && !strings.HasPrefix(note, "ACTION REQUIRED:") {
		out = append(out, fmt.Sprintf("release note %q of a bug fix does not start with \"Fixed\": upstream writes fixes in the past tense, \"Fixed a bug where ...\"", note))
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
