package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		old     string // "" when there is no file before
		write   func(io.Writer) error
		want    string // content after
		wantErr error
	}{
		{name: "new file", write: text("fresh\n"), want: "fresh\n"},
		{name: "replaces", old: "old\n", write: text("new\n"), want: "new\n"},
		{name: "failed write keeps the old file", old: "old\n", write: func(w io.Writer) error {
			io.WriteString(w, "half")
			return boom
		}, want: "old\n", wantErr: boom},
		{name: "failed write of a new file leaves none", write: func(io.Writer) error { return boom }, wantErr: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tc.old != "" {
				if err := os.WriteFile(path, []byte(tc.old), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, tc.write)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Write: %v, want %v", err, tc.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tc.want == "" && !errors.Is(rerr, fs.ErrNotExist):
				t.Fatalf("file exists after a failed first write (%q, %v)", got, rerr)
			case tc.want != "" && string(got) != tc.want:
				t.Fatalf("content %q (%v), want %q", got, rerr, tc.want)
			}
			// No temporary file is left beside it.
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if e.Name() != "f.json" {
					t.Errorf("left behind: %s", e.Name())
				}
			}
			if tc.wantErr == nil && runtime.GOOS != "windows" {
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != Perm {
					t.Errorf("mode %v, want %v", fi.Mode().Perm(), fs.FileMode(Perm))
				}
			}
		})
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "f")
	if err := WriteFile(path, []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteFile into a missing directory: %v, want not-exist", err)
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := []byte("a\nb\n")
	if err := WriteFile(path, data); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(data) {
		t.Fatalf("read %q, %v; want %q", got, err, data)
	}
}

func text(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestWriteDir(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		exists  bool
		fill    func(tmp string) error
		wantErr error
	}{
		{name: "new directory", fill: func(tmp string) error { return os.WriteFile(filepath.Join(tmp, "a"), []byte("x"), 0o644) }},
		{name: "existing directory is refused", exists: true, fill: func(string) error { return nil }, wantErr: fs.ErrExist},
		{name: "failed fill leaves nothing", fill: func(tmp string) error {
			os.WriteFile(filepath.Join(tmp, "a"), []byte("half"), 0o644)
			return boom
		}, wantErr: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "ckpt")
			if tc.exists {
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteDir(out, tc.fill)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("WriteDir: %v, want %v", err, tc.wantErr)
			}
			ents, rerr := os.ReadDir(parent)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			wantNames := "[]"
			if tc.exists || tc.wantErr == nil {
				wantNames = "[ckpt]"
			}
			if got := fmt.Sprint(names); got != wantNames {
				t.Fatalf("directory holds %s, want %s", got, wantNames)
			}
			if tc.wantErr != nil {
				return
			}
			if got, err := os.ReadFile(filepath.Join(out, "a")); err != nil || string(got) != "x" {
				t.Fatalf("file in out: %q, %v", got, err)
			}
			if fi, err := os.Stat(out); err != nil || (runtime.GOOS != "windows" && fi.Mode().Perm() != DirPerm) {
				t.Fatalf("out: %v, %v; want mode %v", fi.Mode(), err, fs.FileMode(DirPerm))
			}
		})
	}
}
