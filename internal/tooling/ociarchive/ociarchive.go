// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Package ociarchive writes single-layer OCI image archives (an OCI image
// layout in a tar file) from a directory tree, so that images can be built
// without Docker or a registry and imported with `ctr images import`. The
// archive also has the manifest.json and repositories files of `docker
// save`, which `docker load` reads (Docker before 25 cannot read an OCI
// layout alone). Archives are reproducible: the same tree gives the same
// bytes.
package ociarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

const (
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"
)

// Image describes the image to write.
type Image struct {
	// Name is the full reference, e.g. localhost/draext/pause:3.10.
	Name string
	// Tags are more full references of the same image.
	Tags []string
	// Root is the directory whose contents become the image's file system.
	Root string
	// Entrypoint, Cmd and Env go into the image config.
	Entrypoint []string
	Cmd        []string
	Env        []string
	// Arch is the GOARCH-style architecture; empty means this machine's.
	Arch string
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Write writes the image as an OCI archive to w.
func Write(w io.Writer, img Image) error {
	names := append([]string{img.Name}, img.Tags...)
	for _, name := range names {
		if repository, tag := splitReference(name); repository == "" || tag == "" {
			return fmt.Errorf("image name %q must be a full reference with a tag, e.g. localhost/draext/pause:3.10", name)
		}
	}
	if st, err := os.Stat(img.Root); err != nil || !st.IsDir() {
		return fmt.Errorf("image root %q is not a directory", img.Root)
	}
	arch := img.Arch
	if arch == "" {
		arch = runtime.GOARCH
	}
	layer, err := layerTar(img.Root)
	if err != nil {
		return err
	}
	layerDigest := digest(layer)
	config, err := json.Marshal(map[string]any{
		"architecture": arch,
		"os":           "linux",
		"config":       map[string]any{"Entrypoint": img.Entrypoint, "Cmd": img.Cmd, "Env": img.Env},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{layerDigest}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaTypeManifest,
		"config":        descriptor{MediaType: mediaTypeConfig, Digest: digest(config), Size: int64(len(config))},
		"layers":        []descriptor{{MediaType: mediaTypeLayer, Digest: layerDigest, Size: int64(len(layer))}},
	})
	if err != nil {
		return err
	}
	var manifests []descriptor
	// docker load: repository -> tag -> the ID of the layer.
	repositories := map[string]map[string]string{}
	for _, name := range names {
		repository, tag := splitReference(name)
		manifests = append(manifests, descriptor{
			MediaType: mediaTypeManifest, Digest: digest(manifest), Size: int64(len(manifest)),
			Annotations: map[string]string{"io.containerd.image.name": name, "org.opencontainers.image.ref.name": tag},
			Platform:    &platform{Architecture: arch, OS: "linux"},
		})
		if repositories[repository] == nil {
			repositories[repository] = map[string]string{}
		}
		repositories[repository][tag] = strings.TrimPrefix(layerDigest, "sha256:")
	}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": manifests})
	if err != nil {
		return err
	}
	dockerManifest, err := json.Marshal([]map[string]any{{
		"Config":   blobPath(config),
		"RepoTags": names,
		"Layers":   []string{blobPath(layer)},
	}})
	if err != nil {
		return err
	}
	dockerRepositories, err := json.Marshal(repositories)
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"manifest.json", dockerManifest},
		{"repositories", dockerRepositories},
		{blobPath(config), config},
		{blobPath(manifest), manifest},
		{blobPath(layer), layer},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// splitReference splits a full reference into repository and tag; the tag
// is what follows the last colon after the last slash (a registry port is
// not a tag).
func splitReference(name string) (string, string) {
	i := strings.LastIndex(name, ":")
	if i < 0 || i < strings.LastIndex(name, "/") {
		return name, ""
	}
	return name[:i], name[i+1:]
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func blobPath(b []byte) string {
	return "blobs/sha256/" + strings.TrimPrefix(digest(b), "sha256:")
}

// layerTar packs root into an uncompressed tar with sorted entries, root
// ownership and zero timestamps. Regular files, directories and symbolic
// links are supported; anything else is an error.
func layerTar(root string) ([]byte, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(root, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(st.Mode().Perm()), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		switch {
		case st.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case st.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
		case st.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size()
		default:
			return nil, fmt.Errorf("%s: only files, directories and symlinks can go into an image", p)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(tw, f)
			_ = f.Close() // only read
			if err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
