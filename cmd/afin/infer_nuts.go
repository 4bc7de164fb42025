package main

import "flag"

// bindNUTS is a placeholder until the method lands.
func bindNUTS(fs *flag.FlagSet) inferFunc { return nil }
