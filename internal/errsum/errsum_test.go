package errsum

import (
	"context"
	"errors"
	"testing"
)

func TestFirst(t *testing.T) {
	a, b := errors.New("chain 0: boom"), errors.New("chain 2: boom")
	tests := []struct {
		name string
		errs []error
		want string // "" means nil
	}{
		{"none", nil, ""},
		{"all nil", []error{nil, nil}, ""},
		{"one", []error{nil, a, nil}, "chain 0: boom"},
		{"two", []error{a, nil, b}, "chain 0: boom (and 1 more chains failed)"},
		{"four", []error{a, b, b, b}, "chain 0: boom (and 3 more chains failed)"},
	}
	for _, tc := range tests {
		err := First(tc.errs, "chains")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want nil", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := First([]error{context.Canceled, context.Canceled}, "chains"); !errors.Is(err, context.Canceled) {
		t.Errorf("the first error is not wrapped: %v", err)
	}
}
