package main

// Batch mode: `karmada-oracle --cases PATH` (PATH or - for stdin) reads JSON lines, one case each:
//
//	{"id": "any", "documents": [{...}, ...], "flags": {"plugins": "*,-TaintToleration",
//	 "enableEmptyWorkloadPropagation": true, "featureGates": {"MultiplePodTemplatesScheduling": true},
//	 "policyDefaults": true}}
//
// and writes one JSON line per case, in order: {"id": ..., "results": [...]} with the results of
// `simulate -o json`, or {"id": ..., "error": "..."} when the case's input is unusable or Karmada's scheduler
// did not finish it. Every case runs in a fresh fake clientset and a fresh scheduler (NewScheduler + Run, as in
// the single-run mode), so cases see nothing of each other: only the process start is shared. The flags mean
// what the command-line flags of the single-run mode mean; an absent flag has its default, whatever an
// earlier case set.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/karmada-io/karmada/pkg/features"
)

type caseFlags struct {
	Plugins                        *string         `json:"plugins"`
	EnableEmptyWorkloadPropagation bool            `json:"enableEmptyWorkloadPropagation"`
	FeatureGates                   map[string]bool `json:"featureGates"`
	PolicyDefaults                 bool            `json:"policyDefaults"`
}

type batchCase struct {
	ID        json.RawMessage   `json:"id"`
	Documents []json.RawMessage `json:"documents"`
	Flags     caseFlags         `json:"flags"`
}

type batchAnswer struct {
	ID      json.RawMessage `json:"id"`
	Results []result        `json:"results,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// runCases answers every case of the JSON-lines source, in order; a case that fails is answered with its error
// and the others run. Only an unreadable source (or stdout failing) stops it: exit status 2 or 1.
//
// Up to `parallel` cases run at once (each waits mostly on its informers: client-go checks that a cache has
// synced every 100 ms). Feature gates are global to the process, so cases run together only when they ask
// for the same gates: a case asking for other gates waits until the running ones are done.
func runCases(path string, base *options) int {
	var source io.Reader = os.Stdin
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: --cases: %v\n", err)
			return 2
		}
		defer file.Close()
		source = file
	}
	var lines [][]byte
	reader := bufio.NewReaderSize(source, 1<<20)
	for {
		text, err := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(text)) > 0 {
			lines = append(lines, text)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: --cases: line %d: %v\n", len(lines)+1, err)
			return 2
		}
	}

	defaults := gateDefaults()
	cases := make([]*batchCase, len(lines))
	gateKeys := make([]string, len(lines))
	done := make([]chan batchAnswer, len(lines))
	for i, text := range lines {
		done[i] = make(chan batchAnswer, 1)
		c, gates, err := parseCase(i+1, text, defaults)
		if err != nil {
			done[i] <- *err
			continue
		}
		cases[i] = c
		key, _ := json.Marshal(gates) // map keys sorted: one key per set of gates
		gateKeys[i] = string(key)
	}

	go func() {
		slots := make(chan struct{}, max(base.parallel, 1))
		var running sync.WaitGroup
		current := ""
		for i, c := range cases {
			if c == nil {
				continue
			}
			if gateKeys[i] != current {
				running.Wait()
				var gates map[string]bool
				_ = json.Unmarshal([]byte(gateKeys[i]), &gates)
				if err := features.FeatureGate.SetFromMap(gates); err != nil {
					done[i] <- batchAnswer{ID: c.ID, Error: fmt.Sprintf("featureGates: %v", err)}
					current = ""
					continue
				}
				current = gateKeys[i]
			}
			slots <- struct{}{}
			running.Add(1)
			go func(i int, c *batchCase) {
				defer func() { <-slots; running.Done() }()
				done[i] <- runCase(c, base)
			}(i, c)
		}
	}()

	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for i := range done {
		if err := encoder.Encode(<-done[i]); err != nil {
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return 1
		}
		if err := out.Flush(); err != nil { // each answer as soon as it and those before it are known
			fmt.Fprintf(os.Stderr, "error: %v\n", err)
			return 1
		}
	}
	return 0
}

// parseCase reads one line: the case, and the feature gates it runs with (every gate, defaults included).
func parseCase(line int, text []byte, defaults map[string]bool) (*batchCase, map[string]bool, *batchAnswer) {
	c := &batchCase{}
	if err := json.Unmarshal(text, c); err != nil {
		return nil, nil, &batchAnswer{ID: json.RawMessage("null"), Error: fmt.Sprintf("line %d: not a case: %v", line, err)}
	}
	if len(c.ID) == 0 {
		c.ID = json.RawMessage("null")
	}
	gates := map[string]bool{}
	for name, value := range defaults {
		gates[name] = value
	}
	for name, value := range c.Flags.FeatureGates {
		if _, known := defaults[name]; !known {
			return nil, nil, &batchAnswer{ID: c.ID, Error: fmt.Sprintf("featureGates: unknown gate %q", name)}
		}
		gates[name] = value
	}
	return c, gates, nil
}

func runCase(c *batchCase, base *options) batchAnswer {
	fail := func(format string, args ...any) batchAnswer {
		return batchAnswer{ID: c.ID, Error: fmt.Sprintf(format, args...)}
	}
	opts := *base
	opts.plugins = []string{"*"}
	if c.Flags.Plugins != nil {
		opts.plugins = strings.Split(*c.Flags.Plugins, ",")
	}
	opts.enableEmptyWorkloadPropagation = c.Flags.EnableEmptyWorkloadPropagation
	opts.policyDefaults = c.Flags.PolicyDefaults

	in := newInputs()
	if problems := in.add(fmt.Sprintf("case %s", string(c.ID)), c.Documents); len(problems) > 0 {
		return fail("%s", strings.Join(problems, "\n"))
	}
	results, err := schedule(context.Background(), in, &opts)
	if err != nil {
		return fail("%v", err)
	}
	return batchAnswer{ID: c.ID, Results: results}
}

// gateDefaults holds every gate Karmada declares with its default, so that each case starts from them.
func gateDefaults() map[string]bool {
	defaults := map[string]bool{}
	for name, spec := range features.FeatureGate.GetAll() {
		if string(name) == "AllAlpha" || string(name) == "AllBeta" {
			continue
		}
		defaults[string(name)] = spec.Default
	}
	return defaults
}
