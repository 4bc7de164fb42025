// Package deploy holds no code: it is the home of the Slurm array script
// and the Kubernetes Indexed Job that run `afin bench --shard I/N` on a
// cluster, and of the tests that keep them honest. k8s_test.go decodes the
// Job manifest strictly into the Kubernetes API types; slurm_test.go (only
// with AFIN_SLURM_TEST=1, see slurm-local.sh) submits the array script to a
// one-node Slurm cluster started on the machine and checks that the merged
// shards equal an unsharded run.
package deploy
