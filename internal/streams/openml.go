package streams

// OpenMLSplit: which rows of an OpenML dataset form the stratified test
// split (package datasets). The seed is the bench seed, so every method of
// a (dataset, seed) sees the same split.
const OpenMLSplit Stream = 0x0e11
