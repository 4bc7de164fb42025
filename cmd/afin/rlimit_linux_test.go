package main

import "syscall"

// limitAddressSpace caps the process's virtual memory at n bytes, so an
// allocation beyond it fails instead of taking the machine's memory.
func limitAddressSpace(n uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
}
