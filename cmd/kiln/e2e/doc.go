// Package e2e holds end-to-end tests that run the kiln binary with the real
// tools users run it from: kustomize (exec KRM function), pre-commit, the
// Argo CD config management plugin contract, the GitHub Action's script, the
// GitLab CI snippet, and the HTML report in headless Chromium.
//
// The tests build kiln once into a temporary directory. A missing tool
// (kustomize, pre-commit, git, chromium) skips a test locally and fails it in CI
// (CI=true), where .ci/run installs them.
package e2e
