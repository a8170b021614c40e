// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodMessage = `Add the gate.

KEP: 5004
Upstream-PR: https://github.com/kubernetes/kubernetes/pull/130653
Backport-Delta: introduced at 1.33
Drop-When: v1.34
Topic: api
Release-Note: NONE
`

const goodTopics = `# Topics

## api: DRA extended resources: API

- Kind: feature
- SIG: node, scheduling
- Upstream: carry

Adds the fields.
`

func patchText(subject, message string) string {
	return zeroFromLine + "\n" +
		"From: Dev <dev@example.com>\n" +
		"Date: Mon, 30 Nov 2026 00:00:00 +0000\n" +
		"Subject: [PATCH] " + subject + "\n\n" +
		message +
		"---\n" +
		" pkg/features/kube_features.go | 1 +\n" +
		" 1 file changed, 1 insertion(+)\n\n" +
		"diff --git a/pkg/features/kube_features.go b/pkg/features/kube_features.go\n" +
		"--- a/pkg/features/kube_features.go\n" +
		"+++ b/pkg/features/kube_features.go\n" +
		"@@ -1 +1,2 @@\n" +
		" package features\n" +
		"+// x\n"
}

// writeSeries lays out a series directory. files maps names to content;
// series lists the names in order. Sums are written for the final content
// unless skipSums is set.
func writeSeries(t *testing.T, files map[string]string, series []string, skipSums bool) string {
	t.Helper()
	dir := t.TempDir()
	base := map[string]string{"GIT_TAG": "v1.33.13\n", "RELEASE": "1\n", TopicsFile: goodTopics}
	for k, v := range files {
		base[k] = v
	}
	base["series"] = strings.Join(series, "\n") + "\n"
	for name, content := range base {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !skipSums {
		if err := WriteSums(dir, series); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	t.Parallel()
	const p1 = "0001-features-add-the-gate.patch"
	const p2 = "0002-api-add-a-field.patch"
	testCases := map[string]struct {
		files    map[string]string
		series   []string
		skipSums bool
		edit     func(t *testing.T, dir string)
		wantErrs []string // substrings that must all appear; none means valid
	}{
		"valid series": {
			files:  map[string]string{p1: patchText("features: add the gate", goodMessage), p2: patchText("api: add a field", goodMessage)},
			series: []string{p1, p2},
		},
		"empty series": {
			series: nil,
		},
		"missing trailers": {
			files:    map[string]string{p1: patchText("features: add the gate", "Add the gate.\n\nKEP: 5004\n")},
			series:   []string{p1},
			wantErrs: []string{p1 + `: missing trailer "Upstream-PR:"`, `missing trailer "Backport-Delta:"`, `missing trailer "Drop-When:"`, `missing trailer "Topic:"`, `missing trailer "Release-Note:"`},
		},
		"trailers not in the last paragraph": {
			files:    map[string]string{p1: patchText("features: add the gate", "Add.\n\nKEP: 5004\nUpstream-PR: none\nBackport-Delta: x\nDrop-When: v1.34\n\nMore text.\n")},
			series:   []string{p1},
			wantErrs: []string{`missing trailer "KEP:"`},
		},
		"wrong KEP and bad values": {
			files:    map[string]string{p1: patchText("features: add the gate", "Add.\n\nKEP: 4381\nUpstream-PR: #130653\nBackport-Delta: x\nDrop-When: soon\nTopic: api\nRelease-Note: none\n")},
			series:   []string{p1},
			wantErrs: []string{`"KEP:" is "4381"`, `"Upstream-PR:" is "#130653"`, `"Drop-When:" is "soon"`, `"Release-Note:" is "none": write NONE`},
		},
		"empty trailer": {
			files:    map[string]string{p1: patchText("features: add the gate", "Add.\n\nKEP: 5004\nUpstream-PR: none\nBackport-Delta:\nDrop-When: never\n")},
			series:   []string{p1},
			wantErrs: []string{`trailer "Backport-Delta:" is empty`},
		},
		"subject without area": {
			files:    map[string]string{"0001-Add-the-gate.patch": patchText("Add the gate", goodMessage)},
			series:   []string{"0001-Add-the-gate.patch"},
			wantErrs: []string{"file name must look like", `subject "[PATCH] Add the gate" must be`},
		},
		"unknown area": {
			files:    map[string]string{"0001-misc-stuff.patch": patchText("misc: stuff", goodMessage)},
			series:   []string{"0001-misc-stuff.patch"},
			wantErrs: []string{`area "misc" is not one of`},
		},
		"file name and subject disagree": {
			files:    map[string]string{"0001-api-add-the-gate.patch": patchText("features: add the gate", goodMessage)},
			series:   []string{"0001-api-add-the-gate.patch"},
			wantErrs: []string{`file name says area "api" but the subject says "features"`},
		},
		"gaps in the numbering": {
			files: map[string]string{
				"0002-features-add-the-gate.patch": patchText("features: add the gate", goodMessage),
				"0010-api-add-a-field.patch":       patchText("api: add a field", goodMessage),
			},
			series: []string{"0002-features-add-the-gate.patch", "0010-api-add-a-field.patch"},
		},
		"numbers that do not rise": {
			files:    map[string]string{p2: patchText("api: add a field", goodMessage), p1: patchText("features: add the gate", goodMessage)},
			series:   []string{p2, p1},
			wantErrs: []string{p1 + ": number 0001 stands after " + p2},
		},
		"number zero": {
			files:    map[string]string{"0000-api-add-a-field.patch": patchText("api: add a field", goodMessage)},
			series:   []string{"0000-api-add-a-field.patch"},
			wantErrs: []string{"number 0000 is not a patch number"},
		},
		"two patches with one subject": {
			files:    map[string]string{p1: patchText("api: add a field", goodMessage), "0002-api-add-a-field.patch": patchText("api: add a field", goodMessage)},
			series:   []string{p1, "0002-api-add-a-field.patch"},
			wantErrs: []string{"0002-api-add-a-field.patch: same subject as " + p1},
		},
		"topic not described": {
			files:    map[string]string{p1: patchText("features: add the gate", strings.Replace(goodMessage, "Topic: api", "Topic: quota", 1))},
			series:   []string{p1},
			wantErrs: []string{p1 + `: topic "quota" is not described in TOPICS.md`, "topic api has no patch"},
		},
		"no topics file": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage)},
			series:   []string{p1},
			edit:     func(t *testing.T, dir string) { removeFile(t, filepath.Join(dir, TopicsFile)) },
			wantErrs: []string{"TOPICS.md: no such file"},
		},
		"topic without what a pull request needs": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage), TopicsFile: "## api: API\n\n- Kind: feature\n"},
			series:   []string{p1},
			wantErrs: []string{`topic api: no "- SIG:" line`, `topic api: no "- Upstream:" line`, "topic api: no text"},
		},
		"a patch named by number": {
			files:    map[string]string{p1: patchText("features: add the gate", "Fix what patch 0016 did.\n\n"+goodMessage[len("Add the gate.\n\n"):])},
			series:   []string{p1},
			wantErrs: []string{p1 + `: the message: "patch 0016" names a patch by its number`},
		},
		"a patch named by its place": {
			files:    map[string]string{p1: patchText("features: add the gate", "The next patch uses it.\n\n"+goodMessage[len("Add the gate.\n\n"):])},
			series:   []string{p1},
			wantErrs: []string{p1 + `: the message: "next patch" names a patch or topic by its place`},
		},
		"a trailer refers to the tracker": {
			files:    map[string]string{p1: patchText("features: add the gate", strings.Replace(goodMessage, "introduced at 1.33", "introduced at 1.33 (issue 51)", 1))},
			series:   []string{p1},
			wantErrs: []string{p1 + `: the message: "issue 51" refers to this project's own tracker`},
		},
		"a subject of 72 characters": {
			files:  map[string]string{p1: patchText("features: "+strings.Repeat("x", 62), goodMessage)},
			series: []string{p1},
		},
		"a subject of 73 characters": {
			files:    map[string]string{p1: patchText("features: "+strings.Repeat("x", 63), goodMessage)},
			series:   []string{p1},
			wantErrs: []string{p1 + `: subject "features: xxx`, `is 73 characters, more than 72`},
		},
		"a folded subject is counted whole": {
			files: map[string]string{p1: strings.Replace(patchText("features: add the gate", goodMessage),
				"Subject: [PATCH] features: add the gate\n", "Subject: [PATCH] features: add the gate"+strings.Repeat(" and more", 6)+"\n and more\n", 1)},
			series:   []string{p1},
			wantErrs: []string{"is 85 characters, more than 72"},
		},
		"release notes in upstream's style": {
			files: map[string]string{
				p1: patchText("features: add the gate", strings.Replace(goodMessage, "Release-Note: NONE", "Release-Note: Added the gate. It is off", 1)),
				p2: patchText("api: add a field", strings.Replace(goodMessage, "Release-Note: NONE", "Release-Note: Added a field (e.g. for GPUs) to pods.", 1)),
			},
			series: []string{p1, p2},
			wantErrs: []string{
				p1 + `: release note "Added the gate. It is off" does not end with a period`,
				p1 + `: release note "Added the gate. It is off" has more than one sentence`,
			},
		},
		"a release note of a bug topic says Fixed": {
			files: map[string]string{
				p1:         patchText("features: add the gate", strings.Replace(goodMessage, "Release-Note: NONE", "Release-Note: The gate no longer breaks pods.", 1)),
				p2:         patchText("api: add a field", strings.Replace(goodMessage, "Release-Note: NONE", "Release-Note: Fixed a bug where the field was lost.", 1)),
				TopicsFile: strings.Replace(goodTopics, "- Kind: feature", "- Kind: bug", 1),
			},
			series:   []string{p1, p2},
			wantErrs: []string{p1 + `: release note "The gate no longer breaks pods." of a bug fix does not start with "Fixed"`},
		},
		"a topic's text names the next topics": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage), TopicsFile: strings.Replace(goodTopics, "Adds the fields.", "Adds the fields; the next topics use them.", 1)},
			series:   []string{p1},
			wantErrs: []string{`TOPICS.md: topic api: "next topics" names a patch or topic by its place`},
		},
		"a topic split by another one": {
			files: map[string]string{
				p1:                                 patchText("features: add the gate", goodMessage),
				p2:                                 patchText("api: add a field", strings.Replace(goodMessage, "Topic: api", "Topic: quota", 1)),
				"0003-api-add-another-field.patch": patchText("api: add another field", goodMessage),
				TopicsFile:                         goodTopics + "\n## quota: Quota\n\n- Kind: feature\n- SIG: node\n- Upstream: carry\n\nCounts.\n",
			},
			series:   []string{p1, p2, "0003-api-add-another-field.patch"},
			wantErrs: []string{"0003-api-add-another-field.patch (topic api) stands after a patch of topic quota: the patches of a topic stand together"},
		},
		"folded author": {
			files: map[string]string{
				p1: strings.Replace(patchText("features: add the gate", goodMessage), "Dev <dev@example.com>", "A Rather Long Project Name\n <dev@example.com>", 1),
				p2: strings.Replace(patchText("api: add a field", goodMessage), "Dev <dev@example.com>", "A Rather Long Project Name <dev@example.com>", 1),
			},
			series: []string{p1, p2},
		},
		"placeholder author": {
			files:    map[string]string{p1: strings.Replace(patchText("features: add the gate", goodMessage), "Dev <dev@example.com>", "draext developers <draext@localhost>", 1)},
			series:   []string{p1},
			wantErrs: []string{p1 + `: author "draext developers <draext@localhost>" has a placeholder address`},
		},
		"author without address": {
			files:    map[string]string{p1: strings.Replace(patchText("features: add the gate", goodMessage), "Dev <dev@example.com>", "draext developers", 1)},
			series:   []string{p1},
			wantErrs: []string{p1 + `: author "draext developers" is not "Name <address>"`},
		},
		"two authors": {
			files: map[string]string{
				p1: patchText("features: add the gate", goodMessage),
				p2: strings.Replace(patchText("api: add a field", goodMessage), "Dev <dev@example.com>", "Other <other@example.com>", 1),
			},
			series:   []string{p1, p2},
			wantErrs: []string{p2 + `: author "Other <other@example.com>" differs from "Dev <dev@example.com>"`},
		},
		"not normalised": {
			files: map[string]string{p1: strings.Replace(patchText("features: add the gate", goodMessage), zeroFromLine,
				"From 8d7dc22d5c1e2b1c9f0a0b0c0d0e0f101112131 Mon Sep 17 00:00:00 2001", 1) + "-- \n2.39.5\n"},
			series:   []string{p1},
			wantErrs: []string{"not normalised: first line", "ends with a format-patch signature"},
		},
		"listed but missing": {
			series:   []string{p1},
			skipSums: true,
			wantErrs: []string{p1 + ": listed in series but cannot be read"},
		},
		"on disk but not listed": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage), p2: patchText("api: add a field", goodMessage)},
			series:   []string{p1},
			wantErrs: []string{p2 + ": patch file is not listed in series"},
		},
		"listed twice": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage)},
			series:   []string{p1, p1},
			skipSums: true,
			wantErrs: []string{p1 + " is listed twice"},
		},
		"one byte edited after export": {
			files:  map[string]string{p1: patchText("features: add the gate", goodMessage)},
			series: []string{p1},
			edit: func(t *testing.T, dir string) {
				path := filepath.Join(dir, p1)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				data[len(data)-2] = 'y' // "+// x" -> "+// y"
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			wantErrs: []string{p1 + ": content does not match its checksum in SHA256SUMS"},
		},
		"no checksums": {
			files:    map[string]string{p1: patchText("features: add the gate", goodMessage)},
			series:   []string{p1},
			skipSums: true,
			wantErrs: []string{"SHA256SUMS: open"},
		},
		"bad GIT_TAG and RELEASE": {
			files:    map[string]string{"GIT_TAG": "1.33\n", "RELEASE": "one\n"},
			wantErrs: []string{`GIT_TAG "1.33" is not a Kubernetes release tag`, `"one" must be a positive integer`},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := writeSeries(t, tc.files, tc.series, tc.skipSums)
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			s, err := Load(dir)
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("Load: unexpected error:\n%v", err)
				}
				if len(s.Patches) != len(tc.series) {
					t.Errorf("got %d patches, want %d", len(s.Patches), len(tc.series))
				}
				if got, want := s.Version(), "v1.33.13-draext.1"; got != want {
					t.Errorf("Version() = %q, want %q", got, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Load: no error, want errors containing %q", tc.wantErrs)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not contain %q:\n%v", want, err)
				}
			}
		})
	}
}

