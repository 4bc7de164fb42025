package datasets

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestSplitRecordsQuirks feeds the format quirks of SOURCES.md through the
// splitter: each variant must give the same records.
func TestSplitRecordsQuirks(t *testing.T) {
	want := [][]string{{"1", "2", "3"}, {"4", "5", "6"}}
	cases := []struct {
		name   string
		lay    layout
		header bool
		data   string
	}{
		{"csv LF", commaSeparated, false, "1,2,3\n4,5,6\n"},
		{"csv CRLF no final newline", commaSeparated, false, "1,2,3\r\n4,5,6"},
		{"csv header CRLF", commaSeparated, true, "a,b,c\r\n1,2,3\r\n4,5,6\r\n"},
		{"leading blank line", commaSeparated, false, "\n1,2,3\n4,5,6\n"},
		{"doubled tabs", whitespaceSeparated, false, "1\t\t2\t3\n4\t5\t\t6"},
		{"double spaces, trailing space, trailing blank line", whitespaceSeparated, false, "1  2 3 \n4 5 6\n\n"},
		{"tab header", whitespaceSeparated, true, "A\tB\tC\n1\t2\t3\n4\t5\t6\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, recs, err := splitRecords([]byte(c.data), c.lay, c.header)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(want) {
				t.Fatalf("%d records, want %d", len(recs), len(want))
			}
			for i, r := range recs {
				if strings.Join(r.fields, "|") != strings.Join(want[i], "|") {
					t.Errorf("record %d = %q, want %q", i, r.fields, want[i])
				}
			}
		})
	}
	_, recs, err := splitRecords([]byte("18.0   8   307.0      130.0      3504.      12.0   70  1\t\"chevrolet chevelle malibu\"\n"), autoMPGLayout, false)
	if err != nil || len(recs) != 1 || len(recs[0].fields) != 9 || recs[0].fields[8] != "chevrolet chevelle malibu" {
		t.Errorf("auto-mpg records = %v, %v", recs, err)
	}
}

func TestParseTableErrors(t *testing.T) {
	s, err := lookupSpec("haberman")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, data, want string }{
		{"short record", "30,64,1,1\n30,62,3\n", "line 2: 3 fields, want 4"},
		{"bad number", "30,64,1,1\n30,x,3,1\n", `line 2, column 2 (op_year): not a number: "x"`},
		{"bad label", "30,64,1,3\n", `unknown label "3"`},
		{"empty", "\n\n", "no data records"},
	}
	for _, c := range cases {
		_, err := parseTable(s, []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	// A file with the right format but not the UCI records must not load
	// as a task with a different N.
	tab, err := parseTable(s, []byte("30,64,1,1\n31,65,2,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := build(s, tab); err == nil || !strings.Contains(err.Error(), "want 306") {
		t.Errorf("short file: error %v", err)
	}
}

func TestMissingData(t *testing.T) {
	empty := t.TempDir()
	_, err := Load(empty, "sonar")
	if err == nil {
		t.Fatal("Load on an empty directory succeeded")
	}
	for _, want := range []string{filepath.Join(empty, "sonar", "sonar.all-data"), "afin datasets fetch", EnvDataDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := Load(empty, "iris"); err == nil || !strings.Contains(err.Error(), "unknown UCI task") {
		t.Errorf("unknown key: %v", err)
	}
}

func TestResolveDir(t *testing.T) {
	src := dataDir(t)
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Linux
	t.Setenv("HOME", cache)

	// Unset, the copy built into the binary: nothing beside it needed,
	// and an empty user cache does not matter.
	if dir, err := ResolveDir("", ""); err != nil || dir != BuiltIn {
		t.Errorf("default: ResolveDir = %q, %v", dir, err)
	}
	// A fetch has to write somewhere: the user cache.
	if dir, source, err := FetchDir("", ""); err != nil || source != "the user cache directory" || !strings.HasPrefix(dir, cache) {
		t.Errorf("FetchDir() = %q, %q, %v", dir, source, err)
	}
	if dir, _, err := FetchDir("", src); err != nil || dir != src {
		t.Errorf("FetchDir(env) = %q, %v", dir, err)
	}
	// An empty directory named by the environment is an error naming it
	// and every way out.
	empty := t.TempDir()
	_, err := ResolveDir("", empty)
	for _, want := range []string{empty, "$" + EnvDataDir, "afin datasets fetch", "built into afin"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("empty directory: error %v lacks %q", err, want)
		}
	}

	if dir, err := ResolveDir("", src); err != nil || dir != src {
		t.Errorf("env: ResolveDir = %q, %v", dir, err)
	}
	// The flag wins over the environment.
	other := t.TempDir()
	if _, err := ResolveDir(other, src); err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("flag: error %v", err)
	}
	// A partly filled directory names what is missing.
	if err := os.MkdirAll(filepath.Join(other, "haberman"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "haberman", "haberman.data"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "haberman", "haberman.data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveDir(other, ""); err == nil || !strings.Contains(err.Error(), "lacks 11 of 12") {
		t.Errorf("partial: error %v", err)
	}
}

// TestFetchFromMirror serves the reference copies over HTTP and fetches
// them all: every file verifies, matches its checksum, and a second run
// finds them present.
func TestFetchFromMirror(t *testing.T) {
	src := dataDir(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer srv.Close()
	dst := t.TempDir()
	var log bytes.Buffer
	res, err := Fetch(context.Background(), dst, FetchOptions{Mirror: srv.URL, Timeout: 5 * time.Second, Log: &log})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(res) != 12 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if r.Present || !r.ChecksumMatch {
			t.Errorf("%s: %+v", r.Key, r)
		}
	}
	if _, err := ResolveDir(dst, ""); err != nil {
		t.Errorf("fetched directory does not resolve: %v", err)
	}
	if _, err := Load(dst, "mesquite"); err != nil {
		t.Error(err)
	}
	res, err = Fetch(context.Background(), dst, FetchOptions{Mirror: srv.URL, Keys: []string{"yacht"}})
	if err != nil || len(res) != 1 || !res[0].Present {
		t.Errorf("second fetch: %+v, %v", res, err)
	}
}

// TestFetchChecksumWarning: a mirror with CRLF line endings still
// verifies; the checksum mismatch is logged, not fatal.
func TestFetchChecksumWarning(t *testing.T) {
	src := dataDir(t)
	data, err := os.ReadFile(filepath.Join(src, "haberman", "haberman.data"))
	if err != nil {
		t.Fatal(err)
	}
	crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(crlf) }))
	defer srv.Close()
	dst := t.TempDir()
	var log bytes.Buffer
	res, err := Fetch(context.Background(), dst, FetchOptions{Mirror: srv.URL, Keys: []string{"haberman"}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].ChecksumMatch || !strings.Contains(log.String(), "warning: sha256") {
		t.Errorf("no checksum warning: %+v\n%s", res, log.String())
	}
	if _, err := Load(dst, "haberman"); err != nil {
		t.Error(err)
	}
}

