package main

import "flag"

// bindAFINSNIS is a placeholder until the method lands.
func bindAFINSNIS(fs *flag.FlagSet) inferFunc { return nil }
