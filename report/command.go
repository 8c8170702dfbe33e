package report

import "github.com/kilnhq/kiln/rules"

// GitHubCommand formats a finding as a GitHub Actions workflow command
// (::error file=…,line=…::message), escaped as the runner expects, for
// commands other than lint that annotate files (kiln test).
func GitHubCommand(f rules.Finding) string { return githubCommand(f) }
