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

func TestAssignNumbers(t *testing.T) {
	t.Parallel()
	committed := []Numbered{{Subject: "a", Number: 1}, {Subject: "b", Number: 2}, {Subject: "c", Number: 3}, {Subject: "d", Number: 4}}
	testCases := map[string]struct {
		committed []Numbered
		subjects  []string
		step      int
		want      []int
		wantErr   string
	}{
		"unchanged": {committed: committed, subjects: []string{"a", "b", "c", "d"}, want: []int{1, 2, 3, 4}},
		"first export numbers from one": {
			subjects: []string{"a", "b", "c"},
			want:     []int{1, 2, 3},
		},
		"appended": {committed: committed, subjects: []string{"a", "b", "c", "d", "e"}, want: []int{1, 2, 3, 4, 5}},
		"folded away leaves a gap": {
			committed: committed,
			subjects:  []string{"a", "c", "d"},
			want:      []int{1, 3, 4},
		},
		"new patch takes a gap": {
			committed: []Numbered{{Subject: "a", Number: 1}, {Subject: "c", Number: 3}},
			subjects:  []string{"a", "b", "c"},
			want:      []int{1, 2, 3},
		},
		"no room for an inserted patch": {
			committed: committed,
			subjects:  []string{"a", "b", "x", "c", "d"},
			wantErr:   `no free number for the new patch "x" between 0002 and 0003 ("c")`,
		},
		"reworded subject keeps its slot when there is room": {
			committed: []Numbered{{Subject: "a", Number: 10}, {Subject: "b", Number: 20}, {Subject: "c", Number: 30}},
			subjects:  []string{"a", "b2", "c"},
			want:      []int{10, 11, 30},
		},
		"a patch moved to the end gets a new number": {
			committed: []Numbered{{Subject: "a", Number: 10}, {Subject: "b", Number: 20}, {Subject: "c", Number: 30}, {Subject: "d", Number: 40}},
			subjects:  []string{"b", "c", "d", "a"},
			want:      []int{20, 30, 40, 41},
		},
		"a patch moved to the front keeps the others": {
			committed: []Numbered{{Subject: "a", Number: 10}, {Subject: "b", Number: 20}, {Subject: "c", Number: 30}, {Subject: "d", Number: 40}},
			subjects:  []string{"d", "a", "b", "c"},
			want:      []int{1, 10, 20, 30},
		},
		"a duplicated subject is new on both sides": {
			committed: []Numbered{{Subject: "a", Number: 10}, {Subject: "b", Number: 20}, {Subject: "b", Number: 30}},
			subjects:  []string{"a", "b", "c"},
			want:      []int{10, 11, 12},
		},
		"renumber in steps": {
			committed: committed,
			subjects:  []string{"d", "c", "b"},
			step:      10,
			want:      []int{10, 20, 30},
		},
		"renumber past four digits": {
			subjects: []string{"a", "b"},
			step:     5000,
			wantErr:  "beyond 9999",
		},
		"no number left at the end": {
			committed: []Numbered{{Subject: "a", Number: 9999}},
			subjects:  []string{"a", "b"},
			wantErr:   `no free number for the new patch "b" after 9999`,
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := AssignNumbers(tc.committed, tc.subjects, tc.step)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("AssignNumbers: error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("AssignNumbers: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("AssignNumbers = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRenumber(t *testing.T) {
	t.Parallel()
	// The committed series: three patches, the middle one later folded away.
	committedDir := writeSeries(t, map[string]string{
		"0001-features-add-the-gate.patch": patchText("features: add the gate", goodMessage),
		"0002-api-fix-the-gate.patch":      patchText("api: fix the gate", goodMessage),
		"0003-api-add-a-field.patch":       patchText("api: add a field", goodMessage),
	}, []string{"0001-features-add-the-gate.patch", "0002-api-fix-the-gate.patch", "0003-api-add-a-field.patch"}, false)
	committed, err := Committed(committedDir)
	if err != nil {
		t.Fatal(err)
	}
	// What format-patch writes after the fold, numbered from 0001, plus a new
	// patch at the end.
	out := t.TempDir()
	for name, subject := range map[string]string{
		"0001-features-add-the-gate.patch":  "features: add the gate",
		"0002-api-add-a-field.patch":        "api: add a field",
		"0003-api-validate-the-field.patch": "api: validate the field",
	} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(patchText(subject, goodMessage)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Renumber(out, committed, 0); err != nil {
		t.Fatalf("Renumber: %v", err)
	}
	want := []string{"0001-features-add-the-gate.patch", "0003-api-add-a-field.patch", "0004-api-validate-the-field.patch"}
	got, err := ReadSeries(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
	onDisk, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(want)+1 {
		t.Errorf("files in the directory: %v, want the %d patches and series", onDisk, len(want))
	}
	data, err := os.ReadFile(filepath.Join(out, "0003-api-add-a-field.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := ParseHeader(data); err != nil || h.Subject != "api: add a field" {
		t.Errorf("0003 holds %+v (%v), want the patch \"api: add a field\"", h, err)
	}
}

func TestCommittedWithoutSeries(t *testing.T) {
	t.Parallel()
	got, err := Committed(t.TempDir())
	if err != nil || got != nil {
		t.Errorf("Committed(empty dir) = %v, %v; want nothing and no error", got, err)
	}
}

func TestReworded(t *testing.T) {
	t.Parallel()
	n := func(subject, change string, number int) Numbered {
		return Numbered{Subject: subject, Number: number, Change: change}
	}
	testCases := map[string]struct {
		committed, exported []Numbered
		want                []string // the committed subjects afterwards
	}{
		"nothing reworded": {
			committed: []Numbered{n("a", "1", 10), n("b", "2", 20)},
			exported:  []Numbered{n("a", "1", 0), n("b", "2", 0)},
			want:      []string{"a", "b"},
		},
		"a reworded subject takes the committed patch's place": {
			committed: []Numbered{n("a", "1", 10), n("b", "2", 20)},
			exported:  []Numbered{n("a", "1", 0), n("b, shorter", "2", 0)},
			want:      []string{"a", "b, shorter"},
		},
		"a reworded patch whose change changed too is new": {
			committed: []Numbered{n("a", "1", 10), n("b", "2", 20)},
			exported:  []Numbered{n("a", "1", 0), n("c", "3", 0)},
			want:      []string{"a", "b"},
		},
		"a subject kept with a new change stays by subject": {
			committed: []Numbered{n("a", "1", 10), n("b", "2", 20)},
			exported:  []Numbered{n("a", "2", 0), n("c", "2", 0)},
			want:      []string{"a", "b"},
		},
		"a change two exported patches make matches neither": {
			committed: []Numbered{n("a", "1", 10)},
			exported:  []Numbered{n("x", "1", 0), n("y", "1", 0)},
			want:      []string{"a"},
		},
		"a change two committed patches made matches neither": {
			committed: []Numbered{n("a", "1", 10), n("b", "1", 20)},
			exported:  []Numbered{n("x", "1", 0)},
			want:      []string{"a", "b"},
		},
		"no change known": {
			committed: []Numbered{n("a", "", 10)},
			exported:  []Numbered{n("x", "", 0)},
			want:      []string{"a"},
		},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := Reworded(tc.committed, tc.exported)
			var subjects []string
			for i, c := range got {
				subjects = append(subjects, c.Subject)
				if c.Number != tc.committed[i].Number {
					t.Errorf("Reworded changed the number of %q to %d", c.Subject, c.Number)
				}
			}
			if !reflect.DeepEqual(subjects, tc.want) {
				t.Errorf("Reworded subjects = %q, want %q", subjects, tc.want)
			}
		})
	}
}

func TestRenumberKeepsTheNumberOfARewordedPatch(t *testing.T) {
	t.Parallel()
	committedDir := writeSeries(t, map[string]string{
		"0010-features-add-the-gate.patch":                        patchText("features: add the gate", goodMessage),
		"0020-api-add-a-field-with-a-much-too-long-subject.patch": strings.Replace(patchText("api: add a field with a much too long subject", goodMessage), "+// x", "+// z", 1),
		"0030-api-validate-the-field.patch":                       strings.Replace(patchText("api: validate the field", goodMessage), "+// x", "+// y", 1),
	}, []string{"0010-features-add-the-gate.patch", "0020-api-add-a-field-with-a-much-too-long-subject.patch", "0030-api-validate-the-field.patch"}, false)
	committed, err := Committed(committedDir)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for name, text := range map[string]string{
		"0001-features-add-the-gate.patch":  patchText("features: add the gate", goodMessage),
		"0002-api-add-a-field.patch":        strings.Replace(patchText("api: add a field", "A reworded message.\n\n"+goodMessage[len("Add the gate.\n\n"):]), "+// x", "+// z", 1),
		"0003-api-validate-the-field.patch": strings.Replace(patchText("api: validate the field", goodMessage), "+// x", "+// y", 1),
	} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Renumber(out, committed, 0); err != nil {
		t.Fatalf("Renumber: %v", err)
	}
	got, err := ReadSeries(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0010-features-add-the-gate.patch", "0020-api-add-a-field.patch", "0030-api-validate-the-field.patch"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series = %v, want %v", got, want)
	}
}
