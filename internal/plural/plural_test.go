package plural

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		n          int
		word, want string
	}{
		{0, "error", "0 errors"},
		{1, "error", "1 error"},
		{2, "input error", "2 input errors"},
		{-1, "file", "-1 files"},
	} {
		if got := Count(tt.n, tt.word); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.word, got, tt.want)
		}
	}
	if Word(1, "passes", "pass") != "passes" || Word(3, "passes", "pass") != "pass" {
		t.Error("Word picks the wrong form")
	}
}
