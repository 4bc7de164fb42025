package datasets

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseARFF(t *testing.T) {
	src := "% a comment\r\n" +
		"@RELATION 'my data'\n" +
		"\n" +
		"@attribute 'first name' {a, 'b c', \"d,e\"}\n" +
		"@attribute x NUMERIC\n" +
		"@Attribute y\tinteger\n" +
		"@attribute 'class' { no, yes}\n" +
		"@data\n" +
		"% data comment\n" +
		"'b c', 1.5, -2, yes\n" +
		"\"d,e\",?,3e2,no\n" +
		"a,0,0,'no'"
	a, err := ParseARFF([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a.Relation != "my data" || len(a.Attributes) != 4 {
		t.Fatalf("relation %q, %d attributes", a.Relation, len(a.Attributes))
	}
	if at := a.Attributes[0]; at.Name != "first name" || strings.Join(at.Values, "|") != "a|b c|d,e" {
		t.Errorf("nominal attribute %+v", at)
	}
	if a.Attributes[1].Nominal() || a.Attributes[2].Nominal() {
		t.Error("numeric attribute read as nominal")
	}
	want := [][]float64{{1, 1.5, -2, 1}, {2, math.NaN(), 300, 0}, {0, 0, 0, 0}}
	for i, r := range want {
		for j, v := range r {
			got := a.Rows[i][j]
			if got != v && !(math.IsNaN(v) && math.IsNaN(got)) {
				t.Errorf("row %d col %d = %g, want %g", i, j, got, v)
			}
		}
	}
	if a.Lines[0] != 10 || a.Lines[2] != 12 {
		t.Errorf("row lines %v", a.Lines)
	}
}

func TestParseARFFErrors(t *testing.T) {
	head := "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n"
	for _, c := range []struct{ name, src, want string }{
		{"string attribute", "@relation r\n@attribute s string\n@data\nx\n", "2: @attribute: s: unsupported type \"string\""},
		{"date attribute", "@relation r\n@attribute s date 'yyyy'\n@data\nx\n", "2: @attribute: s: unsupported type"},
		{"too few fields", head + "1,a\n2\n", "6: 1 fields, want 2"},
		{"too many fields", head + "1,a,3\n", "5: 3 fields, want 2"},
		{"undeclared value", head + "1,z\n", "5: attribute c: value \"z\" is not one of its declared values"},
		{"not a number", head + "1x,a\n", "5: attribute x: \"1x\" is not a finite number"},
		{"infinite", head + "Inf,a\n", "5: attribute x: \"Inf\" is not a finite number"},
		{"sparse", head + "{0 1, 1 a}\n", "5: sparse ARFF rows are not supported"},
		{"unterminated quote", head + "1,'a\n", "5: unterminated quote"},
		{"text after quote", head + "1,'a'b\n", "5: text after the quoted value"},
		{"no data section", "@relation r\n@attribute x numeric\n", "no @data section"},
		{"no rows", head, "no data rows"},
		{"data before header", "1,2\n", "1: expected @relation"},
		{"unknown declaration", "@relation r\n@foo x\n", "2: unknown declaration \"@foo\""},
		{"duplicate attribute", "@relation r\n@attribute x numeric\n@attribute x real\n@data\n1,2\n", "3: @attribute: \"x\" declared twice"},
		{"unclosed nominal", "@relation r\n@attribute c {a,b\n@data\na\n", "2: @attribute: c: nominal values without a closing }"},
		{"data before attributes", "@relation r\n@data\n1\n", "2: @data before any @attribute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseARFF([]byte(c.src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestLoadOpenMLNamesFileAndLine: a bad line's error reads path:line.
func TestLoadOpenMLNamesFileAndLine(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "haberman", "haberman.arff")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("@relation r\n@attribute x numeric\n@data\n1\noops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOpenML(dir, "haberman", 0)
	if err == nil || !strings.Contains(err.Error(), p+":5: ") || !errors.Is(err, ErrBadData) {
		t.Fatalf("error %v, want a bad-data error containing %s:5:", err, p)
	}
}

// TestLoadOpenMLBadFile: a damaged copy of a dataset fails naming the
// file and line, or the size it no longer has.
func TestLoadOpenMLBadFile(t *testing.T) {
	src := openmlDir(t)
	data, err := os.ReadFile(filepath.Join(src, "haberman", "haberman.arff"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"bad value", "\n30,64,1,1", "\n30,64,x,1", "haberman.arff:"},
		{"dropped row", "\n30,64,1,1", "\n", "complete rows, want 306"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(string(data), c.old) {
				t.Fatalf("testdata's haberman.arff lacks %q", c.old)
			}
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "haberman"), 0o755)
			bad := strings.Replace(string(data), c.old, c.new, 1)
			os.WriteFile(filepath.Join(dir, "haberman", "haberman.arff"), []byte(bad), 0o644)
			_, err := LoadOpenML(dir, "haberman", 0)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}
