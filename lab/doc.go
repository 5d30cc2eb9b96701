// Package lab is what the baton binary ships for trying baton without real providers: the
// Temporal dev server launcher (bin/temporal-dev), the scriptable fake provider
// (lab/fakeprovider), the scenario runner behind `baton simulate` (lab/scenario), and the helper
// that points a config at the fake provider. Tests use it through testsuite; it links no test
// code of ours.
package lab
