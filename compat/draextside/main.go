// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

// Command draextside decodes resource.k8s.io/v1 objects with draext's own
// types, the patched tree's k8s.io/api as exported by make staging (see
// go.mod), and writes them back as JSON. compat/upstream runs it to check that
// what stock k8s.io/api v0.34 and newer write is read by draext's types:
//
//	go run . -in DIR -out DIR
//
// Every <name>.json in -in is decoded strictly (an unknown or duplicate field
// is an error), every <name>.pb with apimachinery's protobuf serializer (the
// "k8s\x00" envelope the apiserver uses). Each is written to -out as
// <name>.json.json or <name>.pb.json, re-encoded as JSON, or, when it cannot be
// decoded, as <name>.json.err or <name>.pb.err with the reason. The exit
// status is not zero only when the directories cannot be read or written.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	sigsjson "sigs.k8s.io/json"
)

func main() {
	in := flag.String("in", "", "directory of .json and .pb files to decode")
	out := flag.String("out", "", "directory to write the re-encoded JSON (and .err files) to")
	flag.Parse()
	if *in == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: draextside -in DIR -out DIR")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintf(os.Stderr, "draextside: %v\n", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	scheme := runtime.NewScheme()
	if err := resourcev1.AddToScheme(scheme); err != nil {
		return err
	}
	entries, err := os.ReadDir(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); e.Type().IsRegular() && (ext == ".json" || ext == ".pb") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(in, name))
		if err != nil {
			return err
		}
		suffix, encoded := ".json", []byte(nil)
		if obj, err := decode(scheme, name, data); err != nil {
			suffix, encoded = ".err", []byte(err.Error()+"\n")
		} else if encoded, err = json.Marshal(obj); err != nil {
			return fmt.Errorf("%s: encoding as JSON: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(out, name+suffix), encoded, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// decode decodes one file with draext's types: .pb as protobuf, else JSON.
func decode(scheme *runtime.Scheme, name string, data []byte) (runtime.Object, error) {
	if strings.HasSuffix(name, ".pb") {
		return decodeProtobuf(scheme, data)
	}
	return decodeJSONStrict(scheme, data)
}

// decodeJSONStrict decodes into the type that apiVersion and kind name, as
// the apiserver does with strict field validation: case-sensitive, and an
// unknown or duplicate field is an error.
//
// compat/upstream/v1_test.go has the same function: the two modules build on
// different k8s.io/apimachinery (stock and draext's export), so they cannot
// share a package; keep both in step.
func decodeJSONStrict(scheme *runtime.Scheme, data []byte) (runtime.Object, error) {
	var typeMeta runtime.TypeMeta
	if err := json.Unmarshal(data, &typeMeta); err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	gv, err := schema.ParseGroupVersion(typeMeta.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("JSON: apiVersion: %w", err)
	}
	obj, err := scheme.New(gv.WithKind(typeMeta.Kind))
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj)
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	if len(strictErrs) > 0 {
		return nil, fmt.Errorf("JSON, strict: %w", errors.Join(strictErrs...))
	}
	return obj, nil
}

// decodeProtobuf decodes a protobuf object in the apiserver's envelope into
// the type the envelope names. apiVersion and kind are set from the envelope,
// as the apiserver's codecs do.
func decodeProtobuf(scheme *runtime.Scheme, data []byte) (runtime.Object, error) {
	obj, gvk, err := protobuf.NewSerializer(scheme, scheme).Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("protobuf: %w", err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	return obj, nil
}
