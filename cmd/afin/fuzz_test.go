package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/afin-bench/afin/afin"
	"github.com/afin-bench/afin/afin/cpu"
	"github.com/afin-bench/afin/factor"
)

// FuzzInferTask runs task-file bytes through what infer does before any
// method: parse and validate, the d bound, the memory check, and the
// network's input batch. It never panics; a refusal is bad input (exit
// 2), and an accepted task gives a batch of its shape.
func FuzzInferTask(f *testing.F) {
	f.Add([]byte(`{"d":2,"prior":{"type":"diag_gaussian","loc":[0,0],"scale":[1,1]},"factors":[{"type":"gaussian","y":[1,0],"sigma":1}]}`))
	f.Add([]byte("\xef\xbb\xbf  \n"))
	rng := rand.New(rand.NewPCG(27, 8))
	for _, prior := range factor.PriorFamilies {
		for _, lik := range factor.LikelihoodFamilies {
			task, err := factor.Simulate(rng, factor.SimOptions{D: 3, N: 2, Prior: prior, Likelihoods: []string{lik}})
			if err != nil {
				f.Fatal(err)
			}
			data, err := factor.MarshalTask(task)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	cfg := afin.SmallConfig("gaussian")
	// The memory the target lets a task's pass predict: that of the
	// largest task in the shipped checkpoint's training support (about
	// 135 MB with the process's own share). Larger tasks are refused, as
	// infer refuses them on a machine with this much free, and their
	// batch is never built.
	fuzzMemory := cpu.PredictPeakBytes(cfg, 16, 256)
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := parseTaskData("fuzz.json", data)
		if err == nil {
			err = checkOutputDim(task.D)
		}
		if err == nil {
			err = cpu.CheckMemory(cfg, task.D, task.N(), fuzzMemory)
			if err != nil {
				err = badInput(err)
			}
		}
		if err != nil {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("refusal is not bad input: %v", err)
			}
			return
		}
		b, err := afin.NewBatch(context.Background(), []*factor.Task{task}, 0, nil)
		if err != nil {
			t.Fatalf("valid task (d=%d, N=%d) gives no batch: %v", task.D, task.N(), err)
		}
		if b.B != 1 || b.D != task.D || b.NPad < task.N() {
			t.Fatalf("batch B=%d D=%d NPad=%d for d=%d, N=%d", b.B, b.D, b.NPad, task.D, task.N())
		}
	})
}
