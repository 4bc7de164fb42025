// Package cpu is AFIN on the CPU in plain Go: the forward pass (adapters,
// encoder BoxMLPs, BoxTransformer merge blocks, pooling, and the Gaussian
// decoder's mean and diagonally dominant precision, or the flow decoder's
// sampling and log q) and the training loss with its gradient for either
// decoder (LossGrad, FlowLossGrad), over the architecture declared once
// in package arch and the matrix kernels of internal/gemm (AVX-512,
// AVX2 or NEON assembly, chosen from the CPU, or portable Go). GoMLX
// remains the GPU path. Tests: the forward
// equals the GoMLX graph on random weights to ~1e-6 relative and the
// authors' PyTorch fixture outputs to 4e-7 relative (Gaussian) and 3e-5
// absolute in log q (flow); every tensor's gradient equals GoMLX's
// autodiff to ~1e-5 relative (1e-4 for the flow) and agrees with finite
// differences.
//
// # Layout: one file per block of the paper's figure
//
// Each block's forward and backward sit side by side, named for the
// paper (backward = forward + "Backward"); afin's GoMLX graph uses the
// same block names.
//
//	paper block                 file                 forward / backward
//	BoxMLP (Sec. 3.1)           boxmlp.go            boxMLP, boxMLPs / boxMLPBackward
//	  its MLP branches          mlp.go               mlp.run / mlp.backward
//	Encoding (adapters, b_enc)  encoding.go          encoding, adapters / encodingBackward
//	Merge (BoxTransformer ×M)   merge.go             merge, boxTransformer, attention /
//	                                                 mergeBackward, boxTransformerBackward
//	Pooling (Ē = Σ_n E_n)       pooling.go           pooling / poolingBackward
//	Gaussian decoder            gaussian_decoder.go  gaussianDecoder / gaussianDecoderBackward
//	flow decoder                flow_decoder.go      flowContext, conditioner, flowInverse /
//	                                                 flowContextBackward, conditionerBackward
//
// net.go chains Encoding, Merge and Pooling for one task (embed, and
// embedBackward). There is one native forward: training calls embed with
// a *taskSave, in which each block saves what its backward needs;
// inference passes nil and saves nothing. The only place the two differ
// in arithmetic is attention, which at inference streams keys through an
// online softmax (memory linear in N) and in training takes all keys at
// once, as the backward needs the K×K probabilities. The flow decoder's
// training inverse (flowInverse: one point, at the ramp strength, saving
// each coupling's input and outputs) shares the conditioner with
// FlowLogQ but not its loop, which runs chunks of points at strength 1
// in float32 sums; merging the two would move FlowLogQ's numbers.
// train.go holds the
// loss-and-gradient drivers; workspace.go the reused buffers.
//
// # Why a native path (measured first)
//
// CPU profile of afin's GoMLX forward (pure Go backend, one core, one task
// at (d, N) = (8, 64), random weights; go test -cpuprofile on
// BenchmarkForwardGoMLX):
//
//	config  time/task  products  element-wise  other (GC, batch, Cholesky)
//	small   0.17 s     61 %      37 %          2 %
//	paper   5.3 s      80 %      19 %          1 %
//
// "Products" is GoMLX's DotGeneral: its scalar kernel (39 % and 66 % of
// all time) plus copying operands into and out of its blocked layout
// (16 % and 9 %). "Element-wise" is broadcasting adds (13 % / 7 %),
// SiLU's logistic and exp (11 % / 9 %), buffer fills, transposes and
// reductions. The products themselves run at ~4 GFLOP/s, against ~100
// for OpenBLAS sgemm on the same core, so no restructuring of the graph
// could come near PyTorch's time: the fix is a fast kernel and a forward
// pass that feeds it large products and does little else.
//
// The GoMLX training step (small config, 8 tasks at (8, 64), forward and
// backward): 70 % products (31 % kernel, 39 % layout copies and shape
// normalisation), 27 % element-wise, 3 % other.
//
// The native forward's own profile at (8, 64): paper config, ~75 % in
// the kernel, ~20 % element-wise (LayerNorm, symmetrisation, head
// reshuffles, SiLU passes), the rest building the input batch; small
// config (C=16: tiny products), ~45 % kernel, ~45 % element-wise, ~10 %
// batch building. The native training step (paper config, 8 tasks):
// ~70 % kernel (forward, recomputation, and the backward's products),
// ~8 % tiled transposes for weight gradients, ~20 % element-wise.
//
// # How it is fast
//
// Weights are packed once (NewNet) into the kernel's panel layout. The
// first layer of every BoxMLP branch is factorised (DESIGN.md, "Exact
// shortcut"): the pair branch computes P_ij·W0 on C inputs per (i, j)
// and adds per-i and per-j terms computed once per token, fused with the
// SiLU in one vector pass. Tokens go through each BoxMLP in chunks of
// about 384 pair rows, so activations stay in cache. Attention is
// computed per head with queries, keys and values laid out head-major,
// scores Q·Kᵀ and outputs A·V through the same packed kernel, over key
// blocks with an online softmax. The pair parts of Q, K and V are
// symmetric in (i, j), so inference keeps only their upper triangle
// (headWidth: d + d(d+1)/2 entries a channel instead of d + d², Q's
// off-diagonal entries doubled), the same scores and values with 25 %
// fewer attention products at d = 3 and nearly half at large d. Padded sites of a batch are skipped
// (they are masked out of attention and pooling, so this is exact).
// Every buffer lives in a workspace reused across calls: a forward pass
// of a shape seen before allocates only its results.
//
// # Benchmarks
//
// One core of a shared 2-core AMD EPYC (AVX-512), random weights, one
// task per forward; medians of 3 rounds of
//
//	OPENBLAS_NUM_THREADS=1 go test -tags openblas -run '^$' -cpu 1 \
//	    -bench '^(BenchmarkSgemmReference|BenchmarkForward|BenchmarkForwardGoMLX)$' ./afin
//
// GFLOP/s counts the products executed here (cpu.FLOPs); "PyTorch-count"
// rates use the authors' unfactorised count (UnfactorisedFLOPs: 20.6
// GFLOP for the paper config at (8, 64), as PyTorch's profiler reports).
// OpenBLAS sgemm in the same runs: 89 GFLOP/s (83–92) at 4160×192×192.
//
//	config (d, N)     this package          GoMLX (pure Go)   issue 15 target
//	small (4,256)     7.5 ms   42 GFLOP/s   200 ms   1.6      ≤ 32 ms
//	small (8,64)      5.3 ms   37           165 ms   1.2      ≤ 26 ms
//	small (16,1)      0.6 ms   33           21 ms    0.9      ≤ 7.4 ms
//	small (24,128)    81 ms    40
//	small (32,400)    512 ms   48
//	paper (4,256)     204 ms   86 (114*)    5.7 s    3.1      ≥ 50 % of sgemm
//	paper (8,64)      159 ms   87 (129*)    4.7 s    3.0      ≥ 50 % of sgemm
//	paper (16,1)      19 ms    79 (125*)    0.62 s   2.4
//	paper (24,128)    2.6 s    83 (135*)                      ≥ 50 % of sgemm
//	paper (32,400)    14.5 s   84 (135*)
//	(* PyTorch-count GFLOP/s; the authors' PyTorch code: 0.28 s at paper
//	(8,64) in issue 15's measurement on such a core)
//
// Training step (LossGrad, Gaussian decoder, (d, N) = (8, 64), GFLOP/s =
// 3× forward products per second; sgemm 83–97 in the same run):
//
//	small, 8 tasks 0.21 s (22 GFLOP/s); 128 tasks 3.5 s (22)
//	paper, 8 tasks 6.5 s (51);          128 tasks 106 s (50)
//	GoMLX: small 8 tasks 3.5 s, 128 tasks 60 s; paper 8 tasks 122 s (2.7)
//
// Per matrix kernel (internal/gemm; the same network forced onto each
// with gemm.Use), the paper-config forward of one task on one core of the
// shared AMD EPYC: GFLOP/s of each kernel's fastest of 10 iterations, the
// kernels interleaved within each iteration, and the ratio to the first
// kernel (BenchmarkForwardKernels).
// Regenerated, with internal/gemm's table, by go tool task bench:gemm:
//
//	config/(d,N)    avx512  avx2          generic
//	paper/d=8,N=64  89.0    75.9 (0.85×)  3.8 (0.04×)
//	paper/d=16,N=1  83.5    67.5 (0.81×)  3.9 (0.05×)
//
// (These rows were re-measured alone, with the same command, while the
// machine's load had dropped from ~20 to ~5: an earlier run's 0.42× for
// AVX2 at (8, 64) was load, not the kernel. By process CPU time,
// BenchmarkForward's cpu-GFLOP/s, AVX2 is 0.76–0.87× AVX-512 at (8, 64)
// and 0.63–0.85× at (16, 1) over 6 rounds. In pprof most of the gap is
// the products (h6 against k6x4 and k8x3), a smaller share SiLU: the AVX2
// SiLU runs at 0.66× the AVX-512 one in BenchmarkElementwise, since it
// builds 2^n in two halves where AVX-512 has VSCALEFPS. Replacing its
// divide by VRCPPS and a Newton step made SiLU, AddSiLU and SiLUGrad
// 10 % slower on this core (1.76 → 1.57, 1.56 → 1.42, 1.81 → 1.62
// Gvalues/s, before and after interleaved, 4 rounds), and 24-row blocks
// instead of 48 (A's block in L1 beside the panel) did not help the
// forward either, nor did unrolling h6's k loop by two (sgemm best of 3
// rounds: paper-in +9 %, paper-hidden −9 %, the other shapes −1 to
// −4 %); none was kept.)
//
// Whole training steps beside the authors' PyTorch trainer (PyTorch
// 1.13 from Debian over OpenBLAS 0.3.21, one thread both sides;
// tools/torchpeer): afin's BenchmarkTrainStepFull times runner.step —
// simulating the tasks, building the batch, packing the weights, forward,
// backward, clipping, AdamW and EMA — and trainstep.py the same work in
// their code (sample_task_batch, forward, backward, clip_grad_norm_,
// AdamW, scheduler, EMA), Gaussian decoder, one micro-batch at
// (d, N) = (8, 64). Each afin kernel beside the PyTorch a CPU with only
// that instruction set would run (OpenBLAS's Cooperlake kernels for
// avx512, OPENBLAS_CORETYPE=Haswell for avx2, Nehalem with
// ATEN_CPU_CAPABILITY=default for generic). Tasks/s by CPU time, best
// and median of 3 interleaved rounds (wall-clock ratios within 0.11 of
// these; go tool task bench:torchpeer SRC=<AFINs checkout>/src):
//
//	config  tasks  kernel   afin    PyTorch  ratio (best, median)
//	paper   8      avx512   1.41    0.96     1.47×  1.47×
//	paper   8      avx2     1.25    0.95     1.32×  1.35×
//	small   32     avx512   42.7    19.4     2.20×  2.32×
//	small   32     avx2     39.2    18.7     2.10×  2.15×
//	small   32     generic  3.91    10.9     0.36×  0.35×
//	paper   1      generic  0.072   0.36     0.20×  0.20×
//
// The portable kernel is the one below PyTorch: pure Go has no vector
// instructions, so its products run at ~4 GFLOP/s against OpenBLAS's
// SSE kernels. Its small-config step (pprof, 32 tasks): the portable
// panel kernel goPanel 65 % (runtime.asyncPreempt's share, ~30 %,
// set aside), SiLU and its gradient (exp32) 25 %, everything else under
// 10 %. The AVX-512 paper step: products 67 % (k6x4 57 %, k8x3 9 %),
// tiled transposes for weight gradients 8 %, copies 6 %, gradient
// accumulation 5 %, SiLU gradient 2.5 %; simulation, weight packing,
// AdamW and EMA together under 2 %.
//
// Training step per kernel (BenchmarkTrainStepKernels: LossGrad, 8 tasks
// at (8, 64), kernels interleaved, best of 5, GFLOP/s as above; measured
// in one run while the machine was loaded):
//
//	small   avx512 11.5   avx2 11.4 (0.99×)   generic 0.65 (0.06×)
//
//	go test -run '^$' -bench 'TrainStepKernels/small' -benchtime 5x -cpu 1 ./afin/cpu
//
// Where the backward spends its time on AVX2 (paper config, 8 tasks,
// go test -bench 'TrainStepCPU/paper/tasks=8,' -cpuprofile ./afin
// -args -gemm=avx2; pprof top): the AVX2 products 74 % (h6 alone 68 %),
// SiLU and its gradient 8 %, tiled transposes for weight gradients 5 %,
// gradient accumulation (addTo) 4 %, copies 3 %, LayerNorm 3 %.
//
// # Memory
//
// With K = N+1 tokens, T = K·(d+d²)·C floats (one full set of node and
// pair tokens), u = C/heads and D = (d+d(d+1)/2)·u (one head's compact
// width, headWidth), a forward pass holds
//
//	4·(2T + 3·heads·K·D + 4K·D) bytes    tokens, attention output, Q, K, V
//	                                     (head-major, compact), one head's
//	                                     packed K, V
//	+ 4·N·(28d + 45d² + 5) bytes         the input batch (arch.NewBatch
//	                                     allocates every family's descriptors)
//	+ O(1) in N                          chunk buffers: ≈ 2·384·H floats
//	                                     of activations, 256×1024 scores
//
// that is, for large d, about 4·(3.5 + 2/heads)·K·d²·C + 4·N·(28d+45d²)
// bytes, linear in N: 9.5 KB per site for the small config and 17.6 KB
// for the paper config at d = 4 (11 and 21 KB before the compact layout;
// the GoMLX graph needed 24.3 GB at N = 32,768).
// Where the memory goes at N = 4,096 (small config, PredictPeakBytes): at
// d = 32 the batch 0.77 GB, the tokens 0.28 GB and the merge buffers
// 0.87 GB (1.40 GB before the compact layout), 2.06 GB in all (2.58); at
// d = 64 3.05, 1.09 and 3.37 GB (5.52), 7.65 GB in all (9.80). The batch is per site but arch.NewBatch gives every site all
// five likelihood families' descriptors (45d² floats, of which a site
// reads one family's); the merge's Q and mixed values are per token and
// could be made a query chunk at a time, K and V cannot (every query
// reads every key).
// Each block's file states its own buffers (encodingWorkspaceFloats,
// mergeWorkspaceFloats, boxWorkspaceFloats, …) and FLOPs beside its code,
// and memory.go and flops.go only sum them, so a new block brings its
// cost with it. PredictPeakBytes evaluates the sum, adding the decoder's
// outputs, twice the weights and 128 MiB for the process itself, so that it bounds the peak
// RSS of a whole `afin infer` process (TestPeakRSSWithinEstimate in
// cmd/afin: 0.40 to 0.74 of the estimate from 88 MB to 1.3 GB of peak).
// Measured peak heap growth of the pass alone (BenchmarkPeakMemory,
// d = 4) against the prediction less the weights and processBytes; the
// 100,000-site rows were measured before the compact attention layout
// (1,106 MB against 1,104 predicted then) and are not re-run:
//
//	config  N        measured    predicted
//	small   1,000    11.0 MB     10.9 MB
//	small   10,000   96.9 MB     96.7 MB
//	small   100,000  (not re-run) 954 MB
//	paper   1,000    20.3 MB     19.9 MB
//	paper   10,000   179 MB      179 MB
//	paper   100,000  (not run: attention is 9·10¹³ FLOP there, about
//	                 40 min on one core) 1,765 MB
//
// Time is another matter: the paper's Merge attends across factors, every
// site's token against every other's, so attention is quadratic in N by
// design: 4·K²·(d+d(d+1)/2)·C FLOP per block (4·K²·(d+d²)·C as written),
// 91 % of the small config's products at (d, N) = (3, 10,000) and 99 % at
// 100,000. Everything else is linear in N (TestFLOPsLinearBesideAttention),
// so N = 100,000 costs about 92× N = 10,000 in FLOPs (6.3·10¹⁰ and
// 5.8·10¹² FLOP) and 75–90× in CPU time, even though memory stays linear.
// `afin infer --method afin --draws 0` on the shipped checkpoint, d = 3,
// bernoulli_logit tasks from `afin simulate`, process CPU seconds, the
// binaries before (a885678) and after the compact layout and the row
// maximum's loop alternated in one run on a shared 2-core AVX2 EPYC:
// N = 10,000 2.65–2.94 → 1.66–2.34; N = 100,000 227–231 → 146–151.
//
// Training (LossGrad, FlowLossGrad) keeps, per worker and task, the
// inputs of every residual layer and each merge block's Q, K, V, mixed
// values and attention probabilities: about (E + 6M + 14)·T floats plus
// M·heads·K² (E encoder layers, M merge blocks), and one gradient array
// per tensor per worker. Tasks of a batch are processed one at a time
// per worker.
//
// # API
//
//	fast, err := cpu.NewNetFromData(cfg, weights) // arrays in Tensors() order,
//	                                    // e.g. an afin.Model's; or NewNet(net)
//	b, err := arch.NewBatch(ctx, tasks, 0, nil)
//	mean, prec, err := fast.Gaussian(ctx, b)          // B×d, B×d×d
//	z, logq, err := fast.FlowSample(ctx, b, eps, S)   // flow checkpoints
//	logq, err := fast.FlowLogQ(ctx, b, z, S)
//	bytes := cpu.PredictPeakBytes(cfg, d, n)          // refuse before work
//	secs, _ := cpu.PredictSeconds(cfg, d, n, gemm.Kernel()) // warn before work
//	ctx = cpu.WithProgress(ctx, func(done, total int64) {}) // FLOPs of a pass
//	err = cpu.CheckMemory(cfg, d, n, cpu.AvailableBytes())
//	loss, grads, err := fast.LossGradWorkers(ctx, b, 2) // b.Z targets; grads
//	                                                     // in Tensors() order
//	loss, grads, err = fast.FlowLossGrad(ctx, b, strength, 2)
//
// A Net is safe for concurrent use; each call runs on its goroutine (one
// core; LossGradWorkers spreads tasks over goroutines) and checks ctx
// between layers, attention heads and token chunks. Weights are packed at
// NewNet: after an optimiser step, build a new Net from the new weights
// (packing is a copy of the weights, milliseconds).
// FLOPs and UnfactorisedFLOPs count the products for benchmarks.
package cpu
