// Command karmada-oracle answers the question `binding-scheduler simulate` answers — what would the
// scheduler decide for each binding if it scheduled it now? — with Karmada's own scheduler
// (github.com/karmada-io/karmada/pkg/scheduler, the version pinned in go.mod), and prints the answer in
// the JSON `binding-scheduler simulate -o json` prints. The tests compare the two.
//
//	karmada-oracle -f PATH [-f PATH ...] [--plugins LIST] [--enable-empty-workload-propagation]
//	               [--feature-gates GATE=BOOL,...] [--policy-defaults] [--timeout DURATION] [--v N]
//	karmada-oracle --cases PATH [--parallel N] [--timeout DURATION] [--v N]
//
// PATH is a YAML/JSON file (single or multi-document, or `kind: List`), a folder of them, or `-` for stdin.
// Exit status: 0 with the results on stdout, 2 for unusable input or flags, 1 when Karmada's scheduler could
// not be run or did not finish; the reason goes to stderr. --cases runs many inputs in one process, each in a
// fresh scheduler, and answers each on one line (see batch.go).
//
// The bindings are scheduled as they would be stored: with the defaults the API server applies (the CRDs'),
// not those of the PropagationPolicy webhook, which a binding only carries when it was made from a policy;
// --policy-defaults applies those too, with Karmada's own helpers (see prepare in schedule.go).
package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/karmada-io/karmada/pkg/features"
)

// options are Karmada's own scheduler flags that change decisions, registered the way
// cmd/scheduler/app/options.Options.AddFlags registers them (same names, types and defaults), plus ours.
type options struct {
	files                          []string
	cases                          string
	output                         string
	policyDefaults                 bool
	plugins                        []string
	enableEmptyWorkloadPropagation bool
	parallel                       int
	timeout                        time.Duration
	verbosity                      int
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	opts, err := parseFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 2
	}
	configureLogging(opts.verbosity)
	if opts.cases != "" {
		return runCases(opts.cases, opts)
	}

	in, problems := loadInputs(opts.files)
	if len(problems) > 0 {
		for _, problem := range problems {
			fmt.Fprintln(os.Stderr, problem)
		}
		return 2
	}
	for _, skipped := range in.skipped {
		fmt.Fprintf(os.Stderr, "note: ignoring %s (not a Cluster or binding)\n", skipped)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results, err := schedule(ctx, in, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	if err := writeResults(os.Stdout, results); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string) (*options, error) {
	opts := &options{}
	fs := pflag.NewFlagSet("karmada-oracle", pflag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringArrayVarP(&opts.files, "filename", "f", nil,
		"a YAML/JSON file or a folder of them (repeatable); single or multi-document, or kind: List; - for stdin")
	fs.StringVar(&opts.cases, "cases", "",
		"run many cases in one process: JSON lines {id, documents, flags} from PATH (- for stdin), one answer line each")
	fs.IntVar(&opts.parallel, "parallel", 16, "with --cases: how many cases run at once")
	fs.BoolVar(&opts.policyDefaults, "policy-defaults", false,
		"apply the PropagationPolicy webhook's placement defaults first, as a binding made from a policy carries them")
	fs.StringVarP(&opts.output, "output", "o", "json", "output format; only json (simulate's -o json)")
	// The next three are Karmada's scheduler flags, declared as in cmd/scheduler/app/options (AddFlags).
	fs.BoolVar(&opts.enableEmptyWorkloadPropagation, "enable-empty-workload-propagation", false,
		"Enable workload with replicas 0 to be propagated to member clusters.")
	fs.StringSliceVar(&opts.plugins, "plugins", []string{"*"},
		"A list of plugins to enable. '*' enables all build-in and customized plugins, 'foo' enables the plugin named 'foo', '*,-foo' disables the plugin named 'foo'.")
	features.FeatureGate.AddFlag(fs)
	fs.DurationVar(&opts.timeout, "timeout", time.Minute,
		"how long to wait for Karmada's scheduler to write one binding's Scheduled condition")
	fs.IntVar(&opts.verbosity, "v", -1, "Karmada's klog verbosity on stderr (default: no logs)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("takes no arguments, got %q", fs.Arg(0))
	}
	if opts.cases != "" && len(opts.files) > 0 {
		return nil, fmt.Errorf("--cases and -f do not go together")
	}
	if opts.cases == "" && len(opts.files) == 0 {
		return nil, fmt.Errorf("at least one -f PATH (or --cases PATH) is required")
	}
	if opts.output != "json" {
		return nil, fmt.Errorf("-o %q: only json is supported", opts.output)
	}
	return opts, nil
}

// configureLogging silences Karmada's klog output unless --v asks for it (then klog writes to stderr at
// that verbosity, as Karmada's components do with -v).
func configureLogging(verbosity int) {
	if verbosity < 0 {
		klog.SetLogger(logr.Discard())
		return
	}
	flags := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(flags)
	_ = flags.Set("v", strconv.Itoa(verbosity))
	_ = flags.Set("logtostderr", "true")
}
