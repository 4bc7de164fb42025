// Command funclen lists every function or method declared outside test
// files whose declaration, from `func` to its closing brace, spans more
// lines than -max, and exits 1 when it finds one. `go tool task lint`
// runs it over the module, so the guide's 80-line limit is checked, not
// remembered.
//
//	go run ./tools/funclen [-max 80] [-skip DIR,...] [DIR]
//
// Test files (_test.go), testdata and hidden directories are not read.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	maxLines := flag.Int("max", 80, "the most lines a function may span")
	skip := flag.String("skip", "", "comma-separated directories (relative to DIR) not read")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	var skipped []string
	if *skip != "" {
		skipped = strings.Split(*skip, ",")
	}
	n, err := run(os.Stdout, root, *maxLines, skipped)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d function(s) over %d lines\n", n, *maxLines)
		os.Exit(1)
	}
}

// long is one function over the limit.
type long struct {
	pos   token.Position
	name  string
	lines int
}

// run prints, one a line, every function under root longer than maxLines
// and returns how many it found.
func run(w io.Writer, root string, maxLines int, skip []string) (int, error) {
	var found []long
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (base == "testdata" || strings.HasPrefix(base, ".") || slices.Contains(skip, filepath.ToSlash(rel))) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", path, err)
		}
		found = append(found, longFuncs(fset, f, maxLines)...)
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, l := range found {
		fmt.Fprintf(w, "%s:%d: %s is %d lines (max %d)\n", l.pos.Filename, l.pos.Line, l.name, l.lines, maxLines)
	}
	return len(found), nil
}

// longFuncs are f's function declarations longer than maxLines.
func longFuncs(fset *token.FileSet, f *ast.File, maxLines int) []long {
	var out []long
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		if n := end.Line - start.Line + 1; n > maxLines {
			out = append(out, long{start, funcName(fd), n})
		}
	}
	return out
}

// funcName is "Name" or "(Recv).Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
