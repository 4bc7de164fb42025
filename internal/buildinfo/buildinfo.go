// Package buildinfo says which commit a binary was built from: the go
// command's VCS stamp when it made one, else the commit the project's own
// build commands pass with -ldflags -X (Taskfile.yml), so a binary built
// with -buildvcs=false (GOFLAGS on some machines) still knows its commit.
package buildinfo

import "runtime/debug"

// commit and modified are set at link time, never at run time:
//
//	go build -ldflags "-X github.com/afin-bench/afin/internal/buildinfo.commit=$(git rev-parse HEAD) \
//	  -X github.com/afin-bench/afin/internal/buildinfo.modified=true" ./cmd/afin
//
// modified is "true" for a build from a working tree with uncommitted
// changes to tracked files, anything else for a clean one.
var (
	commit   string
	modified string
)

// Commit is the commit this binary was built from and whether the working
// tree had uncommitted changes then; ok is false when neither the VCS
// stamp nor the link-time commit is there (a plain `go build` with
// -buildvcs=false, or `go run` in some setups).
func Commit() (rev string, dirty, ok bool) {
	if bi, has := debug.ReadBuildInfo(); has {
		rev, dirty = stamped(bi.Settings)
	}
	return choose(rev, dirty, commit, modified)
}

// stamped reads the go command's VCS stamp from the build settings.
func stamped(settings []debug.BuildSetting) (rev string, dirty bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return rev, dirty
}

// choose prefers the VCS stamp (the go command read it from the tree it
// compiled) over the link-time values (a build command read them).
func choose(stampRev string, stampDirty bool, linkRev, linkModified string) (string, bool, bool) {
	switch {
	case stampRev != "":
		return stampRev, stampDirty, true
	case linkRev != "":
		return linkRev, linkModified == "true", true
	}
	return "", false, false
}
