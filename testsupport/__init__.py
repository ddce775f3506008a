"""What the tests, scripts, benchmarks and `dev.py` run on; it holds no tests.

- `realcluster`: kube-apiserver and etcd built from their Go modules, Karmada's scheduler beside ours, the audit log
  (`python -m testsupport.realcluster up|down`: `dev.py cluster`);
- `karmada`: a whole Karmada control plane with kwok members and its scenarios (`python -m testsupport.karmada`:
  `dev.py karmada`);
- `operator.harness`: the operator on devcluster, in a thread; `faults.harness`: the fault matrix's judges;
- `oracle`: Karmada's own scheduling code (karmada-oracle), the differential cases and their strategies;
- `chart.helm`: helm built from its module; `builders`, `fencing`, `pass_plugins`, `processes`: small helpers.

`tests/` imports this package; this package never imports `tests/`. Entry points run from the repository root
(`python -m ...`), which pytest also puts on sys.path (pyproject's `pythonpath`).
"""
