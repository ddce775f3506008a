//go:build tools

// Package tools records the commands this module builds, so that go mod tidy keeps their dependencies: the
// scheduler and its estimator (the side-by-side tests), and the rest of a Karmada control plane (the Karmada
// tier, tests/karmada): controller-manager, webhook, aggregated API server, agent and karmadactl.
package tools

import (
	_ "github.com/karmada-io/karmada/cmd/agent"
	_ "github.com/karmada-io/karmada/cmd/aggregated-apiserver"
	_ "github.com/karmada-io/karmada/cmd/controller-manager"
	_ "github.com/karmada-io/karmada/cmd/karmadactl"
	_ "github.com/karmada-io/karmada/cmd/scheduler"
	_ "github.com/karmada-io/karmada/cmd/scheduler-estimator"
	_ "github.com/karmada-io/karmada/cmd/webhook"
	_ "github.com/karmada-io/karmada/test/e2e/suites/base"
)
