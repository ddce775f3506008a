//go:build tools

// Package tools records the commands this module builds, so that go mod tidy keeps their dependencies.
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/scheduler"
	_ "github.com/karmada-io/karmada/cmd/scheduler-estimator"
)
