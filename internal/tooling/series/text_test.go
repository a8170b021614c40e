// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTextProblems(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		text string
		// want are the quoted findings, in order; none means the text is fine.
		want []string
	}{
		"named by subject":                   {text: `Since "kubelet: hand out devices" the kubelet checks the owner.`},
		"the next patch":                     {text: "The generated code follows in the next patch.", want: []string{`"next patch"`}},
		"(previous patch)":                   {text: "the taint changes nothing (previous patch), so", want: []string{`"previous patch"`}},
		"the following patches":              {text: "The following patches use it.", want: []string{`"following patches"`}},
		"a later patch":                      {text: "callers follow in a later patch", want: []string{`"later patch"`}},
		"the patch above":                    {text: "as the patch above says", want: []string{`"patch above"`}},
		"the patches after it":               {text: "served in the patches after it.", want: []string{`"patches after it"`}},
		"the next topics":                    {text: "The components follow in the next topics.", want: []string{`"next topics"`}},
		"broken over two lines":              {text: "uses it in the next\npatch.", want: []string{`"next patch"`}},
		"a later patch named by its subject": {text: `the later patch "scheduler: make it configurable" adds the gate`},
		"a closing quote is no subject":      {text: `refuses "the next patch" and "issue 51"`, want: []string{`"next patch"`, `"issue 51"`}},
		"examples in backquotes":             {text: "lint refuses `the next patch`, `issue 51` and `patch 0044`"},
		"the previous patch release":         {text: "Upgrade to the previous patch release first."},
		"an earlier topic is not a place":    {text: "a proposal that needs an earlier topic needs only what master lacks"},
		"issue 51":                           {text: "loudly (issue 51)", want: []string{`"issue 51"`}},
		"issues 27 and 28":                   {text: "afternoon (issues 27 and 28, 69 patches)", want: []string{`"issues 27"`}},
		"issue #12":                          {text: "see issue #12 item 3", want: []string{`"issue #12"`}},
		"a bare small number":                {text: "done (#51)", want: []string{`"#51"`}},
		"an upstream issue":                  {text: "upstream fixed it (issue #141323, kubernetes/kubernetes#136238)"},
		"a link to an issue":                 {text: "https://github.com/kubernetes/kubernetes/issues/51"},
		"a repository's issue":               {text: "the symptom (dra-driver-nvidia-gpu#330)"},
		"this session":                       {text: "measured in this session", want: []string{`"session"`}},
		"this round":                         {text: "added this round", want: []string{`"this round"`}},
		"stop 47":                            {text: "failed CI (stop 47).", want: []string{`"stop 47"`}},
		"patch 0044":                         {text: "(patch 0044, upstream #136238)", want: []string{`"patch 0044"`}},
		"Patches 0700-0760":                  {text: "Patches 0700-0760 serve v1", want: []string{`"Patches 0700"`}},
		"a bare range":                       {text: "the topic (0761-0768)", want: []string{`"0761"`}},
		"a bare number after a list":         {text: "Patches 0075, 0077 and 0078", want: []string{`"Patches 0075"`, `"0077"`, `"0078"`}},
		"a fold-plan name":                   {text: "0016f splits", want: []string{`"0016f"`}},
		"a file mode in backquotes":          {text: "`install -m 0755 bin/kubelet /usr/bin/kubelet`"},
		"numbers that are no patch numbers":  {text: "v0.33.13, 0.0001 s, 1000 pods, 2026-12-06, port :0080, 20261202T195133Z, 1.00 → 0.53"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := TextProblems(tc.text)
			if len(got) != len(tc.want) {
				t.Fatalf("TextProblems(%q) = %q, want %d problem(s) quoting %q", tc.text, got, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i], want+" ") {
					t.Errorf("problem %d = %q, want it to start with %s", i, got[i], want)
				}
			}
		})
	}
}

func TestSubjectProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		subject string
		want    string
	}{
		{subject: "scheduler: " + strings.Repeat("x", 61)},
		{subject: "scheduler: " + strings.Repeat("x", 62), want: "is 73 characters, more than 72"},
		{subject: "kubelet: " + strings.Repeat("ü", 63), want: ""}, // characters, not bytes
	} {
		got := SubjectProblem(tc.subject)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("SubjectProblem(%q) = %q, want %q", tc.subject, got, tc.want)
		}
	}
}

