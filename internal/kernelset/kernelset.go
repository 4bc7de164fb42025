// Package kernelset holds a package's interchangeable kernel
// implementations: those this CPU and build can run, fastest first, and
// the one in use, which starts as the fastest and which tests and
// benchmarks switch to compare kernels (Use). internal/gemm and
// internal/f64vec choose their kernels through it.
package kernelset

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Set is the implementations of type I of one package.
type Set[I any] struct {
	pkg    string
	known  []string // every implementation's name, on any machine
	names  []string
	impls  []*I
	active atomic.Int32 // index into impls; atomic so Use never races with a running kernel
}

// New is the set of impls (fastest first, at least one), named by name,
// of package pkg, whose implementations on any machine are known.
func New[I any](pkg string, known []string, impls []*I, name func(*I) string) *Set[I] {
	s := &Set[I]{pkg: pkg, known: known, impls: impls}
	for _, im := range impls {
		s.names = append(s.names, name(im))
	}
	return s
}

// Get is the implementation in use.
func (s *Set[I]) Get() *I { return s.impls[s.active.Load()] }

// Name names the implementation in use.
func (s *Set[I]) Name() string { return s.names[s.active.Load()] }

// Names lists, fastest first, the implementations this CPU can run: the
// names Use accepts.
func (s *Set[I]) Names() []string { return append([]string(nil), s.names...) }

// Use forces the named implementation for every later call. It refuses
// one this CPU or build cannot run, saying why when detail (such as the
// CPU's features) is not empty.
func (s *Set[I]) Use(name, detail string) error {
	for i, n := range s.names {
		if n == name {
			s.active.Store(int32(i))
			return nil
		}
	}
	for _, n := range s.known {
		if n == name {
			if detail != "" {
				detail = " (" + detail + ")"
			}
			return fmt.Errorf("%s: kernel %q is not supported here%s; available: %s", s.pkg, name, detail, strings.Join(s.names, ", "))
		}
	}
	return fmt.Errorf("%s: unknown kernel %q (known: %s)", s.pkg, name, strings.Join(s.known, ", "))
}
