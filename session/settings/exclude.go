package settings

import (
	"fmt"
	"github.com/kilnhq/kiln/internal/pathkey"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"strings"
)

// Excluded reports whether a file path matches an exclude pattern. Patterns
// are globs over slash-separated paths relative to the config file's
// directory (the current directory without a config file): `*` stays
// within a path segment, `**` crosses segments, and a pattern naming a
// directory excludes what is under it.
func (s *Settings) Excluded(path string) bool {
	if len(s.excludeRE) == 0 {
		return false
	}
	p := filepath.ToSlash(filepath.Clean(path))
	if s.File != "" {
		if abs, err := filepath.Abs(path); err == nil {
			if rel, err := filepath.Rel(filepath.Dir(pathkey.Abs(s.File)), abs); err == nil && !strings.HasPrefix(rel, "..") {
				p = filepath.ToSlash(rel)
			}
		}
	}
	for _, re := range s.excludeRE {
		if re.MatchString(p) {
			return true
		}
	}
	return false
}

// checkGlob reports whether an exclude glob is one kiln reads.
func checkGlob(g string) error {
	if _, err := pathpkg.Match(g, ""); err != nil {
		return err
	}
	if strings.ContainsAny(g, "[]{}") {
		return fmt.Errorf("character classes and alternatives are not supported")
	}
	return nil
}

// globRE compiles an exclude glob.
func globRE(glob string) *regexp.Regexp {
	g := strings.TrimPrefix(filepath.ToSlash(glob), "./")
	g = strings.TrimSuffix(g, "/")
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			if i+1 < len(g) && g[i+1] == '*' {
				i++
				if i+1 < len(g) && g[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(?:/.*)?$")
	return regexp.MustCompile(b.String())
}
