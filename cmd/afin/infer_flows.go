package main

import "flag"

// bindIAF is a placeholder until the method lands.
func bindIAF(fs *flag.FlagSet) inferFunc { return nil }

// bindMAF is a placeholder until the method lands.
func bindMAF(fs *flag.FlagSet) inferFunc { return nil }

// bindNSF is a placeholder until the method lands.
func bindNSF(fs *flag.FlagSet) inferFunc { return nil }
