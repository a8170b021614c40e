// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package series

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTopics(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		text     string
		want     []Topic
		wantErrs []string
	}{
		"two topics with a preamble": {
			text: "# Topics\n\nThe preamble.\n\n## api: The API\n\n- Kind: feature, api-change\n- SIG: node\n- SIG: scheduling\n- Upstream: carry\n- Issues: https://github.com/kubernetes/kubernetes/issues/1\n- Docs: [Usage]: https://example.com/usage\n\nFirst paragraph.\n\n- a list in the text\n\n## quota: Quota\n\n- Kind: bug\n- SIG: api-machinery\n- Upstream: proposal\n\nCounts GPUs.\n",
			want: []Topic{
				{
					ID: "api", Title: "The API", Kinds: []string{"feature", "api-change"}, SIGs: []string{"node", "scheduling"},
					Upstream: Carry, Issues: []string{"https://github.com/kubernetes/kubernetes/issues/1"},
					Docs: []string{"[Usage]: https://example.com/usage"}, Text: "First paragraph.\n\n- a list in the text",
				},
				{ID: "quota", Title: "Quota", Kinds: []string{"bug"}, SIGs: []string{"api-machinery"}, Upstream: Proposal, Text: "Counts GPUs."},
			},
		},
		"no topic": {
			text:     "# Topics\n\nNothing yet.\n",
			wantErrs: []string{"no topic"},
		},
		"bad heading and duplicate": {
			text:     "## API: x\n\n## api: a\n\n- Kind: feature\n- SIG: node\n- Upstream: local\n\nText.\n\n## api: b\n\n- Kind: feature\n- SIG: node\n- Upstream: local\n\nText.\n",
			wantErrs: []string{`"## API: x": a topic heading is`, `topic "api" is described twice`},
		},
		"issues that are not links to an issue or a pull request": {
			text:     "## api: a\n\n- Kind: feature\n- SIG: node\n- Upstream: carry\n- Issues: #139141, https://github.com/kubernetes/kubernetes/issues/1, Fixes https://github.com/kubernetes/kubernetes/pull/2, https://github.com/kubernetes/enhancements/issues/5690/comments\n\nText.\n",
			wantErrs: []string{`issue "#139141" is not a link`, `issue "https://github.com/kubernetes/enhancements/issues/5690/comments" is not a link`, `"Fixes https://github.com/kubernetes/kubernetes/pull/2": Fixes names an issue, not a pull request`},
		},
		"a text that names the next topics": {
			text:     "## api: a\n\n- Kind: feature\n- SIG: node\n- Upstream: carry\n\nThe fields; the components follow in the next topics.\n",
			wantErrs: []string{`topic api: "next topics" names a patch or topic by its place`},
		},
		"a security-sensitive topic": {
			text: "## borrowed: A claim of another pod\n\n- Kind: bug\n- SIG: scheduling\n- Upstream: proposal\n- Security-sensitive: yes\n- Issues: Fixes https://github.com/kubernetes/kubernetes/issues/7, Part of https://github.com/kubernetes/kubernetes/pull/8\n\nText.\n",
			want: []Topic{{
				ID: "borrowed", Title: "A claim of another pod", Kinds: []string{"bug"}, SIGs: []string{"scheduling"}, Upstream: Proposal,
				Issues:            []string{"Fixes https://github.com/kubernetes/kubernetes/issues/7", "Part of https://github.com/kubernetes/kubernetes/pull/8"},
				SecuritySensitive: true, Text: "Text.",
			}},
		},
		"security-sensitive neither yes nor no": {
			text:     "## borrowed: a\n\n- Kind: bug\n- SIG: scheduling\n- Upstream: proposal\n- Security-sensitive: maybe\n\nText.\n",
			wantErrs: []string{`field Security-sensitive: "maybe" is not yes or no`},
		},
		"bad values": {
			text:     "## api: a\n\n- Kind: feature, chore\n- SIG: Node\n- Upstream: maybe\n- Owner: me\n\nText.\n",
			wantErrs: []string{`kind "chore" is not one of`, `SIG "Node" is not a SIG name`, `upstream "maybe" is not one of`, `unknown field "Owner"`},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseTopics([]byte(tc.text))
			if len(tc.wantErrs) > 0 {
				if err == nil {
					t.Fatalf("ParseTopics: no error, want %q", tc.wantErrs)
				}
				for _, want := range tc.wantErrs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not contain %q:\n%v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTopics: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseTopics =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

func TestInterleaved(t *testing.T) {
	t.Parallel()
	s := &Series{Topics: []Topic{{ID: "api"}, {ID: "scheduler"}, {ID: "quota"}}}
	for _, p := range []struct{ file, topic string }{
		{"0001", "api"}, {"0002", "scheduler"}, {"0003", "api"}, {"0004", "quota"}, {"0005", "scheduler"},
	} {
		s.Patches = append(s.Patches, Patch{File: p.file, Trailers: map[string]string{"Topic": p.topic}})
	}
	want := []string{"0003 (topic api) stands after a patch of topic scheduler", "0005 (topic scheduler) stands after a patch of topic quota"}
	if got := s.Interleaved(); !reflect.DeepEqual(got, want) {
		t.Errorf("Interleaved = %q, want %q", got, want)
	}
	s.Patches = s.Patches[:2]
	if got := s.Interleaved(); len(got) != 0 {
		t.Errorf("Interleaved of a stacked series = %q, want none", got)
	}
}

func TestParseLayout(t *testing.T) {
	t.Parallel()
	testCases := map[string]struct {
		text    string
		want    string
		wantErr string
	}{
		"no line: stacked":               {text: "# Topics\n\nThe preamble.\n\n## api: a\n", want: Stacked},
		"independent":                    {text: "# Topics\n\n- Topics: independent\n\n## api: a\n", want: Independent},
		"stacked":                        {text: "- Topics: stacked\n", want: Stacked},
		"a line in a topic is no layout": {text: "# Topics\n\n## api: a\n\n- Topics: independent\n", want: Stacked},
		"unknown":                        {text: "- Topics: parallel\n", wantErr: `Topics: "parallel" is not stacked or independent`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseLayout([]byte(tc.text))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseLayout: error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseLayout = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
