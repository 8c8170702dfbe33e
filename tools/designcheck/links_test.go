package designcheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// TestDocLinks: every relative link of README.md, CONTRIBUTING.md and the
// pages under docs/ names a file of the repository, and a #fragment a
// heading of that page, so that moving a page or renaming a section
// cannot leave a dead link.
func TestDocLinks(t *testing.T) {
	root := "../.."
	pages := []string{"README.md", "CONTRIBUTING.md", "RELEASING.md"}
	filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			pages = append(pages, rel)
		}
		return nil
	})
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		data, _ := os.ReadFile(filepath.Join(root, page))
		for _, m := range mdHeading.FindAllStringSubmatch(stripFences(string(data)), -1) {
			a[githubAnchor(m[1])] = true
		}
		anchors[page] = a
		return a
	}
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(string(data)), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, frag, _ := strings.Cut(link, "#")
			targetPage := page
			if target != "" {
				targetPage = filepath.Clean(filepath.Join(filepath.Dir(page), target))
				if _, err := os.Stat(filepath.Join(root, targetPage)); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, link)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(targetPage, ".md") && !anchorsOf(targetPage)[frag] {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", page, link, targetPage, frag)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Errorf("checked %d links: the pages lost their links, or this test stopped finding them", checked)
	}
}

// inlineCode is a code span.
var inlineCode = regexp.MustCompile("`[^`\n]*`")

// stripCode drops fenced code blocks and code spans: their text is not
// Markdown.
func stripCode(s string) string { return inlineCode.ReplaceAllString(stripFences(s), "``") }

// stripFences drops fenced code blocks.
func stripFences(s string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
