package manifest

import "unicode/utf8"

func utf8Valid(b []byte) bool { return utf8.Valid(b) }

// invalidUTF8At returns the 1-based line and column of the first invalid byte.
func invalidUTF8At(b []byte) (line, col int) {
	line, col = 1, 1
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		b = b[size:]
	}
	return line, col
}

// lineCol returns the 1-based line and column (in runes) of byte offset off.
func lineCol(b []byte, off int) (line, col int) {
	line, col = 1, 1
	for _, r := range string(b[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
