package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/afin-bench/afin/methods"
)

// execFlags are the flags of an external method (exec:NAME). Its budget
// kind lives in the methods file, which is itself a flag, so all three
// budget flags are registered and the one of the method's kind is used.
type execFlags struct {
	file    *string
	budgets map[string]*int
}

// isExec reports whether name is an external method.
func isExec(name string) bool { return strings.HasPrefix(name, methods.ExecPrefix) }

func (sp *inferSpec) bindExec(fs *flag.FlagSet) {
	sp.exec = &execFlags{budgets: map[string]*int{}}
	sp.exec.file = fs.String("methods-file", "", "methods file configuring exec:NAME (default $"+methods.MethodsFileEnv+")")
	sp.exec.budgets[methods.KindDraws] = fs.Int("draws", 2000, "budget, for an external method counting draws")
	sp.exec.budgets[methods.KindSteps] = fs.Int("steps", 10000, "budget, for an external method counting steps")
	sp.exec.budgets[methods.KindProposals] = fs.Int("proposals", 10000, "budget, for an external method counting proposals")
}

// resolve picks the budget flag of m's kind, refusing another kind's.
func (e *execFlags) resolve(fs *flag.FlagSet, m methods.Method) (*int, error) {
	var wrong []string
	fs.Visit(func(f *flag.Flag) {
		if _, ok := e.budgets[f.Name]; ok && f.Name != m.Kind() {
			wrong = append(wrong, "--"+f.Name)
		}
	})
	if len(wrong) > 0 {
		return nil, badInput(fmt.Errorf("%s counts %s (methods file); %s does not apply, use --%s",
			m.Name(), m.Kind(), strings.Join(wrong, ", "), m.Kind()))
	}
	return e.budgets[m.Kind()], nil
}
