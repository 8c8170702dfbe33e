package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/kilnhq/kiln/rules"
)

// writeGitHub prints one workflow command per unsuppressed finding, so that
// GitHub Actions annotates the file and line:
//
//	::error file=deploy/web.yaml,line=14,col=9,title=psa/runAsNonRoot::message
//
// then the summary as a plain log line.
func writeGitHub(w io.Writer, res *rules.Result, in Inputs) error {
	bw := bufio.NewWriter(w)
	for _, e := range in.errors() {
		bw.WriteString(githubCommand(rules.Finding{Rule: "kiln/input", Severity: rules.Error, Message: e.Msg, Pos: e.Pos}) + "\n")
	}
	err := res.Each(func(f rules.Finding) error {
		if f.Suppressed == nil && !f.Baselined { // a baselined finding is not this change's
			_, err := bw.WriteString(githubCommand(f) + "\n")
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if note := FixedNote(in.BaselineFixed); note != "" {
		bw.WriteString("kiln: " + note + "\n")
	}
	bw.WriteString("kiln: " + summaryLine(res.Summary, in) + "\n")
	return bw.Flush()
}

// githubCommand formats one finding as a workflow command.
func githubCommand(f rules.Finding) string {
	cmd := "notice"
	switch f.Severity {
	case rules.Error:
		cmd = "error"
	case rules.Warning:
		cmd = "warning"
	}
	var props []string
	if f.Pos.File != "" {
		props = append(props, "file="+escapeProperty(f.Pos.File))
		if f.Pos.Line > 0 {
			props = append(props, "line="+strconv.Itoa(f.Pos.Line))
			if f.Pos.Column > 0 {
				props = append(props, "col="+strconv.Itoa(f.Pos.Column))
			}
		}
	}
	props = append(props, "title="+escapeProperty(f.Rule))
	return "::" + cmd + " " + strings.Join(props, ",") + "::" + escapeData(f.Message)
}

// escapeData escapes a workflow command's message as the runner expects
// (actions/toolkit's escapeData): %, CR and LF.
func escapeData(s string) string {
	return dataEscaper.Replace(s)
}

// escapeProperty escapes a workflow command's property value
// (actions/toolkit's escapeProperty): as escapeData, plus ':' and ','.
func escapeProperty(s string) string {
	return propertyEscaper.Replace(s)
}

// strings.Replacer scans once, left to right, so "%" is never escaped twice.
var (
	dataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	propertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)
