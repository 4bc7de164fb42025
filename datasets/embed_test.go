package datasets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// sourcesSHA256 reads the SHA-256 SOURCES.md gives each file of a
// collection, keyed by its path under the collection (<dir>/<file>): the
// provenance record, typed in when the files were taken, not the registry.
func sourcesSHA256(t *testing.T, collection string) map[string]string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(collection, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	hash := regexp.MustCompile("`([0-9a-f]{64})`")
	for _, line := range strings.Split(string(text), "\n") {
		h := hash.FindStringSubmatch(line)
		if h == nil || !strings.HasPrefix(line, "|") {
			continue
		}
		out[line] = h[1]
	}
	return out
}

// hashFor finds the SOURCES.md row that names file (and, where files share
// a name, dir) and returns its SHA-256.
func hashFor(rows map[string]string, dir, file string) string {
	for row, h := range rows {
		if strings.Contains(row, "`"+dir+"/"+file+"`") || (strings.Contains(row, "| "+dir+" |") && strings.Contains(row, "`"+file+"`")) {
			return h
		}
	}
	return ""
}

// The raw files built into the binary are the repository's, byte for byte,
// and match the SHA-256 their SOURCES.md records: 12 UCI files and 16
// OpenML ones, so both suites run with nothing beside the binary.
func TestBuiltInFilesMatchSources(t *testing.T) {
	type file struct{ collection, dir, name string }
	var files []file
	for _, in := range List() {
		files = append(files, file{"uci", in.Key, in.File})
	}
	for _, in := range OpenMLList() {
		files = append(files, file{"openml", in.Name, in.File})
	}
	if len(files) != 28 {
		t.Fatalf("%d raw files, want 12 UCI + 16 OpenML", len(files))
	}
	rows := map[string]map[string]string{"uci": sourcesSHA256(t, "uci"), "openml": sourcesSHA256(t, "openml")}
	for _, f := range files {
		t.Run(f.collection+"/"+f.dir, func(t *testing.T) {
			got, err := readRaw(BuiltIn, f.collection, f.dir, f.name)
			if err != nil {
				t.Fatalf("not built in: %v", err)
			}
			disk, err := os.ReadFile(filepath.Join(f.collection, f.dir, f.name))
			if err != nil || string(disk) != string(got) {
				t.Errorf("the repository's %s differs from the built-in copy (%v)", path.Join(f.collection, f.dir, f.name), err)
			}
			sum := sha256.Sum256(got)
			want := hashFor(rows[f.collection], f.dir, f.name)
			if want == "" || hex.EncodeToString(sum[:]) != want {
				t.Errorf("sha256 %x, SOURCES.md says %q", sum, want)
			}
		})
	}
}

// Unset, every UCI task and every OpenML dataset loads from the built-in
// copy, exactly as from the repository's directory; a directory that
// lacks a file is refused naming it and the way back to the built-in copy.
func TestBuiltInLoads(t *testing.T) {
	for _, in := range List() {
		got, err := Load(BuiltIn, in.Key)
		if err != nil {
			t.Fatalf("%s: %v", in.Key, err)
		}
		want, err := Load(uciTestdata, in.Key)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: built-in task differs from the directory's (%v)", in.Key, err)
		}
	}
	var names []string
	for _, in := range OpenMLList() {
		names = append(names, in.Name)
	}
	if err := CheckOpenMLDir(BuiltIn, names); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"haberman", "pc4", "credit-g"} {
		got, err := LoadOpenML(BuiltIn, name, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := LoadOpenML(openmlTestdata, name, 1)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: built-in split differs from the directory's (%v)", name, err)
		}
	}
	empty := t.TempDir()
	err := CheckOpenMLDir(empty, []string{"haberman"})
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), EnvOpenMLDir) || !strings.Contains(err.Error(), "built into afin") {
		t.Errorf("empty directory: %v", err)
	}
}
