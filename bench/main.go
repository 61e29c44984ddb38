// Command bench runs the benchmarks of bench/ and rewrites bench/RESULTS.md
// (see bench/README.md):
//
//	go run ./bench -out bench/RESULTS.md
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/forum-mcp/forum/bench/harness"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := harness.Main(ctx, os.Args[1:], "go run ./bench "+strings.Join(os.Args[1:], " ")); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
