package afin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/afin-bench/afin/factor"
	"github.com/afin-bench/afin/internal/fetch"
)

// PaperWeightsURL is where the authors publish their trained run
// directories (Hugging Face repository joohwanko/AFINs); each family's
// run is a folder holding config.json and final.pt.
const PaperWeightsURL = "https://huggingface.co/joohwanko/AFINs/resolve/main"

// PaperRuns names the folder of each decoder family's published run.
var PaperRuns = map[string]string{
	"gaussian": "v1-5m-gaussian-d1-16-n1-256",
	"flow":     "v1-5m-flow-d1-16-n1-256",
}

// FetchOptions configure FetchPaperWeights.
type FetchOptions struct {
	BaseURL  string       // default PaperWeightsURL
	OutDir   string       // checkpoints are written to OutDir/paper-<family>
	Families []string     // default gaussian and flow
	Client   *http.Client // default: connect and answer within 15 s
}

// defaultFetchClient gives up on a host that does not connect or answer
// within 15 s; the transfer itself is bounded only by the context, since
// its time depends on the link.
func defaultFetchClient() *http.Client {
	return fetch.NewClient(fetch.Timeouts{Connect: 15 * time.Second, Answer: 15 * time.Second})
}

// FetchPaperWeights downloads the authors' published runs, imports each
// as a portable checkpoint at OutDir/paper-<family> and verifies it (every
// tensor mapped with its shape by the import, and a forward pass on a
// small task gives finite output). It returns the checkpoint directories.
func FetchPaperWeights(ctx context.Context, o FetchOptions) ([]string, error) {
	if o.BaseURL == "" {
		o.BaseURL = PaperWeightsURL
	}
	if o.Client == nil {
		o.Client = defaultFetchClient()
	}
	if len(o.Families) == 0 {
		o.Families = []string{"gaussian", "flow"}
	}
	var dirs []string
	for _, fam := range o.Families {
		folder, ok := PaperRuns[fam]
		if !ok {
			return dirs, fmt.Errorf("afin: unknown family %q (gaussian or flow)", fam)
		}
		out := filepath.Join(o.OutDir, "paper-"+fam)
		if err := fetchRun(ctx, o, folder, out); err != nil {
			return dirs, err
		}
		if err := verifyCheckpoint(out); err != nil {
			os.RemoveAll(out)
			return dirs, fmt.Errorf("afin: %s imported but failed verification: %w", out, err)
		}
		dirs = append(dirs, out)
	}
	return dirs, nil
}

// fetchRun downloads one run folder into a temporary directory and
// imports it to out.
func fetchRun(ctx context.Context, o FetchOptions, folder, out string) error {
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("afin: %s already exists (remove it to fetch again)", out)
	}
	tmp, err := os.MkdirTemp("", "afin-fetch-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, name := range []string{"config.json", "final.pt"} {
		url := strings.TrimRight(o.BaseURL, "/") + "/" + folder + "/" + name
		if err := download(ctx, o.Client, url, filepath.Join(tmp, name)); err != nil {
			return fmt.Errorf("afin: %w; without network, download config.json and final.pt of %s/%s by hand into a directory RUN and run `afin checkpoint import RUN --out %s`", err, PaperWeightsURL, folder, out)
		}
	}
	_, err = ImportRun(tmp, out)
	return err
}

func download(ctx context.Context, c *http.Client, url, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := fetch.Get(ctx, c, url, f, 0); err != nil {
		f.Close()
		return fmt.Errorf("cannot fetch %s: %w", url, err)
	}
	return f.Close()
}

// verifyCheckpoint loads dir and runs it natively on a small task: the
// output must be finite.
func verifyCheckpoint(dir string) error {
	m, err := Load(dir, EngineChoice{})
	if err != nil {
		return err
	}
	task := &factor.Task{D: 2, Prior: &factor.DiagGaussian{Loc: []float64{0, 0}, Scale: []float64{1, 1}}}
	for _, x := range [][]float64{{1, 0.5}, {-0.3, 1}, {0.2, -0.7}} {
		task.Factors = append(task.Factors, &factor.LinGaussian{X: x, Y: x[0] - x[1], Sigma: 0.5})
	}
	var vals []float64
	if m.Cfg.Decoder == "flow" {
		vals, err = m.LogQFlow(task, []float64{0.1, -0.2})
	} else {
		var gs []*Gaussian
		if gs, err = m.Forward([]*factor.Task{task}); err == nil {
			vals = append(append(vals, gs[0].Mean...), gs[0].Precision...)
		}
	}
	if err != nil {
		return err
	}
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("forward pass on a test task is not finite")
		}
	}
	return nil
}
