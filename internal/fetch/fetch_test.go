package fetch

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file":
			w.Write([]byte("0123456789"))
		case "/hang":
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := NewClient(Timeouts{Connect: 2 * time.Second, Answer: 200 * time.Millisecond})
	for _, tc := range []struct {
		name, url   string
		limit       int64
		want        string
		wantReached bool
		wantErr     string // "" for success
	}{
		{name: "whole file", url: srv.URL + "/file", want: "0123456789", wantReached: true},
		{name: "at the limit", url: srv.URL + "/file", limit: 10, want: "0123456789", wantReached: true},
		{name: "over the limit", url: srv.URL + "/file", limit: 9, wantReached: true, wantErr: "larger than 9 bytes"},
		{name: "not found", url: srv.URL + "/none", wantReached: true, wantErr: "HTTP 404"},
		{name: "no answer", url: srv.URL + "/hang", wantErr: "timeout"},
		{name: "refused", url: "http://127.0.0.1:1/file", wantErr: "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			reached, err := Get(context.Background(), c, tc.url, &buf, tc.limit)
			if reached != tc.wantReached {
				t.Errorf("reached = %v, want %v", reached, tc.wantReached)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			case tc.wantErr == "" && buf.String() != tc.want:
				t.Fatalf("body %q, want %q", buf.String(), tc.want)
			}
			if err != nil && strings.Contains(err.Error(), tc.url) {
				t.Errorf("error %q repeats the URL", err)
			}
		})
	}
}

// TestGetCancelled: the context ends a download with no timeout of its own.
func TestGetCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Get(ctx, NewClient(Timeouts{}), srv.URL, &bytes.Buffer{}, 0)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}
