// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/draext/draext/internal/gpudriver/cdi"
)

func TestFlagEnvName(t *testing.T) {
	for flagName, want := range map[string]string{
		"nvml":                "DRAEXT_FLAG_NVML",
		"node-name":           "DRAEXT_FLAG_NODE_NAME",
		"kubelet-plugins-dir": "DRAEXT_FLAG_KUBELET_PLUGINS_DIR",
		"healthcheck-address": "DRAEXT_FLAG_HEALTHCHECK_ADDRESS",
		"v":                   "DRAEXT_FLAG_V",
		"log_file":            "DRAEXT_FLAG_LOG_FILE",
		"log.format":          "DRAEXT_FLAG_LOG_FORMAT",
	} {
		if got := flagEnvName(flagName); got != want {
			t.Errorf("flagEnvName(%q) = %q, want %q", flagName, got, want)
		}
	}
}

// The variables of the binary's flags are distinct and stay out of the
// DRAEXT_GPU_<ID> names that the driver hands to containers.
func TestFlagEnvNamesOfTheBinary(t *testing.T) {
	if strings.HasPrefix(flagEnvPrefix, cdi.GPUEnvPrefix) || strings.HasPrefix(cdi.GPUEnvPrefix, flagEnvPrefix) {
		t.Fatalf("flag prefix %q and GPU prefix %q overlap", flagEnvPrefix, cdi.GPUEnvPrefix)
	}
	fs, _ := newFlagSet(nil)
	seen := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) {
		name := flagEnvName(f.Name)
		if other, ok := seen[name]; ok {
			t.Errorf("--%s and --%s both map to %s", f.Name, other, name)
		}
		seen[name] = f.Name
		if strings.HasPrefix(name, cdi.GPUEnvPrefix) {
			t.Errorf("--%s maps to %s, a GPU variable", f.Name, name)
		}
	})
	for _, name := range []string{"mode", "nvml", "node-name", "discover", "v"} {
		if fs.Lookup(name) == nil {
			t.Errorf("no flag --%s", name)
		}
	}
}

func TestParseFlags(t *testing.T) {
	testCases := map[string]struct {
		args []string
		env  []string
		// check, when set, inspects the parsed options.
		check func(t *testing.T, o options)
		// wantErr, when set, is part of the expected error.
		wantErr string
	}{
		"defaults": {
			check: func(t *testing.T, o options) {
				if o.mode != "dra" || o.nvml != "real" || o.nodeName != "" || o.discoverOnly {
					t.Errorf("got %+v", o)
				}
			},
		},
		"variable sets a string flag": {
			env: []string{"DRAEXT_FLAG_NVML=mock:dgxh100", "DRAEXT_FLAG_HEALTHCHECK_ADDRESS=127.0.0.1:19515"},
			check: func(t *testing.T, o options) {
				if o.nvml != "mock:dgxh100" || o.healthAddress != "127.0.0.1:19515" {
					t.Errorf("nvml %q, healthcheck address %q", o.nvml, o.healthAddress)
				}
			},
		},
		"variable sets a bool flag": {
			env: []string{"DRAEXT_FLAG_DISCOVER=true"},
			check: func(t *testing.T, o options) {
				if !o.discoverOnly {
					t.Error("discover not set")
				}
			},
		},
		"empty variable sets an empty value": {
			env: []string{"DRAEXT_FLAG_DRIVER_ROOT="},
			check: func(t *testing.T, o options) {
				if o.driverRoot != "" {
					t.Errorf("driver root %q", o.driverRoot)
				}
			},
		},
		"explicit flag wins": {
			args: []string{"--nvml=real", "--discover=false"},
			env:  []string{"DRAEXT_FLAG_NVML=mock:dgxa100", "DRAEXT_FLAG_DISCOVER=true"},
			check: func(t *testing.T, o options) {
				if o.nvml != "real" || o.discoverOnly {
					t.Errorf("nvml %q, discover %v", o.nvml, o.discoverOnly)
				}
			},
		},
		"NODE_NAME is the fallback for the node name": {
			env: []string{"NODE_NAME=n1"},
			check: func(t *testing.T, o options) {
				if o.nodeName != "n1" {
					t.Errorf("node name %q", o.nodeName)
				}
			},
		},
		"the flag's variable wins over NODE_NAME": {
			env: []string{"NODE_NAME=n1", "DRAEXT_FLAG_NODE_NAME=n2"},
			check: func(t *testing.T, o options) {
				if o.nodeName != "n2" {
					t.Errorf("node name %q", o.nodeName)
				}
			},
		},
		"other variables are ignored": {
			env: []string{"DRAEXT_GPU_GPU_0=GPU-0", "DRAEXT_ROOT=/src", "NVML=mock:dgxa100"},
			check: func(t *testing.T, o options) {
				if o.nvml != "real" {
					t.Errorf("nvml %q", o.nvml)
				}
			},
		},
		"the knob of hosts whose kubelets share a device-plugin socket": {
			env: []string{"DRAEXT_FLAG_IGNORE_FOREIGN_GPU_UUIDS=true"},
			check: func(t *testing.T, o options) {
				if !o.ignoreForeignGPUs {
					t.Error("ignore-foreign-gpu-uuids not set")
				}
			},
		},
		"foreign GPU UUIDs withhold every GPU by default": {
			check: func(t *testing.T, o options) {
				if o.ignoreForeignGPUs {
					t.Error("ignore-foreign-gpu-uuids set by default")
				}
			},
		},
		"malformed bool":      {env: []string{"DRAEXT_FLAG_DISCOVER=yes"}, wantErr: `$DRAEXT_FLAG_DISCOVER="yes" (--discover): not a boolean, use true or false`},
		"malformed verbosity": {env: []string{"DRAEXT_FLAG_V=high"}, wantErr: `$DRAEXT_FLAG_V="high" (--v): strconv.ParseInt: parsing "high": invalid syntax`},
		"unknown variable":    {env: []string{"DRAEXT_FLAG_NVLM=mock:dgxa100"}, wantErr: "$DRAEXT_FLAG_NVLM is set, but draext-gpu has no flag for it"},
		"unknown flag":        {args: []string{"--nvlm=real"}, wantErr: "flag provided but not defined: -nvlm"},
		"stray argument":      {args: []string{"dra"}, wantErr: `unexpected argument "dra"`},
	}
	for name, tc := range testCases {
		t.Run(name, func(t *testing.T) {
			o, err := parseFlags(tc.args, tc.env, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
		})
	}
}

func TestHelpNamesVariables(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"--help"}, nil, &out)
	if err != flag.ErrHelp {
		t.Fatalf("got %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"$DRAEXT_FLAG_NVML", "$DRAEXT_FLAG_NODE_NAME", "$NODE_NAME", "$DRAEXT_FLAG_V", "DRAEXT_FLAG_<NAME>"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %s:\n%s", want, out.String())
		}
	}
}
