// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// maxDiffLines bounds the differences one comparison reports.
const maxDiffLines = 25

// jsonDiff compares the JSON that was sent with the JSON the receiving side
// gives back after decoding it: key order, whitespace and number spelling do
// not matter, and a member whose value is null counts as absent (both decode
// to the same Go value). It returns one line per difference, by path, at
// most maxDiffLines and a line that counts the others.
func jsonDiff(sent, back []byte) ([]string, error) {
	diffs, err := jsonDiffAll(sent, back)
	if len(diffs) > maxDiffLines {
		diffs = append(diffs[:maxDiffLines], fmt.Sprintf("... and %d more", len(diffs)-maxDiffLines))
	}
	return diffs, err
}

// jsonDiffAll is jsonDiff with every difference.
func jsonDiffAll(sent, back []byte) ([]string, error) {
	a, err := decodeGeneric(sent)
	if err != nil {
		return nil, fmt.Errorf("the JSON sent: %w", err)
	}
	b, err := decodeGeneric(back)
	if err != nil {
		return nil, fmt.Errorf("the JSON given back: %w", err)
	}
	var diffs []string
	diffValues("", a, b, &diffs)
	return diffs, nil
}

func decodeGeneric(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // int64 values compare exactly
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func diffValues(path string, sent, back any, diffs *[]string) {
	switch s := sent.(type) {
	case map[string]any:
		b, ok := back.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k, v := range s {
			keys[k] = v != nil
		}
		for k, v := range b {
			keys[k] = keys[k] || v != nil
		}
		sorted := make([]string, 0, len(keys))
		for k, present := range keys {
			if present {
				sorted = append(sorted, k)
			}
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			sv, sok := s[k]
			bv, bok := b[k]
			switch p := path + "." + k; {
			case !sok || sv == nil:
				*diffs = append(*diffs, fmt.Sprintf("%s: not sent, given back as %s", p, brief(bv)))
			case !bok || bv == nil:
				*diffs = append(*diffs, fmt.Sprintf("%s: sent as %s, not given back", p, brief(sv)))
			default:
				diffValues(p, sv, bv, diffs)
			}
		}
		return
	case []any:
		b, ok := back.([]any)
		if !ok {
			break
		}
		if len(s) != len(b) {
			*diffs = append(*diffs, fmt.Sprintf("%s: sent %d item(s), given back %d", pathOrRoot(path), len(s), len(b)))
			return
		}
		for i := range s {
			diffValues(fmt.Sprintf("%s[%d]", path, i), s[i], b[i], diffs)
		}
		return
	}
	if !reflect.DeepEqual(sent, back) {
		*diffs = append(*diffs, fmt.Sprintf("%s: sent as %s, given back as %s", pathOrRoot(path), brief(sent), brief(back)))
	}
}

func pathOrRoot(path string) string {
	if path == "" {
		return "(document)"
	}
	return path
}

// brief is a JSON value, shortened for a message.
func brief(v any) string {
	data, _ := json.Marshal(v)
	if s := string(data); len(s) <= 80 {
		return s
	}
	return string(data[:77]) + "..."
}

func TestJSONDiff(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sent, back string
		want       []string
	}{
		{name: "equal, other order and spacing", sent: `{"a":1,"b":{"c":[1,2]}}`, back: `{ "b": {"c": [1, 2]}, "a": 1 }`},
		{name: "null counts as absent", sent: `{"a":1,"b":null}`, back: `{"a":1}`},
		{name: "dropped", sent: `{"spec":{"a":"x","b":"y"}}`, back: `{"spec":{"a":"x"}}`, want: []string{`.spec.b: sent as "y", not given back`}},
		{name: "added", sent: `{"a":1}`, back: `{"a":1,"b":true}`, want: []string{`.b: not sent, given back as true`}},
		{name: "moved", sent: `{"a":{"x":1}}`, back: `{"b":{"x":1}}`, want: []string{`.a: sent as {"x":1}, not given back`, `.b: not sent, given back as {"x":1}`}},
		{name: "changed in a list", sent: `{"l":[{"n":"a"},{"n":"b"}]}`, back: `{"l":[{"n":"a"},{"n":"c"}]}`, want: []string{`.l[1].n: sent as "b", given back as "c"`}},
		{name: "list length", sent: `{"l":[1,2]}`, back: `{"l":[1]}`, want: []string{`.l: sent 2 item(s), given back 1`}},
		{name: "int64 exactly", sent: `{"n":9007199254740993}`, back: `{"n":9007199254740992}`, want: []string{`.n: sent as 9007199254740993, given back as 9007199254740992`}},
		{name: "type", sent: `{"a":"1"}`, back: `{"a":1}`, want: []string{`.a: sent as "1", given back as 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonDiff([]byte(tc.sent), []byte(tc.back))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("jsonDiff(%s, %s):\n  %s\nwant\n  %s", tc.sent, tc.back, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestJSONDiffLimit(t *testing.T) {
	object := func(n int) []byte {
		members := make([]string, n)
		for i := range n {
			members[i] = fmt.Sprintf(`"m%02d":%d`, i, i)
		}
		return []byte("{" + strings.Join(members, ",") + "}")
	}
	for _, tc := range []struct {
		name              string
		dropped           int
		wantAll, wantDiff int
		wantLast          string
	}{
		{name: "under the limit", dropped: maxDiffLines, wantAll: maxDiffLines, wantDiff: maxDiffLines, wantLast: `.m24: sent as 24, not given back`},
		{name: "over the limit", dropped: maxDiffLines + 5, wantAll: maxDiffLines + 5, wantDiff: maxDiffLines + 1, wantLast: "... and 5 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent := object(tc.dropped)
			all, err := jsonDiffAll(sent, []byte("{}"))
			if err != nil {
				t.Fatal(err)
			}
			diff, err := jsonDiff(sent, []byte("{}"))
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != tc.wantAll || len(diff) != tc.wantDiff || diff[len(diff)-1] != tc.wantLast {
				t.Errorf("jsonDiffAll: %d line(s), jsonDiff: %d, its last %q; want %d, %d, %q", len(all), len(diff), diff[len(diff)-1], tc.wantAll, tc.wantDiff, tc.wantLast)
			}
		})
	}
}
