package kernelset

import (
	"strings"
	"testing"
)

type impl struct{ name string }

// TestUse: the set starts on the fastest implementation, Use switches to
// any it holds, and refuses the rest, telling a kernel this machine
// cannot run from one no machine has.
func TestUse(t *testing.T) {
	fast, slow := &impl{"fast"}, &impl{"slow"}
	s := New("pkg", []string{"other", "fast", "slow"}, []*impl{fast, slow}, func(im *impl) string { return im.name })
	if s.Get() != fast || s.Name() != "fast" {
		t.Fatalf("starts on %q, want the fastest", s.Name())
	}
	tests := []struct {
		name, detail string
		want         *impl
		err          string
	}{
		{"slow", "", slow, ""},
		{"fast", "", fast, ""},
		{"other", "cpu: sse2", fast, `pkg: kernel "other" is not supported here (cpu: sse2); available: fast, slow`},
		{"other", "", fast, `pkg: kernel "other" is not supported here; available: fast, slow`},
		{"nope", "", fast, `pkg: unknown kernel "nope" (known: other, fast, slow)`},
	}
	for _, tc := range tests {
		err := s.Use(tc.name, tc.detail)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Use(%q): error %v, want %q", tc.name, err, tc.err)
		}
		if s.Get() != tc.want {
			t.Errorf("after Use(%q): %q in use, want %q", tc.name, s.Name(), tc.want.name)
		}
	}
	names := s.Names()
	names[0] = "changed"
	if got := strings.Join(s.Names(), ","); got != "fast,slow" {
		t.Errorf("Names %q after changing a copy", got)
	}
}
