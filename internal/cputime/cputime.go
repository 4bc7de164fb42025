// Package cputime reads the CPU time this process has used, the one
// measure of compute cost the benchmark reports beside wall time.
package cputime
