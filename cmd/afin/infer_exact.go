package main

import "flag"

// bindExact is a placeholder until the method lands.
func bindExact(fs *flag.FlagSet) inferFunc { return nil }
