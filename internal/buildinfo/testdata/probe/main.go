// Command probe prints buildinfo.Commit, for the package's link-time test.
package main

import (
	"fmt"

	"github.com/afin-bench/afin/internal/buildinfo"
)

func main() { fmt.Println(buildinfo.Commit()) }
