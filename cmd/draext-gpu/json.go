// Copyright 2026 The draext Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import "encoding/json"

func jsonIndent(v any) (string, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	return string(b), err
}
