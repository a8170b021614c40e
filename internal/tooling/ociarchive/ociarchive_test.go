// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package ociarchive

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func readArchive(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
}

func TestWrite(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("busybox", filepath.Join(root, "bin", "sh")); err != nil {
		t.Fatal(err)
	}
	img := Image{Name: "localhost/draext/busybox:1.35", Tags: []string{"localhost:5000/busybox-amd64:1.35"}, Root: root, Entrypoint: []string{"/bin/sh"}, Env: []string{"PATH=/bin"}, Arch: "amd64"}
	var a, b bytes.Buffer
	if err := Write(&a, img); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same tree differ")
	}

	files := readArchive(t, a.Bytes())
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 2 || index.Manifests[0].Annotations["io.containerd.image.name"] != img.Name ||
		index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "1.35" ||
		index.Manifests[1].Annotations["io.containerd.image.name"] != img.Tags[0] || index.Manifests[1].Digest != index.Manifests[0].Digest {
		t.Fatalf("index %+v", index)
	}
	blob := func(d descriptor) []byte {
		data, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		if !ok || digest(data) != d.Digest || int64(len(data)) != d.Size {
			t.Fatalf("blob %s missing or not matching its descriptor", d.Digest)
		}
		return data
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(index.Manifests[0]), &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config struct{ Entrypoint, Env []string } `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blob(manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Layers) != 1 || config.RootFS.DiffIDs[0] != manifest.Layers[0].Digest ||
		config.Config.Entrypoint[0] != "/bin/sh" || config.Config.Env[0] != "PATH=/bin" {
		t.Fatalf("manifest %+v config %+v", manifest, config)
	}

	// What docker load reads: the same config and layer, both names.
	var dockerManifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &dockerManifest); err != nil {
		t.Fatal(err)
	}
	wantDocker := []string{"blobs/sha256/" + strings.TrimPrefix(manifest.Config.Digest, "sha256:"), img.Name + " " + img.Tags[0], "blobs/sha256/" + strings.TrimPrefix(manifest.Layers[0].Digest, "sha256:")}
	if len(dockerManifest) != 1 || dockerManifest[0].Config != wantDocker[0] || strings.Join(dockerManifest[0].RepoTags, " ") != wantDocker[1] ||
		len(dockerManifest[0].Layers) != 1 || dockerManifest[0].Layers[0] != wantDocker[2] {
		t.Fatalf("manifest.json %+v, want %v", dockerManifest, wantDocker)
	}
	var repositories map[string]map[string]string
	if err := json.Unmarshal(files["repositories"], &repositories); err != nil {
		t.Fatal(err)
	}
	if repositories["localhost:5000/busybox-amd64"]["1.35"] == "" || repositories["localhost/draext/busybox"]["1.35"] == "" {
		t.Errorf("repositories %v", repositories)
	}

	tr := tar.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entry := h.Name
		if h.Typeflag == tar.TypeSymlink {
			entry += "->" + h.Linkname
		}
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d gid %d mtime %v", h.Name, h.Uid, h.Gid, h.ModTime)
		}
		got = append(got, entry)
	}
	if want := "bin/,bin/busybox,bin/sh->busybox"; strings.Join(got, ",") != want {
		t.Errorf("layer entries %v, want %s", got, want)
	}
}

func TestWriteRejects(t *testing.T) {
	fifoRoot := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoRoot, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	testCases := map[string]struct {
		img  Image
		want string
	}{
		"no tag":        {img: Image{Name: "localhost/pause", Root: t.TempDir()}, want: "must be a full reference with a tag"},
		"port, no tag":  {img: Image{Name: "localhost:5000/pause", Root: t.TempDir()}, want: "must be a full reference with a tag"},
		"a tag without": {img: Image{Name: "localhost/pause:1", Tags: []string{"localhost/pause"}, Root: t.TempDir()}, want: `"localhost/pause" must be`},
		"missing root":  {img: Image{Name: "localhost/pause:1", Root: "/nonexistent"}, want: `image root "/nonexistent" is not a directory`},
		"special file":  {img: Image{Name: "localhost/pause:1", Root: fifoRoot}, want: "only files, directories and symlinks"},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			err := Write(io.Discard, tc.img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
