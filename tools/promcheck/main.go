// Command promcheck reads, on stdin, a JSON object {"rules": "<a Prometheus rule file, YAML>", "exprs":
// ["<PromQL>", ...]} and checks both with Prometheus's own parsers: the rule file as `promtool check rules`
// does (rulefmt: groups, names, labels, templates, each expression), each expression with the PromQL parser.
// It prints, as JSON, {"errors": [...], "metrics": [...]}: every problem found, and every metric name the rules
// and the expressions select (so a caller can check they all exist). Exit status 0 when there is no error.
package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

type input struct {
	Rules string   `json:"rules"`
	Exprs []string `json:"exprs"`
}

type output struct {
	Errors  []string `json:"errors"`
	Metrics []string `json:"metrics"`
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "promcheck: reading the input:", err)
		os.Exit(2)
	}
	out := output{Errors: []string{}, Metrics: []string{}}
	metrics := map[string]bool{}
	exprs := append([]string{}, in.Exprs...)
	p := parser.NewParser(parser.Options{})
	if in.Rules != "" {
		groups, errs := rulefmt.Parse([]byte(in.Rules), false, model.UTF8Validation, p, slog.New(slog.DiscardHandler))
		for _, err := range errs {
			out.Errors = append(out.Errors, "rules: "+err.Error())
		}
		if groups != nil {
			for _, group := range groups.Groups {
				for _, rule := range group.Rules {
					exprs = append(exprs, rule.Expr)
				}
			}
		}
	}
	for _, text := range exprs {
		expr, err := p.ParseExpr(text)
		if err != nil {
			out.Errors = append(out.Errors, fmt.Sprintf("%q: %v", text, err))
			continue
		}
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			if selector, ok := node.(*parser.VectorSelector); ok && selector.Name != "" {
				metrics[selector.Name] = true
			}
			return nil
		})
	}
	for name := range metrics {
		out.Metrics = append(out.Metrics, name)
	}
	sort.Strings(out.Metrics)
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(2)
	}
	if len(out.Errors) > 0 {
		os.Exit(1)
	}
}
