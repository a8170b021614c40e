package nodelock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAcquire(t *testing.T) {
	testCases := map[string]struct {
		holder  string // mode holding the lock, "" for none
		mode    string
		wantErr string
	}{
		"free":                         {mode: "dra"},
		"device plugin blocks DRA":     {holder: "device-plugin", mode: "dra", wantErr: "already served by the device-plugin mode (pid %d)"},
		"DRA blocks the device plugin": {holder: "dra", mode: "device-plugin", wantErr: "already served by the dra mode (pid %d)"},
		"DRA blocks a second DRA":      {holder: "dra", mode: "dra", wantErr: "already served by the dra mode (pid %d)"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "gpus.lock")
			if tc.holder != "" {
				// flock locks belong to the open file, so a second open in
				// this process conflicts just like another process would.
				held, err := Acquire(path, tc.holder)
				if err != nil {
					t.Fatal(err)
				}
				defer held.Release()
			}
			l, err := Acquire(path, tc.mode)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(path)
				if want := fmt.Sprintf("%s %d\n", tc.mode, os.Getpid()); string(data) != want {
					t.Errorf("lock file says %q, want %q", data, want)
				}
				if err := l.Release(); err != nil {
					t.Fatal(err)
				}
				again, err := Acquire(path, "device-plugin")
				if err != nil {
					t.Fatalf("lock not free after Release: %v", err)
				}
				again.Release()
				return
			}
			if want := fmt.Sprintf(tc.wantErr, os.Getpid()); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("got %v, want an error containing %q", err, want)
			}
		})
	}
}