func TestReleaseNoteProblems(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		note string
		bug  bool
		want []string
	}{
		"NONE":                       {note: "NONE", bug: true},
		"one sentence":               {note: "kube-scheduler scores DRA devices, so pods spread."},
		"abbreviations":              {note: "The kubelet reports devices (e.g. GPUs) per container, i.e. once."},
		"a fix":                      {note: "Fixed a bug where kube-scheduler gave a device to two pods.", bug: true},
		"ACTION REQUIRED":            {note: "ACTION REQUIRED: A namespace label now grants admin access.", bug: true},
		"no period":                  {note: "Added the gate", want: []string{"does not end with a period"}},
		"two sentences":              {note: "Added the gate. Callers must adapt.", want: []string{"has more than one sentence"}},
		"a fix in the present":       {note: "kube-scheduler no longer panics.", bug: true, want: []string{`does not start with "Fixed"`}},
		"present tense in a feature": {note: "kube-scheduler no longer scans every slice."},
		"space around":               {note: " Added the gate.", want: []string{"leading or trailing space"}},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := ReleaseNoteProblems(tc.note, tc.bug)
			if len(got) != len(tc.want) {
				t.Fatalf("ReleaseNoteProblems(%q, %v) = %q, want %d problem(s): %q", tc.note, tc.bug, got, len(tc.want), tc.want)
			}
			for i, want := range tc.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}

func TestDocProblems(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		doc  string
		want []string // "LINE: quoted finding"
	}{
		"clean": {doc: "# Title\n\nThe patch \"scheduler: keep claims\" of topic `failure-paths`.\n"},
		"line numbers": {
			doc:  "# Title\n\nFirst paragraph.\n\nSecond, with patch 0380 in it,\nand issue 40.\n",
			want: []string{`5: "patch 0380"`, `6: "issue 40"`},
		},
		"a phrase over two lines is found at its first line": {
			doc:  "Before\npatch\n0080 the\ncache was slow.\n",
			want: []string{`2: "patch 0080"`},
		},
		"fenced code is skipped": {
			doc:  "Run:\n\n```console\n$ git log -1 0042\nsee issue 51\n```\n\nDone (issue 52).\n",
			want: []string{`8: "issue 52"`},
		},
		"a table row": {
			doc:  "| D3 | 89 s before patch 0380 | ok |\n",
			want: []string{`1: "patch 0380"`},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := DocProblems([]byte(tc.doc))
			if len(got) != len(tc.want) {
				t.Fatalf("DocProblems = %q, want %q", got, tc.want)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(got[i], want+" ") {
					t.Errorf("problem %d = %q, want it to start with %s", i, got[i], want)
				}
			}
		})
	}
}

func TestLintDocs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for name, content := range map[string]string{
		"docs/patches.md":        "| 0010 | features | generated, numbers on purpose |\n",
		"docs/design/plan.md":    "0016 splits into four (a dated record).\n",
		"docs/performance.md":    "Before patch 0079 it took 10 s.\n",
		"docs/upstreaming.md":    "Clean.\n",
		"README.md":              "See the next patch.\n",
		"CHANGELOG.md":           "- Fixed (issue 50).\n",
		"CONTRIBUTING.md":        "Lint refuses \"patch NNNN\" (patch 0001 is an example).\n",
		"scripts/cluster/up.sh":  "# patches 0700-0760\n",
		"docs/upstreaming.md.in": "patch 0001\n",
	} {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := DocFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docs/performance.md", "docs/upstreaming.md", "README.md", "CHANGELOG.md"}; !reflect.DeepEqual(files, want) {
		t.Errorf("DocFiles = %q, want %q", files, want)
	}
	err = LintDocs(root)
	if err == nil {
		t.Fatal("LintDocs: no error, want one per document with a problem")
	}
	for _, want := range []string{`docs/performance.md:1: "patch 0079"`, `README.md:1: "next patch"`, `CHANGELOG.md:1: "issue 50"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("LintDocs error lacks %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 3 {
		t.Errorf("LintDocs found %d problems, want 3:\n%v", n, err)
	}
}
