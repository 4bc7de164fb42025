package main

import "flag"

// bindFRVISNIS is a placeholder until the method lands.
func bindFRVISNIS(fs *flag.FlagSet) inferFunc { return nil }
