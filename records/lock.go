package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// A results directory has one writer, or the shards of one plan. Three
// file locks say so (flock on Unix, LockFileEx on Windows; the system
// drops such a lock when its process dies, so a stale file left by a
// killed run never blocks the next one):
//
//   - RegisterLockFile, taken exclusively for the moment a writer
//     registers, so registrations never interleave;
//   - PlanLockFile, held for the whole run: exclusively by an unsharded
//     writer, shared by the shards of a plan, and holding the plan (suite,
//     profile, shard count) of whoever holds it, so a writer of another
//     plan is refused;
//   - LockFile(name), held exclusively by the writer of results file name,
//     so two writers of one shard are refused.
//
// The shards of a Slurm array or a Kubernetes Indexed Job (--shard I/N,
// each into its own file of one directory) therefore run side by side,
// while `bench` and `bench --shard 0/2`, or --shard 0/2 and --shard 0/3,
// on one directory cannot both write (they would run the same units twice).
const (
	RegisterLockFile = ".afin-register.lock"
	PlanLockFile     = ".afin-writers.lock"
)

// LockFile is the lock a writer of the results file name holds beside it.
func LockFile(name string) string { return "." + name + ".lock" }

// ErrLocked: another process is writing the directory in a way this
// writer cannot share (the same results file, or another plan).
var ErrLocked = errors.New("results directory is in use")

// errHeld: a lock taken without waiting is held by another open file.
var errHeld = errors.New("lock is held")

// Writer is who writes a results directory: a suite under a profile,
// whole (Shards ≤ 1) or as shard Shard of Shards.
type Writer struct {
	Suite   string `json:"suite"`
	Profile string `json:"profile"`
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	// Holder is who registered the plan ("pid N on HOST"), for the
	// message of a refused writer.
	Holder string `json:"holder,omitempty"`
}

func (w Writer) sharded() bool { return w.Shards > 1 }

// samePlan reports whether w and o may write one directory at once: both
// shards of one suite, profile and shard count.
func (w Writer) samePlan(o Writer) bool {
	return w.sharded() && o.sharded() && w.Suite == o.Suite && w.Profile == o.Profile && w.Shards == o.Shards
}

// String names the writer's plan for a message.
func (w Writer) String() string {
	if w.Suite == "" {
		return "another afin bench"
	}
	what := "suite " + w.Suite
	if w.Profile != "" {
		what += ", profile " + w.Profile
	}
	if !w.sharded() {
		return "an unsharded run of " + what
	}
	return fmt.Sprintf("a %d-way sharded run of %s", w.Shards, what)
}

// dirLock is a writer's hold on a results directory.
type dirLock struct{ plan, file *os.File }

func (l *dirLock) Close() {
	l.file.Close() // closing a file drops its lock
	l.plan.Close()
}

// lockDir registers w as a writer of results file name in dir, without
// waiting for another writer: it fails at once (ErrLocked) when the
// directory is written under another plan or name is being written.
// created lists the lock files this call created, for a caller that
// refuses the open after all.
func lockDir(dir, name string, w Writer) (l *dirLock, created []string, err error) {
	reg, made, err := openLock(dir, RegisterLockFile)
	if err != nil {
		return nil, nil, err
	}
	created = append(created, made...)
	defer reg.Close()
	if err := flock(reg, true, true); err != nil {
		return nil, created, fmt.Errorf("results lock %s: %w", reg.Name(), err)
	}
	plan, made, err := openLock(dir, PlanLockFile)
	if err != nil {
		return nil, created, err
	}
	created = append(created, made...)
	if err := joinPlan(plan, dir, w); err != nil {
		plan.Close()
		return nil, created, err
	}
	file, made, err := openLock(dir, LockFile(name))
	if err != nil {
		plan.Close()
		return nil, created, err
	}
	created = append(created, made...)
	if err := flock(file, true, false); err != nil {
		file.Close()
		plan.Close()
		return nil, created, fileLockError(dir, name, err)
	}
	// Say who holds it, for the message of the next writer.
	file.Truncate(0)
	fmt.Fprint(file, holder())
	return &dirLock{plan: plan, file: file}, created, nil
}

