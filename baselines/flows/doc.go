// Package flows fits normalising-flow variational families (IAF, MAF and
// NSF) to a task's posterior by maximising the ELBO.
package flows
