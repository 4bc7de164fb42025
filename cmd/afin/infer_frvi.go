package main

import "flag"

// bindFRVI is a placeholder until the method lands.
func bindFRVI(fs *flag.FlagSet) inferFunc { return nil }
