package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/afin-bench/afin/afin/checkpoint"
	"github.com/afin-bench/afin/methods"
)

// MethodFactory builds the named method; Config.NewMethod overrides the
// built-in methods.New (tests plug fakes in here).
type MethodFactory func(name string, env *methods.Env) (methods.Method, error)

// ErrNotInSuite: --methods names a method the suite does not run.
var ErrNotInSuite = errors.New("method not part of this suite")

// ResolveMethods builds the methods named in want (every non-opt-in method
// of the plans when want is empty). A method that is unavailable here
// (methods.ErrUnavailable) is an error when named explicitly; otherwise it
// is still part of the run, as a method whose every unit fails with the
// reason, so a run that could not do what the suite asks never passes as
// complete. Any other error is an error.
func ResolveMethods(plans []Plan, want []string, env *methods.Env, build MethodFactory) (map[string]methods.Method, []string, error) {
	if build == nil {
		build = methods.New
	}
	used := map[string]bool{}
	optIn := map[string]bool{}
	for _, p := range plans {
		used[p.Method] = true
		if p.OptIn {
			optIn[p.Method] = true
		}
	}
	if err := checkWanted(plans, want); err != nil {
		return nil, nil, err
	}
	explicit := len(want) > 0
	if !explicit {
		for name := range used {
			if !optIn[name] {
				want = append(want, name)
			}
		}
		sort.Strings(want)
	}
	out := map[string]methods.Method{}
	var notes []string
	for _, name := range want {
		m, err := build(name, env)
		switch {
		case err == nil:
			out[name] = m
		case errors.Is(err, methods.ErrUnavailable) && !explicit && !errors.Is(err, checkpoint.ErrInvalid):
			// A checkpoint that is there but cannot be read is refused,
			// not run as failures: it is a wrong --checkpoint or
			// $AFIN_CHECKPOINT (or a damaged copy), fixed by the user.
			notes = append(notes, fmt.Sprintf("%s cannot run here, its units fail: %v", name, err))
			out[name] = unavailable{name: name, err: err}
		default:
			return nil, nil, fmt.Errorf("method %s: %w", name, err)
		}
	}
	return out, notes, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unavailable stands in for a method that cannot run here: each of its
// units fails with the reason and leaves a failed record at every slot
// the method would have filled, so the run never passes as complete and
// a resume does not retry it unless asked (--retry-failed, once the
// method can run).
type unavailable struct {
	name string
	err  error
}

func (u unavailable) Name() string { return u.name }
func (u unavailable) Kind() string { return kindOf(u.name) }

// kindOf is a method's budget kind without building it (draws for a
// method it does not know, as an external one).
func kindOf(method string) string {
	if s, _ := methods.SlotsOf(method, []int{1}); len(s) > 0 {
		return s[0].Kind
	}
	return methods.KindDraws
}
func (u unavailable) Slots(ladder []int) []methods.Slot {
	if s, ok := methods.SlotsOf(u.name, ladder); ok {
		return s
	}
	// Not a built-in: one draws slot per budget, the external default.
	out := make([]methods.Slot, len(ladder))
	for i, b := range ladder {
		out[i] = methods.Slot{Kind: methods.KindDraws, Budget: b}
	}
	return out
}
func (u unavailable) Run(context.Context, *methods.Job, func(methods.Point) error) error {
	return fmt.Errorf("method %s: %w", u.name, u.err)
}

// checkWanted fails with ErrNotInSuite when want names a method no plan
// runs; cheap, so a run can refuse before it touches the results
// directory.
func checkWanted(plans []Plan, want []string) error {
	used := map[string]bool{}
	for _, p := range plans {
		used[p.Method] = true
	}
	for _, name := range want {
		if !used[name] {
			return fmt.Errorf("%w: %q (its methods: %s)", ErrNotInSuite, name, strings.Join(keys(used), ", "))
		}
	}
	return nil
}
