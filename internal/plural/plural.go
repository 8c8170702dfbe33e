// Package plural writes counts in kiln's messages: "1 file", "3 files".
package plural

import "strconv"

// Count returns n and word, with an s unless n is 1: "1 error", "2 errors".
func Count(n int, word string) string {
	return strconv.Itoa(n) + " " + Word(n, word, word+"s")
}

// Word returns one when n is 1, else many: Word(n, "passes", "pass").
func Word(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