func TestParseHeaderTrailersAndFoldedSubject(t *testing.T) {
	t.Parallel()
	text := strings.Replace(patchText("scheduler: allocate devices for extended resources", goodMessage),
		"Subject: [PATCH] scheduler: allocate devices for extended resources\n",
		"Subject: [PATCH] scheduler: allocate devices for extended\n resources\n", 1)
	h, err := ParseHeader([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if h.Area != "scheduler" || h.Subject != "scheduler: allocate devices for extended resources" {
		t.Errorf("area %q subject %q", h.Area, h.Subject)
	}
	want := map[string]string{
		"KEP":            "5004",
		"Upstream-PR":    "https://github.com/kubernetes/kubernetes/pull/130653",
		"Backport-Delta": "introduced at 1.33",
		"Drop-When":      "v1.34",
	}
	for k, v := range want {
		if h.Trailers[k] != v {
			t.Errorf("trailer %s = %q, want %q", k, h.Trailers[k], v)
		}
	}
	if !h.ZeroCommit || h.Signature {
		t.Errorf("ZeroCommit=%v Signature=%v, want true false", h.ZeroCommit, h.Signature)
	}
}

func TestValidateGitTag(t *testing.T) {
	t.Parallel()
	testCases := []struct {
		tag, want string
		wantErr   bool
	}{
		{tag: "v1.33.13", want: "v0.33.13"},
		{tag: "v1.34.0", want: "v0.34.0"},
		{tag: "v1.33", wantErr: true},
		{tag: "1.33.13", wantErr: true},
		{tag: "v1.33.13-rc.0", wantErr: true},
		{tag: "v2.0.0", wantErr: true},
		{tag: "", wantErr: true},
	}
	for _, tc := range testCases {
		got, err := ValidateGitTag(tc.tag)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ValidateGitTag(%q) = %q, %v; want %q, error %v", tc.tag, got, err, tc.want, tc.wantErr)
		}
	}
}

func removeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