// TestFetchRejectsWrongContent: a file with the wrong record count (an
// error page, a truncated copy) is not written.
func TestFetchRejectsWrongContent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("30,64,1,1\n30,62,3,1\n"))
	}))
	defer srv.Close()
	dst := t.TempDir()
	_, err := Fetch(context.Background(), dst, FetchOptions{Mirror: srv.URL, Keys: []string{"haberman"}})
	if err == nil || !strings.Contains(err.Error(), "2 records, want 306") {
		t.Errorf("error %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dst, "haberman", "haberman.data")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("bad file was written (stat: %v)", serr)
	}
	nf := httptest.NewServer(http.NotFoundHandler())
	defer nf.Close()
	if _, err := Fetch(context.Background(), dst, FetchOptions{Mirror: nf.URL, Keys: []string{"haberman"}}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: error %v", err)
	}
}

// failingTransport fails every request the way a machine without a
// network does, without touching the network.
type failingTransport struct{}

func (failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: lookup archive.ics.uci.edu: no such host")
}

// TestFetchOffline: offline, fetch stops at the first file with a clear
// message instead of trying every source of every file, and never hangs
// (a hang would run into go test's -timeout; no clock is read here).
func TestFetchOffline(t *testing.T) {
	var requests countingTransport
	cases := []struct {
		name string
		o    FetchOptions
	}{
		{"canonical URLs, no network", FetchOptions{Client: &http.Client{Transport: &requests}}},
		{"connection refused", FetchOptions{Mirror: "http://127.0.0.1:1", Timeout: 2 * time.Second}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := t.TempDir()
			_, err := Fetch(context.Background(), dst, c.o)
			if err == nil || !strings.Contains(err.Error(), "could not connect") || !strings.Contains(err.Error(), "concrete_slump") {
				t.Errorf("error %v", err)
			}
			if entries, _ := os.ReadDir(dst); len(entries) != 0 {
				t.Errorf("offline fetch left %d entries", len(entries))
			}
		})
	}
	if s, err := lookupSpec("concrete_slump"); err != nil || requests.n < 1 || requests.n > len(s.info.URLs) {
		t.Errorf("offline fetch made %d requests (spec error %v); want those of the first file only", requests.n, err)
	}
	// A server that accepts but never answers is cut off by the timeout:
	// the request's context ends before the server lets go.
	hang := make(chan struct{})
	cut := make(chan bool, 1)
	var entered atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered.Add(1)
		select {
		case <-hang:
			cut <- false
		case <-r.Context().Done():
			cut <- true
		}
	}))
	defer srv.Close()
	defer close(hang)
	_, err := Fetch(context.Background(), t.TempDir(), FetchOptions{Mirror: srv.URL, Keys: []string{"sonar"}, Timeout: 200 * time.Millisecond})
	if entered.Load() == 0 {
		t.Fatalf("hanging server: no request reached it (error %v)", err)
	}
	if !<-cut { // the client gave up: the request's context ends
		t.Errorf("hanging server: the request was not cut off")
	}
	if err == nil || !strings.Contains(err.Error(), "sonar") {
		t.Errorf("hanging server: error %v", err)
	}
}

// countingTransport fails every request as failingTransport does and
// counts them.
type countingTransport struct{ n int }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	return failingTransport{}.RoundTrip(r)
}

func TestFetchLocalMirror(t *testing.T) {
	src := dataDir(t)
	dst := t.TempDir()
	res, err := Fetch(context.Background(), dst, FetchOptions{Mirror: src, Keys: []string{"seeds", "auto_mpg"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.ChecksumMatch {
			t.Errorf("%+v", r)
		}
	}
	if _, err := Load(dst, "seeds"); err != nil {
		t.Error(err)
	}
}