// joinPlan takes the plan lock for w, the registration lock held: the
// first writer records its plan, a later one joins it when it is a shard
// of the same plan and is refused otherwise.
func joinPlan(plan *os.File, dir string, w Writer) error {
	err := flock(plan, true, false)
	switch {
	case err == nil:
		// No one writes the directory: w's plan is the plan.
		w.Holder = holder()
		data, _ := json.Marshal(w)
		plan.Truncate(0)
		if _, err := plan.WriteAt(data, 0); err != nil {
			return fmt.Errorf("results lock %s: %w", plan.Name(), err)
		}
		if w.sharded() {
			// Let the other shards of the plan in.
			if err := share(plan); err != nil {
				return fmt.Errorf("results lock %s: %w", plan.Name(), err)
			}
		}
		return nil
	case !errors.Is(err, errHeld):
		return fmt.Errorf("results lock %s: %w", plan.Name(), err)
	}
	cur, err := readPlan(plan)
	if err != nil {
		return err
	}
	if !w.samePlan(cur) {
		return planError(dir, w, cur)
	}
	if err := flock(plan, false, false); err != nil {
		return planError(dir, w, cur)
	}
	return nil
}

func readPlan(f *os.File) (Writer, error) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<20))
	if err != nil {
		return Writer{}, fmt.Errorf("results lock %s: %w", f.Name(), err)
	}
	var w Writer
	if json.Unmarshal(data, &w) != nil {
		// Held but not (yet) described: refuse, naming no plan.
		return Writer{Holder: "pid unknown"}, nil
	}
	return w, nil
}

func planError(dir string, w, cur Writer) error {
	why := "a results directory has one writer, or the shards of one plan (same suite, profile and shard count)"
	return fmt.Errorf("%w: %s is being written by %s (%s), which %s cannot join: %s; wait for it or use another --results directory",
		ErrLocked, dir, cur, cur.Holder, w, why)
}

// openLock opens (creating) the lock file name of dir; made names it when
// this call created it.
func openLock(dir, name string) (f *os.File, made []string, err error) {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		made = []string{path}
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("results lock: %w", err)
	}
	return f, made, nil
}

func holder() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s", os.Getpid(), host)
}

// CheckUnlocked is CheckWriter for the directory's only writer.
func CheckUnlocked(dir, name string) error { return CheckWriter(dir, name, Writer{}) }

// CheckWriter reports ErrLocked when w could not write results file name
// in dir now (another writer of that file, or of another plan), without
// taking a lock and without creating anything: a run calls it first, so
// it is refused at once, before the slow checks that precede OpenStore
// (which registers it for good).
func CheckWriter(dir, name string, w Writer) error {
	reg, err := os.OpenFile(filepath.Join(dir, RegisterLockFile), os.O_RDWR, 0)
	if err == nil {
		defer reg.Close()
		if err := flock(reg, true, true); err != nil {
			return fmt.Errorf("results lock %s: %w", reg.Name(), err)
		}
		if plan, err := os.OpenFile(filepath.Join(dir, PlanLockFile), os.O_RDWR, 0); err == nil {
			defer plan.Close()
			if err := flock(plan, true, false); err == nil {
				funlock(plan)
			} else if cur, err := readPlan(plan); err != nil {
				return err
			} else if !w.samePlan(cur) {
				return planError(dir, w, cur)
			}
		}
	}
	f, err := os.Open(filepath.Join(dir, LockFile(name)))
	if err != nil {
		return nil // no lock file (or none readable): OpenStore decides
	}
	defer f.Close()
	if err := flock(f, false, false); err != nil {
		return fileLockError(dir, name, err)
	}
	return funlock(f)
}

// fileLockError is the error of a failed lock of name's lock file.
func fileLockError(dir, name string, err error) error {
	path := filepath.Join(dir, LockFile(name))
	if errors.Is(err, errHeld) {
		holder, _ := os.ReadFile(path)
		return fmt.Errorf("%w: %s in %s is being written by another afin bench (%s); wait for it or use another --results directory", ErrLocked, name, dir, holderText(holder))
	}
	return fmt.Errorf("results lock %s: %w", path, err)
}

func holderText(b []byte) string {
	if len(b) == 0 {
		return "pid unknown"
	}
	return string(b)
}
