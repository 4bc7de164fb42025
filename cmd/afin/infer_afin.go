package main

import "flag"

// bindAFIN is a placeholder until the method lands.
func bindAFIN(fs *flag.FlagSet) inferFunc { return nil }
