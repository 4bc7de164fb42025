// Package fetch is afin's one way to download a file over HTTP: a client
// that gives up on a host that does not connect or answer, and a GET that
// tells an offline machine (no server reached) from a server's refusal.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Timeouts bound a download. Zero leaves a bound to the context.
type Timeouts struct {
	// Connect bounds the TCP connection and the TLS handshake.
	Connect time.Duration
	// Answer bounds the wait for the response header once the request
	// is sent.
	Answer time.Duration
	// Total bounds the whole request, body included. Large files over a
	// slow link leave it zero: their transfer time is the link's.
	Total time.Duration
}

// NewClient is an HTTP client with the timeouts t, going through the
// proxy the environment names (HTTPS_PROXY and the like).
func NewClient(t Timeouts) *http.Client {
	return &http.Client{
		Timeout: t.Total,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: t.Connect}).DialContext,
			TLSHandshakeTimeout:   t.Connect,
			ResponseHeaderTimeout: t.Answer,
		},
	}
}

// Get downloads rawURL into w, refusing a body over limit bytes (0: no
// limit). reached reports that a server answered, so a caller can tell
// being offline from a missing file. Errors do not repeat the URL; the
// caller names it.
func Get(ctx context.Context, c *http.Client, rawURL string, w io.Writer, limit int64) (reached bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("User-Agent", "afin")
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return true, fmt.Errorf("HTTP %s", resp.Status)
	}
	body := io.Reader(resp.Body)
	if limit > 0 {
		body = io.LimitReader(resp.Body, limit+1)
	}
	n, err := io.Copy(w, body)
	if err != nil {
		return true, fmt.Errorf("reading body: %w", err)
	}
	if limit > 0 && n > limit {
		return true, fmt.Errorf("larger than %d bytes", limit)
	}
	return true, nil
}
