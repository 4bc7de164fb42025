package datasets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/afin-bench/afin/internal/atomicfile"
	"github.com/afin-bench/afin/internal/fetch"
)

// FetchOptions controls Fetch.
type FetchOptions struct {
	// Keys limits the download to these tasks; nil means all twelve.
	Keys []string
	// Mirror, when set, replaces the canonical URLs: files are read from
	// <Mirror>/<key>/<file>. An http(s) URL is downloaded; anything else
	// is taken as a local directory (for example a checkout's datasets/uci).
	Mirror string
	// Timeout bounds each request, connection and body included; zero
	// means DefaultFetchTimeout.
	Timeout time.Duration
	// Force re-downloads files that are already present and valid.
	Force bool
	// Client overrides the HTTP client (tests); nil builds one from Timeout.
	Client *http.Client
	// Log receives one line per file and every warning; nil discards.
	Log io.Writer
}

// DefaultFetchTimeout bounds one download. The files are at most 90 kB,
// so a slow link still finishes well inside it, and an unreachable host
// fails at the shorter dial timeout.
const DefaultFetchTimeout = 30 * time.Second

const (
	dialTimeout  = 5 * time.Second
	maxFileBytes = 4 << 20
)

// FetchResult reports one task's file.
type FetchResult struct {
	Key    string `json:"key"`
	Path   string `json:"path"`
	Source string `json:"source"` // URL or local path it came from; "" when already present
	// Present is set when a valid file was already there and Force was off.
	Present bool `json:"present"`
	// ChecksumMatch tells whether the bytes equal the reference copy of
	// SOURCES.md. Mirrors differ in line endings, so a mismatch is only a
	// warning: the row and column counts are what is verified.
	ChecksumMatch bool `json:"checksum_match"`
}

// Fetch downloads the raw files into dir/<key>/<file>, verifying each
// file's record and field counts (and its complete-row count, Table 6's
// N) before writing it atomically. Offline, it stops at the first file
// whose every source failed at the network level and says so, rather than
// trying the rest; with some files fetched it goes on and reports every
// failure at the end.
func Fetch(ctx context.Context, dir string, o FetchOptions) ([]FetchResult, error) {
	keys := o.Keys
	if keys == nil {
		keys = Keys()
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	client := o.Client
	if client == nil {
		client = fetch.NewClient(fetch.Timeouts{Connect: min(dialTimeout, timeout), Answer: timeout, Total: timeout})
	}
	var results []FetchResult
	var failures []string
	fetched := 0
	for _, key := range keys {
		s, err := lookupSpec(key)
		if err != nil {
			return results, err
		}
		path := filepath.Join(dir, s.info.Key, s.info.File)
		if !o.Force {
			if data, err := os.ReadFile(path); err == nil {
				if _, verr := verify(s, data); verr == nil {
					results = append(results, FetchResult{Key: key, Path: path, Present: true, ChecksumMatch: checksum(data) == s.info.SHA256})
					fmt.Fprintf(logw, "%-15s present  %s\n", key, path)
					continue
				}
			}
		}
		data, src, netOnly, err := download(ctx, client, s, o.Mirror)
		if err != nil {
			if ctx.Err() != nil {
				return results, fmt.Errorf("fetch interrupted at %s: %w", key, ctx.Err())
			}
			if netOnly && fetched == 0 {
				return results, fmt.Errorf("%s: %w\ncould not connect to the data sources (offline, or the host is down or blocked), so nothing was downloaded; "+
					"copy the raw files into %s as <key>/<file>, fetch from a local copy with --mirror DIR, "+
					"or unset %s to use the copy built into afin (the repository's datasets/uci)", key, err, dir, EnvDataDir)
			}
			failures = append(failures, fmt.Sprintf("%s: %v", key, err))
			fmt.Fprintf(logw, "%-15s FAILED   %v\n", key, err)
			continue
		}
		match := checksum(data) == s.info.SHA256
		if !match {
			fmt.Fprintf(logw, "%-15s warning: sha256 %s differs from the reference copy %s (mirrors differ in line endings; row and column counts verified)\n",
				key, checksum(data), s.info.SHA256)
		}
		if err := writeAtomic(path, data); err != nil {
			return results, fmt.Errorf("%s: %w", key, err)
		}
		fetched++
		results = append(results, FetchResult{Key: key, Path: path, Source: src, ChecksumMatch: match})
		fmt.Fprintf(logw, "%-15s fetched  %s (%d bytes from %s)\n", key, path, len(data), src)
	}
	if len(failures) > 0 {
		return results, fmt.Errorf("%d of %d files could not be fetched:\n  %s", len(failures), len(keys), strings.Join(failures, "\n  "))
	}
	return results, nil
}

// download tries the spec's sources in order and returns the first file
// that verifies. netOnly reports that every source failed before any
// server answered (no route, DNS, refused, timeout): the mark of being
// offline.
func download(ctx context.Context, client *http.Client, s *spec, mirror string) (data []byte, src string, netOnly bool, err error) {
	sources := s.info.URLs
	if mirror != "" {
		sources = []string{strings.TrimSuffix(mirror, "/") + "/" + s.info.Key + "/" + s.info.File}
	}
	netOnly = true
	var errs []error
	for _, u := range sources {
		var body []byte
		var gerr error
		if isHTTP(u) {
			var reached bool
			body, reached, gerr = get(ctx, client, u)
			if reached {
				netOnly = false
			}
		} else {
			netOnly = false
			body, gerr = os.ReadFile(u)
		}
		if gerr == nil {
			if _, verr := verify(s, body); verr != nil {
				gerr = fmt.Errorf("content does not verify: %w", verr)
			}
		}
		if gerr == nil {
			return body, u, false, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", u, gerr))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", netOnly, errors.Join(errs...)
}

func isHTTP(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// get downloads one URL; reached is true once a server answered.
func get(ctx context.Context, client *http.Client, rawURL string) (body []byte, reached bool, err error) {
	var buf bytes.Buffer
	reached, err = fetch.Get(ctx, client, rawURL, &buf, maxFileBytes)
	if err != nil {
		return nil, reached, err
	}
	return buf.Bytes(), true, nil
}

// verify parses a candidate file and checks its record and field counts
// and its complete-record count against the reference copy.
func verify(s *spec, data []byte) (*Table, error) {
	t, err := parseTable(s, data)
	if err != nil {
		return nil, err
	}
	if t.RawRows != s.info.RawRows {
		return nil, fmt.Errorf("%d records, want %d", t.RawRows, s.info.RawRows)
	}
	if len(t.Y) != s.info.N {
		return nil, fmt.Errorf("%d complete records, want %d", len(t.Y), s.info.N)
	}
	return t, nil
}

func checksum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// writeAtomic writes atomically, so an interrupted fetch never leaves a
// truncated file that looks present.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data)
}
