package main

// Reading the inputs the way `binding-scheduler simulate` reads them (operator/binding_scheduler/cli/inputs.py):
// files and folders (recursively, *.yaml/*.yml/*.json in name order), multi-document YAML or JSON, the items
// of a `kind: *List`; Clusters and (Cluster)ResourceBindings are kept, other objects are noted and ignored.
// This is only file handling: the objects are decoded into Karmada's own API types.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

var suffixes = []string{".yaml", ".yml", ".json"}

// binding is one ResourceBinding or ClusterResourceBinding of the inputs, in input order.
type binding struct {
	rb  *workv1alpha2.ResourceBinding        // set for a ResourceBinding
	crb *workv1alpha2.ClusterResourceBinding // set for a ClusterResourceBinding
}

func (b binding) kind() string {
	if b.rb != nil {
		return "ResourceBinding"
	}
	return "ClusterResourceBinding"
}

func (b binding) key() string {
	if b.rb != nil {
		return b.rb.Namespace + "/" + b.rb.Name
	}
	return b.crb.Name
}

type inputs struct {
	clusters []*clusterv1alpha1.Cluster
	bindings []binding
	skipped  []string

	clusterFiles map[string]string // cluster name -> where it was read
	bindingFiles map[string]string // "kind key" -> where it was read
}

// inputFiles expands folders into their files, recursively, in name order (Python's sorted rglob).
func inputFiles(paths []string) ([]string, []string) {
	var files, problems []string
	for _, path := range paths {
		info, err := os.Stat(path)
		if path == "-" || err != nil || !info.IsDir() {
			files = append(files, path)
			continue
		}
		walkErr := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: - -: %v", p, err))
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
				return nil
			}
			for _, suffix := range suffixes {
				if filepath.Ext(p) == suffix {
					files = append(files, p)
					break
				}
			}
			return nil
		})
		if walkErr != nil {
			problems = append(problems, fmt.Sprintf("%s: - -: %v", path, walkErr))
		}
	}
	return files, problems
}

// documents returns every object of one file as JSON: each YAML document, or each item of a `*List`.
func documents(path string) ([]json.RawMessage, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []json.RawMessage
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not valid YAML or JSON: %w", err)
		}
		raw, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("not valid YAML or JSON: %w", err)
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var list struct {
			Kind  string          `json:"kind"`
			Items json.RawMessage `json:"items"`
		}
		if raw[0] == '{' && json.Unmarshal(raw, &list) == nil && strings.HasSuffix(list.Kind, "List") &&
			bytes.HasPrefix(bytes.TrimSpace(list.Items), []byte("[")) {
			var items []json.RawMessage
			if err := json.Unmarshal(list.Items, &items); err != nil {
				return nil, err
			}
			for _, item := range items {
				if trimmed := bytes.TrimSpace(item); len(trimmed) > 0 && string(trimmed) != "null" {
					out = append(out, item)
				}
			}
			continue
		}
		out = append(out, raw)
	}
	return out, nil
}

type header struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

func loadInputs(paths []string) (*inputs, []string) {
	in := newInputs()
	files, problems := inputFiles(paths)
	for _, path := range files {
		docs, err := documents(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: - -: %v", path, err))
			continue
		}
		problems = append(problems, in.add(path, docs)...)
	}
	return in, problems
}

func newInputs() *inputs {
	return &inputs{clusterFiles: map[string]string{}, bindingFiles: map[string]string{}}
}

// add decodes the documents of one source (a file, or a case of --cases) into Karmada's types, in order.
func (in *inputs) add(path string, docs []json.RawMessage) []string {
	var problems []string
	for _, raw := range docs {
		var head header
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &head) != nil {
			problems = append(problems, fmt.Sprintf("%s: - -: <document>: expected an object", path))
			continue
		}
		kind, name := orDash(head.Kind), orDash(head.Metadata.Name)
		fail := func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf("%s: %s %s: %s", path, kind, name, fmt.Sprintf(format, args...)))
		}
		var err error
		switch head.Kind {
		case "Cluster":
			cluster := &clusterv1alpha1.Cluster{}
			if err := json.Unmarshal(raw, cluster); err != nil {
				fail("%v", err)
				continue
			}
			if cluster.Name == "" {
				fail("metadata.name: is required")
				continue
			}
			if first, seen := in.clusterFiles[cluster.Name]; seen {
				fail("metadata.name: %q is already a Cluster in %s", cluster.Name, first)
				continue
			}
			in.clusterFiles[cluster.Name] = path
			in.clusters = append(in.clusters, cluster)
		case "ResourceBinding", "ClusterResourceBinding":
			var b binding
			if head.Kind == "ResourceBinding" {
				b.rb = &workv1alpha2.ResourceBinding{}
				err = json.Unmarshal(raw, b.rb)
			} else {
				b.crb = &workv1alpha2.ClusterResourceBinding{}
				err = json.Unmarshal(raw, b.crb)
			}
			switch {
			case err != nil:
				fail("%v", err)
				continue
			case head.Metadata.Name == "":
				fail("metadata.name: is required")
				continue
			case b.rb != nil && b.rb.Namespace == "":
				fail("metadata.namespace: is required for a ResourceBinding")
				continue
			case b.crb != nil && b.crb.Namespace != "":
				fail("metadata.namespace: must be empty for a ClusterResourceBinding, got %q", b.crb.Namespace)
				continue
			}
			// One object per name in the fake API server, as in a real one: a second binding of the
			// same name could not be created next to the first.
			if first, seen := in.bindingFiles[b.kind()+" "+b.key()]; seen {
				fail("metadata.name: %s %s is already in %s (the oracle schedules each binding once)",
					b.kind(), b.key(), first)
				continue
			}
			in.bindingFiles[b.kind()+" "+b.key()] = path
			in.bindings = append(in.bindings, b)
		default:
			in.skipped = append(in.skipped, fmt.Sprintf("%s: %s %s", path, kind, name))
		}
	}
	return problems
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
