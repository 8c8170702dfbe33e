package heapstart

import "testing"

// TestUserTuned: GOGC or GOMEMLIMIT, set to anything, leaves the heap to
// the user.
func TestUserTuned(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"GOGC": "100"}, true},
		{map[string]string{"GOGC": "off"}, true},
		{map[string]string{"GOMEMLIMIT": "1GiB"}, true},
		{map[string]string{"GODEBUG": "gctrace=1"}, false},
	} {
		if got := UserTuned(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: UserTuned = %v, want %v", c.env, got, c.want)
		}
	}
}
